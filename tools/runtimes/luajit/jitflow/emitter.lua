-- jitflow's zone emitter (libjitflow-emit.so, imagemap/include/jitflow/emitter.h) through
-- LuaJIT's FFI. The library is $JITFLOW_EMIT_LIB (set by `jitflow record`) or found by the
-- dynamic linker as libjitflow-emit.so.0.
local ffi = require("ffi")

ffi.cdef[[
struct jf_emitter;
struct jf_region {
	const char *name;
	uint64_t addr;
	const void *code;
	uint64_t size;
	uint32_t kind;
	uint32_t generation;
	uint64_t trace_id;
	uint64_t parent_trace;
	uint64_t parent_guard;
	uint64_t code_object;
};
struct jf_emitter *jf_emitter_open(const char *dir, unsigned flags);
const char *jf_emitter_error(const struct jf_emitter *em);
const char *jf_emitter_path(const struct jf_emitter *em);
int jf_emitter_flush(struct jf_emitter *em);
uint64_t jf_emit_region_load(struct jf_emitter *em, const struct jf_region *region);
uint64_t jf_emit_region_free(struct jf_emitter *em, uint64_t addr, uint64_t size);
uint64_t jf_emit_patch(struct jf_emitter *em, uint64_t addr, const void *bytes,
		       uint32_t size, const char *reason);
uint64_t jf_emit_guard_flags(struct jf_emitter *em, uint64_t guard_id, uint64_t trace_id,
			     uint64_t branch_addr, uint64_t stub_addr, uint32_t resume_pc,
			     uint32_t flags);
uint64_t jf_emit_code_object(struct jf_emitter *em, uint64_t id, const char *name,
			     const char *file, uint32_t line);
uint64_t jf_emit_interp_range(struct jf_emitter *em, uint32_t kind, uint64_t start,
			      uint64_t end, const char *name);
uint64_t jf_emit_event(struct jf_emitter *em, uint32_t kind, uint64_t arg);
]]

local M = {
	REGION_TRACE = 2, REGION_BRIDGE = 3, REGION_EXIT_STUB = 4,
	INTERP_EVAL_LOOP = 1, INTERP_DEOPT = 6, INTERP_RUNTIME = 7,
	CLOCK_TSC = 1,
	EVENT_ITERATION = 1, EVENT_TRACE_START = 2, EVENT_TRACE_ABORT = 3, EVENT_LOOP_HEADER = 6,
	EVENT_TRACE_FLUSH = 7, EVENT_TRACE_LINK = 8, EVENT_RUNTIME = 9,
	EVENT_INSTRUMENTATION_BEGIN = 10, EVENT_INSTRUMENTATION_END = 11,
	EVENT_PHASE_BEGIN = 12, EVENT_PHASE_END = 13,
	PHASE_TRACING = 1, -- enum jf_vm_phase
	RUNTIME_LUAJIT = 1,
	-- enum jf_trace_link, by jit.util.traceinfo's linktype
	LINK = { none = 0, loop = 1, root = 2, ["return"] = 3, interpreter = 4,
		 ["tail-recursion"] = 5, ["up-recursion"] = 6, ["down-recursion"] = 7,
		 stitch = 8 },
}

-- Returns the library and an open emitter, or nil and why not.
function M.open()
	local path = os.getenv("JITFLOW_EMIT_LIB")
	local ok, lib = pcall(ffi.load, path and path ~= "" and path or "libjitflow-emit.so.0")
	if not ok then return nil, "cannot load the emitter library: " .. tostring(lib) end
	-- TSC timestamps: no clock_gettime per record (a system call on many VMs: 4 times
	-- the cost of the rest of a record in tools/bench/bench_emit)
	local em = lib.jf_emitter_open(nil, M.CLOCK_TSC)
	if em == nil then return nil, "cannot open the zone file (JITFLOW_ZONE_DIR or .)" end
	return lib, em
end

return M
