-- Finding the branches of a LuaJIT trace's x86-64 machine code that go to exit stubs.
--
-- LuaJIT shares exit stubs between traces (grouped by exit number), and a guard is every
-- branch of a trace that targets its exit's stub: jcc rel32 mostly, and for an inverted
-- loop branch a jcc back into the loop followed by a `jmp rel32` to the stub. Instruction
-- boundaries come from capstone (through the FFI), so bytes inside other instructions are
-- never mistaken for branches.
local ffi = require("ffi")
local bit = require("bit")

ffi.cdef[[
typedef size_t jf_csh;
int cs_open(int arch, int mode, jf_csh *handle);
size_t cs_disasm(jf_csh handle, const uint8_t *code, size_t code_size, uint64_t address,
		 size_t count, uint8_t **insn);
void cs_free(void *insn, size_t count);
]]

local CS_ARCH_X86, CS_MODE_64 = 3, 8

local M = {}

-- cs_insn starts {u32 id; u64 address; u16 size; ...} in capstone 4 and 5, but its size
-- differs between them: measured by disassembling two nops and finding the second one's
-- address field.
local cs, handle, stride
local function capstone()
	if cs then return true end
	for _, name in ipairs({ "capstone", "libcapstone.so.4", "libcapstone.so.5" }) do
		local ok, lib = pcall(ffi.load, name)
		if ok then cs = lib break end
	end
	if not cs then return false, "capstone library not found" end
	local h = ffi.new("jf_csh[1]")
	if cs.cs_open(CS_ARCH_X86, CS_MODE_64, h) ~= 0 then cs = nil return false, "cs_open failed" end
	handle = h[0]
	local out = ffi.new("uint8_t *[1]")
	local n = cs.cs_disasm(handle, "\144\144", 2, 0x1000, 0, out)
	if n == 2 then
		for off = 16, 4096, 8 do
			if ffi.cast("uint64_t *", out[0] + off + 8)[0] == 0x1001 then stride = off break end
		end
	end
	if n > 0 then cs.cs_free(out[0], n) end
	if not stride then cs = nil return false, "unknown capstone instruction layout" end
	return true
end

-- Loads capstone and opens its x86-64 disassembler (once). Returns true, or false and why
-- not.
M.open = capstone
-- Its loop runs when the module starts, maybe before the module listens to "trace": a
-- trace of it would be one jitflow does not describe, and would take a trace number that
-- a run without jitflow gives to the program's own code.
jit.off(capstone)

local function rel32(code, at) -- at: 0-based offset of the displacement
	local b0, b1, b2, b3 = code:byte(at + 1, at + 4)
	return bit.tobit(b0 + b1 * 256 + b2 * 65536 + b3 * 16777216)
end

local function rel8(code, at)
	local b = code:byte(at + 1)
	return b >= 128 and b - 256 or b
end

-- The instructions of code (a string of machine code that runs at addr), in address
-- order: list.off[k], list.len[k] for each, and list.branch[k] = { kind = "jcc"|"jmp",
-- target } for direct branches. Returns nil and a message when capstone is missing or
-- stops before the end (bytes it cannot decode); with prefix_only, what it decoded.
-- One capstone call per trace: the handlers run in LuaJIT's interpreter, where each FFI
-- call and each boxed 64-bit number costs.
function M.instructions(code, addr, prefix_only)
	local ok, err = capstone()
	if not ok then return nil, err end
	local out = ffi.new("uint8_t *[1]")
	local n = tonumber(cs.cs_disasm(handle, code, #code, addr, 0, out))
	local list = { off = {}, len = {}, branch = {}, n = n }
	local off, insns = 0, out[0]
	for k = 1, n do
		local at = (k - 1) * stride + 16 -- the u16 size field, read without boxing
		local len = insns[at] + insns[at + 1] * 256
		local b0 = code:byte(off + 1)
		list.off[k], list.len[k] = off, len
		if b0 == 0x0f and len == 6 then
			local b1 = code:byte(off + 2)
			if b1 >= 0x80 and b1 <= 0x8f then
				list.branch[k] = { kind = "jcc", target = addr + off + 6 + rel32(code, off + 2) }
			end
		elseif len == 2 and b0 >= 0x70 and b0 <= 0x7f then
			list.branch[k] = { kind = "jcc", target = addr + off + 2 + rel8(code, off + 1) }
		elseif len == 5 and b0 == 0xe9 then
			list.branch[k] = { kind = "jmp", target = addr + off + 5 + rel32(code, off + 1) }
		elseif len == 2 and b0 == 0xeb then
			list.branch[k] = { kind = "jmp", target = addr + off + 2 + rel8(code, off + 1) }
		elseif len == 6 and b0 == 0xff and code:byte(off + 2) == 0x25 then
			list.branch[k] = { kind = "jmp-indirect" }
		end
		off = off + len
	end
	if n > 0 then cs.cs_free(out[0], n) end
	if off < #code and not prefix_only then
		return nil, string.format("capstone stops at offset %d of %d", off, #code)
	end
	return list
end

-- Whether the instruction at byte offset off of code, len bytes long, is a call: `call
-- rel32` (E8), the only call LuaJIT's exit handler makes.
function M.is_call(code, off, len)
	return len == 5 and code:byte(off + 1) == 0xe8
end

-- The offset of the instruction storing traceno into LuaJIT's vmstate (`mov dword
-- [DISPATCH+ofs], traceno`, C7 with an optional REX prefix): before it, an exit is
-- reported in the context of the trace that was running before (a side trace's stack
-- check exits through its parent's exit). nil when there is none.
function M.vmstate_store(code, list, traceno)
	for k = 1, list.n do
		local off, len = list.off[k], list.len[k]
		local b0, b1 = code:byte(off + 1, off + 2)
		local op = (bit.band(b0, 0xf0) == 0x40) and b1 or b0
		if op == 0xc7 and len >= 6 and rel32(code, off + len - 4) == traceno then
			return off
		end
	end
	return nil
end

-- The exit branches: for each instruction going to a stub (stub_exit[target] = exit
-- number), { exit, branch = address, flags, off, rel = offset of the displacement }.
-- A `jmp` to a stub right after a jcc is LuaJIT's inverted loop branch: the guard is
-- that jcc, exiting when it falls through (flags 1). A `jmp` to a stub after anything
-- else cannot be counted from the trace (no branch direction): returned in `unguarded`.
function M.exit_branches(list, addr, stub_exit)
	local out, unguarded = {}, {}
	for k, b in pairs(list.branch) do
		local e = b.target and stub_exit[b.target]
		if e then
			local off, len = list.off[k], list.len[k]
			if b.kind == "jcc" then
				out[#out + 1] = { exit = e, branch = addr + off, flags = 0, off = off,
						  rel = len == 6 and off + 2 or nil }
			else
				local prev = list.branch[k - 1]
				if prev and prev.kind == "jcc" then
					out[#out + 1] = { exit = e, branch = addr + list.off[k - 1], flags = 1,
							  off = list.off[k - 1],
							  rel = len == 5 and off + 1 or nil }
				else
					unguarded[#unguarded + 1] = { exit = e, at = addr + off }
				end
			end
		end
	end
	table.sort(out, function(x, y) return x.off < y.off end)
	return out, unguarded
end

return M
