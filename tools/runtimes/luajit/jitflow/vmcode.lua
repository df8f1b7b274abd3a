-- Where LuaJIT's interpreter lies in memory, found at run time from the VM itself (Debian's
-- luajit is stripped: no lj_vm_* symbols).
--
-- LuaJIT's interpreter is one block of machine code that its build tool (buildvm) writes:
-- the bytecode handlers first, then the VM's subroutines (calls, returns, metamethods, the
-- fast functions, the recording and hook targets, the trace exit handler, math helpers).
-- Two facts of the running VM locate it:
--   * the dispatch table, the array of handler addresses the interpreter jumps through
--     after every bytecode. It lies in GG_State after the global_State that every
--     lua_State points to (glref). The interpreter keeps a static copy of the first
--     BC_FUNCF entries GG_LEN_DDISP (bytecodes + assembler fast functions) entries
--     further on, equal to them while no hook and no recording is active: the first
--     address from global_State on where such a copy starts is the table. Its lowest
--     entry is the first bytecode's handler, the start of the VM's code;
--   * the unwind table (.eh_frame): buildvm describes the whole interpreter but its FFI
--     call routine with one FDE, which must start exactly at that lowest entry. Its end
--     is the end of the interpreter.
-- The trace exit handler (lj_vm_exit_handler, where every exit stub jumps, and
-- lj_vm_exit_interp after it, where traces that end in the interpreter go) lies inside:
-- exit_code_end() finds where it ends once an exit stub shows where it begins.
local ffi = require("ffi")
local bit = require("bit")

ffi.cdef[[
struct jf_dl_phdr_info {
	uint64_t addr;
	const char *name;
	const uint8_t *phdr;
	uint16_t phnum;
};
int dl_iterate_phdr(int (*callback)(struct jf_dl_phdr_info *, size_t, void *), void *data);
]]

local M = {}

local PT_LOAD, PT_GNU_EH_FRAME = 1, 0x6474e550
local SEARCH_LIMIT = 16384 -- bytes after global_State searched for the dispatch table
			    -- (3968 in Debian's LuaJIT 2.1), within its memory mapping
local USER_LIMIT = 2 ^ 47  -- code addresses lie below; numbers are exact below 2^53

local function u32(p, off)
	return ffi.cast("const uint32_t *", p + off)[0]
end

-- A 64-bit value of memory as a Lua number (addresses are below 2^47): no boxed cdata.
local function u64(p, off)
	local q = ffi.cast("const uint32_t *", p + off)
	return q[0] + q[1] * 4294967296
end

-- The address of the eh_frame_hdr of the loaded object that maps addr, or nil.
local function eh_frame_hdr_of(addr)
	local found
	local cb = ffi.cast("int (*)(struct jf_dl_phdr_info *, size_t, void *)",
		function(info, size, data)
			local base, hdr, inside = tonumber(info.addr), nil, false
			for i = 0, info.phnum - 1 do
				local ph = info.phdr + 56 * i
				local vaddr = base + u64(ph, 16)
				if u32(ph, 0) == PT_LOAD and addr >= vaddr and addr < vaddr + u64(ph, 40) then
					inside = true
				elseif u32(ph, 0) == PT_GNU_EH_FRAME then
					hdr = vaddr
				end
			end
			if inside then found = hdr return 1 end
			return 0
		end)
	ffi.C.dl_iterate_phdr(cb, nil)
	cb:free()
	return found
end

local function uleb(p, off)
	local v, shift = 0, 0
	repeat
		local b = p[off]
		v, shift, off = v + bit.band(b, 0x7f) * 2 ^ shift, shift + 7, off + 1
	until b < 0x80
	return v, off
end

-- A DWARF pointer encoding (DW_EH_PE_*) at p + off: value and the offset after it.
-- datarel is relative to the eh_frame_hdr (base). nil for encodings LuaJIT's and GCC's
-- unwind tables do not use.
local function encoded(p, off, enc, base)
	local format, apply = bit.band(enc, 0x0f), bit.band(enc, 0x70)
	local v, size
	if format == 0x03 then v, size = u32(p, off), 4
	elseif format == 0x0b then v, size = bit.tobit(u32(p, off)), 4
	elseif format == 0x00 or format == 0x04 or format == 0x0c then v, size = u64(p, off), 8
	else return nil end
	if apply == 0x10 then v = v + tonumber(ffi.cast("uintptr_t", p + off))
	elseif apply == 0x30 then v = v + base
	elseif apply ~= 0 then return nil end
	return v, off + size
end

-- The FDE encoding of the CIE at cie: DW_EH_PE_absptr unless its augmentation has 'R'.
local function fde_encoding(cie)
	local aug = ffi.string(cie + 9)
	local off = 9 + #aug + 1
	if aug:sub(1, 1) ~= "z" then return 0 end
	local _
	_, off = uleb(cie, off)          -- code alignment
	_, off = uleb(cie, off)          -- data alignment (sleb: only skipped)
	if cie[8] == 1 then off = off + 1 else _, off = uleb(cie, off) end -- return register
	_, off = uleb(cie, off)          -- augmentation data length
	for k = 2, #aug do
		local c = aug:sub(k, k)
		if c == "R" then return cie[off]
		elseif c == "L" then off = off + 1
		elseif c == "P" then
			local v
			v, off = encoded(cie, off + 1, bit.band(cie[off], 0x7f), 0)
			if not v then return nil end
		else return nil end
	end
	return 0
end

-- [start, end) of the FDE of the code at addr, from its object's eh_frame_hdr search
-- table; nil and why not.
local function fde_range(addr)
	local hdr_addr = eh_frame_hdr_of(addr)
	if not hdr_addr then return nil, "no unwind table for 0x" .. bit.tohex(addr) end
	local hdr = ffi.cast("const uint8_t *", hdr_addr)
	if hdr[0] ~= 1 then return nil, "unknown eh_frame_hdr version " .. hdr[0] end
	local off = 4
	local _, count
	_, off = encoded(hdr, off, hdr[1], hdr_addr)
	if off then count, off = encoded(hdr, off, hdr[2], hdr_addr) end
	if not count then return nil, "unsupported eh_frame_hdr encoding" end
	-- the table is sorted by initial location: the last entry at or below addr
	local size = bit.band(hdr[3], 0x0f) == 0x0b and 4 or nil
	if not size or bit.band(hdr[3], 0x70) ~= 0x30 then
		return nil, "unsupported eh_frame_hdr table encoding"
	end
	local lo, hi, best, best_fde = 0, count - 1, nil, nil
	while lo <= hi do
		local mid = math.floor((lo + hi) / 2)
		local at = off + 2 * size * mid
		local loc = encoded(hdr, at, hdr[3], hdr_addr)
		if loc <= addr then
			best, best_fde, lo = loc, encoded(hdr, at + size, hdr[3], hdr_addr), mid + 1
		else
			hi = mid - 1
		end
	end
	if not best then return nil, "no FDE holds 0x" .. bit.tohex(addr) end
	local fde = ffi.cast("const uint8_t *", best_fde)
	if u32(fde, 0) == 0xffffffff then return nil, "64-bit FDE" end
	local enc = fde_encoding(fde + 4 - u32(fde, 4))
	if not enc then return nil, "unsupported CIE augmentation" end
	local begin_v, after = encoded(fde, 8, enc, 0)
	if not begin_v then return nil, "unsupported FDE encoding" end
	local range = encoded(fde, after, bit.band(enc, 0x0f), 0)
	if begin_v ~= best or not range then return nil, "inconsistent FDE" end
	if addr >= best + range then return nil, "no FDE holds 0x" .. bit.tohex(addr) end
	return best, best + range
end

-- global_State of this Lua state: a new thread's lua_State (its address is what tostring
-- prints) points to it with glref, after the GC header (8 + 4 bytes with 64-bit
-- references, 4 + 4 without).
-- How many bytes from addr on lie in the same memory mapping (/proc/self/maps), or 0.
local function mapped_after(addr)
	local f = io.open("/proc/self/maps")
	if not f then return 0 end
	for line in f:lines() do
		local from, to = line:match("^(%x+)-(%x+)")
		from, to = tonumber(from, 16), tonumber(to, 16)
		if from and addr >= from and addr < to then f:close() return to - addr end
	end
	f:close()
	return 0
end

local function global_state()
	local co = coroutine.create(function() end)
	local L = ffi.cast("const uint8_t *", tonumber(tostring(co):match("0x%x+")))
	if ffi.abi("gc64") then return u64(L, 16) end
	return u32(L, 8)
end

-- The dispatch table: returns its address and its entries 0 .. ddisp - 1, or nil and why.
-- BC_FUNCF, the number of entries with a static copy, is the opcode of a Lua function's
-- header (jit.util.funcbc at pc 0); GG_LEN_DDISP is the copy's distance, found with it.
local function dispatch_table()
	local nstatic = bit.band(require("jit.util").funcbc(function() end, 0), 0xff)
	local g = global_state()
	-- read as 32-bit halves: a Lua number each, no cdata per read; the search goes by the
	-- low halves, the check by whole values
	local w = ffi.cast("const uint32_t *", g)
	local function at(i) return w[2 * i] + w[2 * i + 1] * 4294967296 end
	local first = {} -- low half of a value -> first index it was seen at
	local limit = math.min(SEARCH_LIMIT, mapped_after(g))
	for k = 0, math.floor(limit / 8) - nstatic do -- reads go up to k + nstatic - 1
		local v = w[2 * k]
		local j = first[v]
		if v ~= 0 and j and k - j > nstatic and k - j <= nstatic + 512 then
			local ddisp, same = k - j, true
			for i = 0, nstatic - 1 do
				local e = at(j + i)
				if e == 0 or e >= USER_LIMIT or e ~= at(j + ddisp + i) then
					same = false
					break
				end
			end
			if same then
				local entries = {}
				for i = 0, ddisp - 1 do entries[i] = at(j + i) end
				return g + 8 * j, entries, ddisp
			end
		end
		if not j then first[v] = k end
	end
	return nil, "no dispatch table within " .. limit .. " bytes of global_State"
end

-- The interpreter's code: { start, stop, dispatch, handlers } or nil and why not.
function M.find()
	local dispatch, entries, ddisp = dispatch_table()
	if not dispatch then return nil, entries end
	local low, high = math.huge, 0
	for i = 0, ddisp - 1 do
		if entries[i] == 0 then return nil, "dispatch entry " .. i .. " is empty" end
		low, high = math.min(low, entries[i]), math.max(high, entries[i])
	end
	local start, stop = fde_range(low)
	if not start then return nil, stop end
	if start ~= low or high >= stop then
		return nil, string.format("the dispatch table (0x%x-0x%x) and the unwind table's "
			.. "code (0x%x-0x%x) disagree", low, high, start, stop)
	end
	return { start = start, stop = stop, dispatch = dispatch, handlers = ddisp }
end
-- The end of the trace exit code at `handler` (lj_vm_exit_handler), which lies before
-- `stop` (the interpreter's end). On x86-64 and arm64 alike it saves the registers, calls
-- lj_trace_exit, branches on its result to the error path at the end (a call to
-- lj_err_trace), and otherwise goes on as lj_vm_exit_interp, which restores the
-- interpreter's state and jumps through the dispatch table. `mcode` reads the machine
-- code: jitflow.x64 or jitflow.arm64 (instructions, is_call).
-- Returns the address after the error path's call, or nil and why not.
function M.exit_code_end(handler, stop, mcode)
	local window = math.min(1024, stop - handler)
	local code = ffi.string(ffi.cast("const char *", handler), window)
	local list, err = mcode.instructions(code, handler, true)
	if not list then return nil, err end
	local called, error_path = false, nil
	for k = 1, list.n do
		local off, len = list.off[k], list.len[k]
		local is_call = mcode.is_call(code, off, len)
		if error_path and off >= error_path and is_call then return handler + off + len end
		if called and not error_path and list.branch[k] and list.branch[k].kind == "jcc" then
			error_path = list.branch[k].target - handler
		end
		called = called or is_call
	end
	return nil, string.format("no error path call within %d bytes of the exit handler", window)
end

-- They run when the module starts, before it listens to "trace", some of them often enough
-- to be hot: traces of them would be ones jitflow does not describe, with trace numbers
-- that a run without jitflow gives to the program's own code. (One call each: a loop here
-- would be hot itself.)
jit.off(u32) jit.off(u64) jit.off(eh_frame_hdr_of, true) jit.off(uleb) jit.off(encoded)
jit.off(fde_encoding) jit.off(fde_range) jit.off(mapped_after) jit.off(global_state)
jit.off(dispatch_table, true) jit.off(M.find) jit.off(M.exit_code_end)

return M
