-- LuaJIT's own work beside running the program, described to jitflow: where its
-- interpreter's code lies (jitflow/vmcode.lua) and the phases of its JIT compiler.
--   * The interpreter: one INTERP_RANGE (eval loop) over the VM's code, found at start.
--   * Exit handling: the trace exit code inside it (lj_vm_exit_handler and
--     lj_vm_exit_interp) as a narrower INTERP_RANGE (deopt), described when the first exit
--     stubs show where they go (x64: the jump that ends a stub group; arm64: the BL of a
--     trace's stub header). lj_trace_exit, the C function it calls to restore the
--     interpreter's state from the exit's snapshot, has no symbol and is not told apart
--     from the rest of luajit's C code.
--   * Tracing: PHASE_BEGIN / _END (tracing) from each "trace" event "start" to the trace's
--     "stop" or "abort". LuaJIT sends "stop" after it optimized and assembled the trace
--     (lj_trace.c: LJ_TRACE_END runs the optimizer, LJ_TRACE_ASM lj_asm_trace, then
--     trace_stop sends "stop"), and no VM event comes between the last recorded bytecode
--     and the optimizer: compiling is inside the tracing phase, not split from it.
--   * Garbage collection: not told apart (lj_gc_step and the collector have no symbols).
local emitter = require("jitflow.emitter")
local vmcode = require("jitflow.vmcode")

local M = { interpreter = nil, exit_handler = nil }

local lib, em
local mcode -- jitflow.x64 or jitflow.arm64: reads the exit code
local tracing = false

local function warn(fmt, ...)
	io.stderr:write("jitflow.lua: ", string.format(fmt, ...), "\n")
end

-- Finds and describes the interpreter's code; machine_code is the module that reads this
-- machine's code (jitflow.x64 or jitflow.arm64). Returns true, or nil and why not (the
-- interpreter then counts as luajit's native code).
function M.start(library, emitter_handle, machine_code)
	lib, em, mcode = library, emitter_handle, machine_code
	local vm, err = vmcode.find()
	if not vm then return nil, err end
	M.interpreter = vm
	lib.jf_emit_interp_range(em, emitter.INTERP_EVAL_LOOP, vm.start, vm.stop,
		"lj_vm (LuaJIT's interpreter: bytecode handlers, fast functions, VM routines)")
	return true
end

-- An exit stub jumps to `target`: the first time, describe the exit code there.
function M.exit_stub_target(target)
	local vm = M.interpreter
	if M.exit_handler or not vm then return end
	if target < vm.start or target >= vm.stop then
		warn("exit stubs jump to 0x%x, outside the interpreter's code", target)
		M.exit_handler = false
		return
	end
	local stop, err = vmcode.exit_code_end(target, vm.stop, mcode)
	if not stop or stop > vm.stop then
		warn("trace exit code at 0x%x: %s", target, err or "runs past the interpreter")
		M.exit_handler = false
		return
	end
	M.exit_handler = { start = target, stop = stop }
	lib.jf_emit_interp_range(em, emitter.INTERP_DEOPT, target, stop,
				 "lj_vm_exit_handler, lj_vm_exit_interp")
end

-- A "trace" event: the tracing phase begins at "start" and ends at "stop" or "abort".
function M.trace_event(what)
	if what == "start" then
		if tracing then lib.jf_emit_event(em, emitter.EVENT_PHASE_END, emitter.PHASE_TRACING) end
		lib.jf_emit_event(em, emitter.EVENT_PHASE_BEGIN, emitter.PHASE_TRACING)
		tracing = true
	elseif (what == "stop" or what == "abort") and tracing then
		lib.jf_emit_event(em, emitter.EVENT_PHASE_END, emitter.PHASE_TRACING)
		tracing = false
	end
end

return M
