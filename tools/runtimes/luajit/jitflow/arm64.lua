-- LuaJIT's arm64 machine code: a trace's exit stubs and the branches that go to them.
--
-- LuaJIT's arm64 backend gives every trace exit stubs of its own, right after the trace's
-- code (jit.util.traceexitstub(trace, exit) gives each one's address): a header of three
-- instructions (`str lr, [sp]`, `bl` to LuaJIT's exit handler, `movz w0, #trace`), then
-- one instruction per exit, a `bl` back to the header, from whose return address the
-- handler computes the exit number. A guard is a B.cond, CBZ/CBNZ or TBZ/TBNZ to its exit's
-- stub; LuaJIT's inverted loop branch is a B.cond back into the loop followed by a `b` to
-- the stub. When a side trace is compiled for an exit, LuaJIT re-points those branches
-- (where the side trace is in range) and the stub itself (a `b` to the side trace): the
-- module finds such changes by reading the code again, as on x64.
--
-- A64 instructions are 4 bytes, aligned: every word is an instruction, so there are no
-- boundaries to find (x64.lua needs capstone for that), and the branches are read from
-- their fixed encodings (ARM's A64 reference: B.cond, CBZ/CBNZ, TBZ/TBNZ, B).
local ffi = require("ffi")
local bit = require("bit")

local M = {}

local STR_LR_SP = 0xf90003fe -- str lr, [sp]: the first instruction of a stub header
local HEADER = 12             -- bytes of the header before exit 0's stub

-- Nothing to load: the encodings are read here.
function M.open() return true end

local function signed(v, bits)
	local half = 2 ^ (bits - 1)
	return v >= half and v - 2 * half or v
end

-- The direct branch that word w at address pc is, if any: kind ("jcc" for the conditional
-- ones, "jmp" for B) and target. BL is a call (the stubs' own), not a branch of the trace.
local function branch(w, pc)
	local top8, top6 = bit.rshift(w, 24), bit.rshift(w, 26)
	if top8 == 0x54 and bit.band(w, 0x10) == 0 then                  -- B.cond
		return "jcc", pc + 4 * signed(bit.band(bit.rshift(w, 5), 0x7ffff), 19)
	elseif bit.band(top8, 0x7e) == 0x34 then                           -- CBZ, CBNZ
		return "jcc", pc + 4 * signed(bit.band(bit.rshift(w, 5), 0x7ffff), 19)
	elseif bit.band(top8, 0x7e) == 0x36 then                           -- TBZ, TBNZ
		return "jcc", pc + 4 * signed(bit.band(bit.rshift(w, 5), 0x3fff), 14)
	elseif top6 == 0x05 then                                           -- B
		return "jmp", pc + 4 * signed(bit.band(w, 0x3ffffff), 26)
	end
end

-- Whether the instruction at byte offset off of code is a call: BL (its top six bits
-- 100101, in the last byte of the little-endian word).
function M.is_call(code, off)
	local top = code:byte(off + 4)
	return top >= 0x94 and top <= 0x97
end

-- The instructions of code (a string of machine code that runs at addr), as x64.lua gives
-- them: list.off[k], list.len[k] and list.branch[k] = { kind = "jcc"|"jmp", target }.
function M.instructions(code, addr)
	if #code % 4 ~= 0 then
		return nil, string.format("%d bytes of code are not whole instructions", #code)
	end
	local words = ffi.cast("const uint32_t *", code)
	local list = { off = {}, len = {}, branch = {}, n = #code / 4 }
	for k = 1, list.n do
		local off = (k - 1) * 4
		list.off[k], list.len[k] = off, 4
		local w = tonumber(words[k - 1])
		local kind, target = branch(w, addr + off)
		if kind then list.branch[k] = { kind = kind, target = target } end
	end
	return list
end

-- A trace's exit stubs: { addr, code, exits = { [stub address] = exit number }, handler },
-- read from memory, or nil and why not; handler is where the header's BL goes (LuaJIT's
-- lj_vm_exit_handler). A side trace has one exit more than its snapshots (traceinfo's
-- nexit); traceexitstub says which exist.
function M.stubs(traceno)
	local jutil = require("jit.util")
	local first = jutil.traceexitstub(traceno, 0)
	if not first then return nil, "no exit stubs" end
	local exits, last = {}, first
	for e = 0, 65535 do
		local stub = jutil.traceexitstub(traceno, e)
		if not stub then break end
		exits[stub], last = e, stub
	end
	local base = first - HEADER
	local code = ffi.string(ffi.cast("const char *", base), last + 4 - base)
	local words = ffi.cast("const uint32_t *", code)
	if tonumber(words[0]) ~= STR_LR_SP or not M.is_call(code, 4) then
		return nil, string.format("no exit stub header at 0x%x", base)
	end
	local handler = base + 4 + 4 * signed(bit.band(tonumber(words[1]), 0x3ffffff), 26)
	return { addr = base, code = code, exits = exits, handler = handler }
end

-- The exit branches of a trace's code (list, at addr): for each instruction going to a
-- stub (stub_exit[target] = exit number), { exit, branch, stub, flags, off, rel }; rel is
-- the offset of the instruction that a patch re-points (the branch itself). A `b` to a stub
-- right after a conditional branch is LuaJIT's inverted loop branch: the guard is that
-- conditional branch, exiting when it falls through (flags 1). A `b` after anything else
-- cannot be counted from the trace: returned in `unguarded`.
function M.exit_branches(list, addr, stub_exit)
	local out, unguarded = {}, {}
	for k = 1, list.n do
		local b = list.branch[k]
		local e = b and stub_exit[b.target]
		if e then
			local off = list.off[k]
			local prev = list.branch[k - 1]
			if b.kind == "jcc" then
				out[#out + 1] = { exit = e, branch = addr + off, stub = b.target, flags = 0,
						  off = off, rel = off }
			elseif prev and prev.kind == "jcc" then
				out[#out + 1] = { exit = e, branch = addr + off - 4, stub = b.target,
						  flags = 1, off = off - 4, rel = off }
			else
				unguarded[#unguarded + 1] = { exit = e, at = addr + off }
			end
		end
	end
	return out, unguarded
end

-- arm64 traces store no trace number into the VM state before their exits: each exit's
-- stub carries its trace's number (the header's movz), so an exit belongs to the trace
-- whose stub it reaches.
function M.vmstate_store() return nil end

return M
