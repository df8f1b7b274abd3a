-- jitflow for LuaJIT 2.1: describes every trace LuaJIT compiles to jitflow's zone file, so
-- that a hardware control-flow trace (or `jitflow record`) of the program can be decoded
-- through LuaJIT's machine code and reported per trace and exit.
--
--   luajit -l jitflow prog.lua        (jitflow record does this by itself, with LUA_INIT)
--
-- It listens to LuaJIT's "trace" VM event and, through the FFI, calls jitflow's emitter
-- library. No change to LuaJIT or to the program: a "trace" handler the program, -jv,
-- -jdump or a profiler attaches, before or after this module, is still called, after
-- this module's (jitflow/vmevents.lua). Per trace:
--   * a region with its machine code (jit.util.tracemc): kind trace (root) or bridge
--     (side trace, with its parent trace and exit), the prototype and line it starts at,
--     its link type (a TRACE_LINK event: loop, root = to another trace, return,
--     interpreter, tail-recursion, ...); the loop label as LOOP_HEADER;
--   * the exit stubs its exits use, as exit-stub regions: on x64 the stub groups shared by
--     all traces; on arm64 the trace's own stubs after its code (jitflow/arm64.lua);
--   * a guard per exit: every branch of its code that goes to that exit's stub, found by
--     disassembling the code (x64: capstone; arm64: fixed-width words, jitflow/arm64.lua);
--     an inverted loop branch is a guard that exits when it falls through;
--   * after each new trace, every live trace's code is read again and any byte that
--     changed (LuaJIT patching a parent's exit branches to a new side trace, and on arm64
--     the exit's stub too) is written as a PATCH: nothing about patching is assumed;
--   * on "flush" every region is freed (the machine code memory is reused) and a
--     TRACE_FLUSH event written; "start" and "abort" are TRACE_START / TRACE_ABORT events;
--   * first of all, a RUNTIME event (LuaJIT), so that reports use LuaJIT's words.
-- Trace numbers start again from 1 after a flush: jitflow's trace id is then
-- number + 2^32 * flushes, and the generation is the flush count.
--
-- Not written: pc maps (jit.util gives no machine-code offset for an IR instruction or a
-- snapshot, so there is no code -> bytecode mapping without changing LuaJIT) and the
-- guards' resume pcs (0). The handler, and the module's start, are bracketed by
-- INSTRUMENTATION_BEGIN / _END events: what they run is instrumentation in jitflow's
-- reports. LuaJIT's interpreter, its trace exit code and its tracing phase are described
-- by jitflow/vmphases.lua.
local ffi = require("ffi")
local jutil = require("jit.util")
local emitter = require("jitflow.emitter")
local x64 = require("jitflow.x64")
-- the machine code reader: x64.lua, or arm64.lua (per-trace exit stubs, see there)
local arm64 = jit.arch == "arm64" and require("jitflow.arm64")
local mcode = arm64 or x64
local vmevents = require("jitflow.vmevents")
local vmphases = require("jitflow.vmphases")

local M = { stats = { traces = 0, side = 0, aborts = 0, flushes = 0, patches = 0,
		      unexpected_patches = 0, unguarded_exits = 0, guards = 0 } }

local lib, em
local epoch = 0            -- flushes so far
local live = {}            -- trace number -> what was emitted for it
local started = {}         -- trace number -> its "start" event
local stub_groups = {}     -- exit stub group base address -> size (live)
local stub_exit = {}       -- exit stub address -> exit number
local stub_owner = {}      -- arm64: exit stub address -> the trace number it belongs to
local code_objects, next_code_object = {}, 1
local STUBS_PER_GROUP = 32 -- LuaJIT's EXITSTUBS_PER_GROUP on x86/x64

local function warn(fmt, ...)
	io.stderr:write("jitflow.lua: ", string.format(fmt, ...), "\n")
end

local function trace_id(traceno)
	return traceno + epoch * 4294967296
end

-- The shared exit stub of an exit number (x86/x64 take the exit number alone).
local function stub_of(exitno)
	return jutil.traceexitstub(exitno)
end

-- A stub group: 32 x (push imm8; jmp short) then push, [mov], jmp to lj_vm_exit_handler.
local function describe_stub_group(group)
	local base = stub_of(group * STUBS_PER_GROUP)
	if not base or stub_groups[base] then return end
	local bytes = ffi.string(ffi.cast("const char *", base), 4 * STUBS_PER_GROUP + 32)
	local list, err = x64.instructions(bytes, base, true)
	if not list then
		warn("exit stub group %d at 0x%x: %s", group, base, err or "?")
		return
	end
	local size
	for k = 1, list.n do
		local b = list.branch[k]
		if list.off[k] >= 4 * STUBS_PER_GROUP and b and b.kind ~= "jcc" then
			size = list.off[k] + list.len[k]
			if b.target then vmphases.exit_stub_target(b.target) end
			break
		end
	end
	if not size then
		warn("exit stub group %d at 0x%x: no jump to the exit handler", group, base)
		return
	end
	for e = 0, STUBS_PER_GROUP - 1 do
		stub_exit[base + 4 * e] = group * STUBS_PER_GROUP + e
	end
	stub_groups[base] = size
	local r = ffi.new("struct jf_region")
	local name = string.format("exit stubs %d-%d", group * STUBS_PER_GROUP,
				   group * STUBS_PER_GROUP + STUBS_PER_GROUP - 1)
	r.name, r.addr, r.code, r.size = name, base, bytes, size
	r.kind, r.generation = emitter.REGION_EXIT_STUB, epoch
	lib.jf_emit_region_load(em, r)
end

-- arm64: the trace's own exit stubs, a region of their own after its code, freed with it.
local function describe_trace_stubs(traceno)
	local stubs, err = arm64.stubs(traceno)
	if not stubs then
		warn("trace %d: %s; its exits are not described", traceno, err)
		return nil
	end
	stubs.list = arm64.instructions(stubs.code, stubs.addr)
	vmphases.exit_stub_target(stubs.handler)
	for addr, e in pairs(stubs.exits) do
		stub_exit[addr], stub_owner[addr] = e, traceno
	end
	local r = ffi.new("struct jf_region")
	r.name = string.format("exit stubs of trace %d", traceno)
	r.addr, r.code, r.size = stubs.addr, stubs.code, #stubs.code
	r.kind, r.generation, r.trace_id = emitter.REGION_EXIT_STUB, epoch, trace_id(traceno)
	lib.jf_emit_region_load(em, r)
	return stubs
end

local function describe_stubs(traceno, info, parent, pexit)
	if arm64 then return describe_trace_stubs(traceno) end
	for e = 0, info.nexit - 1 do
		describe_stub_group(math.floor(e / STUBS_PER_GROUP))
	end
	if parent then describe_stub_group(math.floor(pexit / STUBS_PER_GROUP)) end
end

local function code_object(func)
	local fi = jutil.funcinfo(func)
	local file, line = fi.source or "?", fi.linedefined or 0
	local key = file .. ":" .. line
	if not code_objects[key] then
		local id = next_code_object
		next_code_object = id + 1
		code_objects[key] = id
		local name = fi.addr and "(C function)" or (line == 0 and "main chunk" or
			     string.format("function at %s:%d", file:gsub("^@", ""), line))
		lib.jf_emit_code_object(em, id, name, (file:gsub("^@", "")), line)
	end
	return code_objects[key]
end

local function free_trace(traceno)
	local t = live[traceno]
	lib.jf_emit_region_free(em, t.addr, #t.code)
	if t.stubs then
		lib.jf_emit_region_free(em, t.stubs.addr, #t.stubs.code)
		for addr in pairs(t.stubs.exits) do stub_exit[addr], stub_owner[addr] = nil, nil end
	end
	live[traceno] = nil
end

-- The 1-based byte range [i, j] widened to the instructions (list) that hold it.
local function whole_instructions(list, i, j)
	local from, to = i, j
	for k = 1, list.n do
		local off, len = list.off[k], list.len[k]
		if off < i and off + len >= i then from = off + 1 end
		if off < j and off + len >= j then to = off + len end
	end
	return from, to
end

-- Emit a PATCH for each run of bytes that differ between old and new (a piece of code at
-- addr, whose instructions are list). expected(i, j) says whether the 1-based byte range
-- [i, j] is where LuaJIT re-points an exit to the new side trace.
local function patch_changes(addr, old, new, list, expected, reason, what)
	local n, i = #new, 1
	while i <= n do
		if new:byte(i) ~= old:byte(i) then
			local j = i
			while j < n and new:byte(j + 1) ~= old:byte(j + 1) do j = j + 1 end
			local why = reason
			if not expected(i, j) then
				M.stats.unexpected_patches = M.stats.unexpected_patches + 1
				why = "unexpected change in " .. what
				warn("%s at +%d (%d bytes)", why, i - 1, j - i + 1)
			end
			-- whole instructions: a decoder cannot decode one that straddles
			-- the old bytes and the patch
			i, j = whole_instructions(list, i, j)
			lib.jf_emit_patch(em, addr + i - 1, new:sub(i, j), j - i + 1, why)
			M.stats.patches = M.stats.patches + 1
			i = j + 1
		else
			i = i + 1
		end
	end
end

-- Emit what changed in every live trace's code since it was last read: LuaJIT patches a
-- parent's branches to an exit when a side trace for that exit is compiled (on arm64 also
-- the exit's stub, read again here too).
local function emit_patches(new_traceno, side_of, side_exit)
	for traceno, t in pairs(live) do
		local code = traceno ~= new_traceno and jutil.tracemc(traceno)
		local reason = string.format("exit %d of trace %d -> side trace %d", side_exit or -1,
					     traceno, new_traceno)
		if code and code ~= t.code and #code == #t.code then
			-- expected: within the displacement of a branch of this trace to side_exit
			patch_changes(t.addr, t.code, code, t.list, function(i, j)
				for _, b in ipairs(t.branches) do
					if b.rel and traceno == side_of and b.exit == side_exit and
					   i - 1 >= b.rel and j <= b.rel + 4 then return true end
				end
				return false
			end, reason, "trace " .. traceno)
			t.code = code
		elseif code and #code ~= #t.code then
			warn("trace %d changed size (%d -> %d bytes)", traceno, #t.code, #code)
		end
		local s = t.stubs
		local stubs = s and traceno ~= new_traceno and
			      ffi.string(ffi.cast("const char *", s.addr), #s.code)
		if stubs and stubs ~= s.code then
			-- expected: the stub of side_exit, now a jump to the side trace
			patch_changes(s.addr, s.code, stubs, s.list, function(i, j)
				local at = s.addr + i - 1
				return traceno == side_of and s.exits[at] == side_exit and j - i < 4
			end, reason, "the exit stubs of trace " .. traceno)
			s.code = stubs
		end
	end
end

local function on_stop(traceno, func)
	local info = jutil.traceinfo(traceno)
	local code, addr, loop = jutil.tracemc(traceno)
	if not info or not code then return end
	local st = started[traceno] or {}
	started[traceno] = nil
	if live[traceno] then free_trace(traceno) end -- a number reused (trace collected)
	local parent, pexit = st.parent, st.exit
	local stubs = describe_stubs(traceno, info, parent, pexit)

	local list, err = mcode.instructions(code, addr)
	if not list then
		warn("trace %d: %s; its guards are not described", traceno, err or "?")
		list = { n = 0, off = {}, len = {}, branch = {} }
	end
	local vmstate = mcode.vmstate_store(code, list, traceno)
	local branches, unguarded = mcode.exit_branches(list, addr, stub_exit)
	M.stats.unguarded_exits = M.stats.unguarded_exits + #unguarded
	for _, u in ipairs(unguarded) do
		warn("trace %d: jump to exit %d at 0x%x has no branch to count", traceno, u.exit, u.at)
	end

	local fi = jutil.funcinfo(st.func or func, st.pc)
	local where = string.format("%s:%d", (fi.source or "?"):gsub("^@", ""),
				    fi.currentline or fi.linedefined or 0)
	local id = trace_id(traceno)
	local r = ffi.new("struct jf_region")
	local name = parent and string.format("trace %d (side %d/%d) %s -> %s", traceno, parent,
					      pexit, where, info.linktype)
			 or string.format("trace %d %s -> %s", traceno, where, info.linktype)
	r.name, r.addr, r.code, r.size = name, addr, code, #code
	r.kind = parent and emitter.REGION_BRIDGE or emitter.REGION_TRACE
	r.generation, r.trace_id = epoch, id
	r.parent_trace = parent and trace_id(parent) or 0
	r.parent_guard = pexit or 0
	r.code_object = code_object(st.func or func)
	lib.jf_emit_region_load(em, r)
	local link = emitter.LINK[info.linktype] or 0
	local target = link == emitter.LINK.root and info.link and info.link > 0 and
		       trace_id(info.link) or 0
	lib.jf_emit_event(em, emitter.EVENT_TRACE_LINK, link + target * 256)
	if info.linktype == "loop" then
		-- the loop label is where the back-edge, the last branch into the trace, goes;
		-- tracemc's loop offset is checked against it (it is stale when LuaJIT moved the
		-- code to align the loop)
		local header
		for k = list.n, 1, -1 do
			local tgt = list.branch[k] and list.branch[k].target
			if tgt and tgt >= addr and tgt < addr + #code then header = tgt break end
		end
		if header and header ~= addr + (loop or 0) then
			M.stats.loop_offset_mismatches = (M.stats.loop_offset_mismatches or 0) + 1
		end
		if header and header ~= addr then
			lib.jf_emit_event(em, emitter.EVENT_LOOP_HEADER, header)
		end
	end
	for _, b in ipairs(branches) do
		local owner, exitno = id, b.exit
		if vmstate and b.off < vmstate then
			-- before the trace stores its number: LuaJIT reports the exit in the context
			-- of the trace running before (a side trace's stack check, its parent exit)
			owner = parent and trace_id(parent) or 0
		elseif b.stub and stub_owner[b.stub] then
			owner = trace_id(stub_owner[b.stub]) -- arm64: the stub's trace
		end
		if owner ~= 0 then
			lib.jf_emit_guard_flags(em, exitno, owner, b.branch, b.stub or stub_of(exitno), 0,
						b.flags)
			M.stats.guards = M.stats.guards + 1
		end
	end
	live[traceno] = { addr = addr, code = code, branches = branches, list = list,
			  stubs = stubs }
	M.stats.traces = M.stats.traces + 1
	if parent then M.stats.side = M.stats.side + 1 end
	emit_patches(traceno, parent, pexit)
end

local function on_flush()
	for traceno in pairs(live) do free_trace(traceno) end
	for base, size in pairs(stub_groups) do lib.jf_emit_region_free(em, base, size) end
	stub_groups, stub_exit, stub_owner, started = {}, {}, {}, {}
	epoch = epoch + 1
	M.stats.flushes = M.stats.flushes + 1
	lib.jf_emit_event(em, emitter.EVENT_TRACE_FLUSH, epoch)
end

-- The tracing phase opens after TRACE_START, which says the trace it makes, and closes
-- before anything else of the trace's end is written.
local function handle_trace(what, traceno, func, pc, a, b)
	if what == "start" then
		started[traceno] = { func = func, pc = pc, parent = a, exit = b }
		lib.jf_emit_event(em, emitter.EVENT_TRACE_START, trace_id(traceno))
		vmphases.trace_event(what)
		return
	end
	vmphases.trace_event(what)
	if what == "stop" then
		on_stop(traceno, func)
	elseif what == "abort" then
		started[traceno] = nil
		M.stats.aborts = M.stats.aborts + 1
		lib.jf_emit_event(em, emitter.EVENT_TRACE_ABORT, trace_id(traceno))
	elseif what == "flush" then
		on_flush()
	end
end

-- The handler runs in LuaJIT's interpreter and in capstone, only to feed the emitter: it
-- is bracketed by INSTRUMENTATION_BEGIN / _END so that jitflow counts all of it as
-- instrumentation, not as the program's interpreted or native time.
local function on_trace(what, traceno, func, pc, a, b)
	lib.jf_emit_event(em, emitter.EVENT_INSTRUMENTATION_BEGIN, 0)
	local ok, err = pcall(handle_trace, what, traceno, func, pc, a, b)
	lib.jf_emit_event(em, emitter.EVENT_INSTRUMENTATION_END, 0)
	if not ok then error(err, 0) end
end

-- Starts describing traces (idempotent). Returns true, or nil and why not.
function M.start()
	if em then return true end
	if not arm64 and jit.arch ~= "x64" then
		return nil, "only x64 and arm64 are supported, not " .. jit.arch
	end
	local err
	lib, em = emitter.open()
	if not lib then
		err, lib, em = em, nil, nil
		return nil, err
	end
	-- describing the runtime is instrumentation, as the handler's work is
	lib.jf_emit_event(em, emitter.EVENT_INSTRUMENTATION_BEGIN, 0)
	M.path = ffi.string(lib.jf_emitter_path(em))
	-- capstone is loaded here, with the module: loading it (the dynamic loader relocating
	-- the library, its tables set up) is start-up, not the cost of describing a trace
	local cs_ok, cs_err = mcode.open()
	if not cs_ok then warn("%s: traces' guards will not be described", cs_err) end
	lib.jf_emit_event(em, emitter.EVENT_RUNTIME, emitter.RUNTIME_LUAJIT)
	local vm_ok, vm_err = vmphases.start(lib, em, mcode)
	if not vm_ok then warn("LuaJIT's interpreter not found (%s): it counts as native", vm_err) end
	lib.jf_emit_event(em, emitter.EVENT_INSTRUMENTATION_END, 0)
	vmevents.listen("trace", on_trace)
	return true
end

-- Marks the start of iteration `index` of a benchmark's outer loop: jitflow's reports
-- then give instructions, time and jitted share per iteration, and the warm-up class. A
-- program calls it through package.loaded.jitflow, so that it costs nothing when jitflow
-- is not loaded (a run without the recorder):
--   local jitflow = package.loaded.jitflow
--   local iteration = jitflow and jitflow.iteration or function() end
--   for run = 1, runs do iteration(run) ... end
function M.iteration(index)
	if em then lib.jf_emit_event(em, emitter.EVENT_ITERATION, index) end
end

local ok, err = M.start()
if not ok then warn("not describing traces: %s", err) end
return M
