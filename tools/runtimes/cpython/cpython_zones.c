/* _jitflow_cpython: describes CPython 3.13's JIT code to jitflow while the program runs,
 * without changing CPython.
 *
 * CPython offers no hook when an executor is made or freed, so the module
 *  - wraps the tier-2 optimizer (_Py_GetOptimizer / _Py_SetTier2Optimizer), when the
 *    program starts (the audit event cpython.run_*; CPython installs its optimizer only
 *    after `site` has run): every
 *    executor the default optimizer returns is described before it first runs (the
 *    interpreter inserts and enters it only after optimize() returns);
 *  - wraps the executor type's tp_dealloc (CPython's uop_dealloc frees the code with
 *    _PyJIT_Free): the code's REGION_FREE is written before the memory is unmapped, and
 *    a freed executor cannot run again;
 *  - describes the executors that exist when it starts (interp->executor_list_head).
 *
 * An executor's machine code is laid out by Python/jit.c as the trampoline, one stencil per
 * uop of executor->trace in order, then _FATAL_ERROR; stencil sizes come from the build's
 * jit_stencils.h (stencil_table.c). Per executor it writes:
 *  - the trampoline [jit_code, jit_side_entry) as a trampoline region;
 *  - the uops [jit_side_entry, end of _FATAL_ERROR) as a trace region (cold-exit
 *    executors, a lone _COLD_EXIT, as trampolines), named after the code object, the
 *    file:line and the bytecode offset where it starts, with a CODE_OBJECT record; for
 *    a loop (its trace ends in _JUMP_TO_TOP), a LOOP_HEADER event at the second uop,
 *    where _JUMP_TO_TOP goes back to, so that iterations count as the loop runs;
 *  - a PC_MAP: one entry per uop (op_kind = uop id, named by OP_NAME records,
 *    bytecode_pc = the uop's target as a byte offset, op_index = its index in the trace,
 *    inline_depth = how many frames the trace pushed before it);
 *  - a second PC_MAP, of code objects (JF_PC_MAP_CODE_OBJECTS): the same entries, each
 *    naming the code object its target is in: the executor's own, or the function a
 *    _PUSH_FRAME took into the trace (CODE_OBJECT records, one per function);
 *  - an INLINE_FRAMES record: for each uop of an inlined function, the frames around it,
 *    outermost first, each at the bytecode offset of its call (emit_inline_frames);
 *  - a POINT (label, STENCIL_POINT: uop << 32 | index) at each stencil's first
 *    instruction: jitflow counts how often each stencil was entered, which pystats counts
 *    as execution_count;
 *  - a POINT (label, EXIT_POINT: 2^63 | uop << 32 | index << 8 | n) at each direct
 *    jump of a guard's stencil to its exit stub (EXIT_IF / DEOPT_IF): its passes are the
 *    guard's exits, which pystats counts as miss;
 *  - GUARD records (guard id = uop index x 2, + 1 for branches that exit when they fall
 *    through) for the conditional branches that decide each
 *    of those jumps (found with capstone in the stencil's bytes), so that reports count
 *    guard exits and passes as for any runtime.
 * Cold exits are shared by every executor (exits[i] starts at cold exit i); each is
 * described the first time an executor with that many exits appears.
 *
 * Its first record declares the runtime (JF_RUNTIME_CPYTHON), so that reports use
 * CPython's words. It also names the tier-1 interpreter's eval loop
 * (_PyEval_EvalFrameDefault, address and size from its dynamic symbol) as an
 * INTERP_RANGE. Everything the module does is bracketed by INSTRUMENTATION events. */
#define _GNU_SOURCE            /* dladdr1 */
#define PY_SSIZE_T_CLEAN
#ifndef Py_BUILD_CORE_MODULE
#define Py_BUILD_CORE_MODULE
#endif
#include <Python.h>

/* This module's own copy of the uop names and flags (CPython's are not exported). */
#define NEED_OPCODE_METADATA
#include "pycore_code.h"
#include "pycore_frame.h"
#include "pycore_interp.h"
#include "pycore_opcode_metadata.h"
#include "pycore_optimizer.h"
#include "pycore_uop_metadata.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>
#include <jitflow/emitter.h>
#include <jitflow/zone_format.h>

#include "stencil_table.h"

/* POINT ids: what each counts, readable from the report alone. */
#define STENCIL_POINT(uop, index) ((uint64_t)(uop) << 32 | (index))
#define EXIT_POINT(uop, index, n) (1ull << 63 | (uint64_t)(uop) << 32 | (uint64_t)(index) << 8 | (n))

static struct jf_emitter *zones;
static uint32_t code_size_of[MAX_UOP_ID + 1], data_size_of[MAX_UOP_ID + 1];
static uint8_t have_size[MAX_UOP_ID + 1];
static uint32_t trampoline_size, trampoline_data;
static uint64_t next_id = 1;
static _PyOptimizerObject *inner;            /* the optimizer we wrap */
static destructor original_dealloc;
static PyTypeObject *executor_type;
static const _PyExecutorObject *cold_base;   /* &COLD_EXITS[0], from a new executor */
static uint32_t cold_described;
static uint64_t size_mismatches, unknown_uops;

/* Executors described and not yet freed: pointer -> (id, code start, code size). */
struct described { const void *key; uint64_t id, addr, size, tramp; };
static struct described *table;
static size_t table_cap, table_used;

static size_t slot_of(const void *key)
{
	size_t h = ((uintptr_t)key >> 4) * 0x9e3779b97f4a7c15ull;

	return h & (table_cap - 1);
}

static struct described *lookup(const void *key)
{
	size_t i;

	if (!table_cap)
		return NULL;
	for (i = slot_of(key); table[i].key; i = (i + 1) & (table_cap - 1))
		if (table[i].key == key)
			return &table[i];
	return NULL;
}

static int remember(const struct described *d)
{
	size_t i;

	if ((table_used + 1) * 2 > table_cap) {
		size_t old_cap = table_cap, j;
		struct described *old = table;

		table_cap = table_cap ? table_cap * 2 : 1024;
		table = calloc(table_cap, sizeof(*table));
		if (!table) {
			table = old;
			table_cap = old_cap;
			return -1;
		}
		for (j = 0; j < old_cap; j++)
			if (old[j].key) {
				for (i = slot_of(old[j].key); table[i].key; i = (i + 1) & (table_cap - 1))
					;
				table[i] = old[j];
			}
		free(old);
	}
	for (i = slot_of(d->key); table[i].key; i = (i + 1) & (table_cap - 1))
		;
	table[i] = *d;
	table_used++;
	return 0;
}

/* Removes a slot, re-inserting the cluster after it (linear probing). */
static void forget(struct described *d)
{
	size_t i = (size_t)(d - table), j;

	table[i].key = NULL;
	table_used--;
	for (j = (i + 1) & (table_cap - 1); table[j].key; j = (j + 1) & (table_cap - 1)) {
		struct described moved = table[j];

		table[j].key = NULL;
		table_used--;
		remember(&moved);
	}
}

/* The emitter buffers records; written out before the executor first runs or its memory
 * goes, each record's write() dates it correctly where the trace cannot show the
 * emitter's marker calls (a recording with --filter=jit traces JIT code only). */
static void written_now(void) { jf_emitter_flush(zones); }
static void begin(void) { jf_emit_event(zones, JF_EVENT_INSTRUMENTATION_BEGIN, 0); }
static void end(void) { jf_emit_event(zones, JF_EVENT_INSTRUMENTATION_END, 0); }

/* Code objects named so far (CODE_OBJECT records), by qualname, file and first line:
 * the executors' own and those their traces inlined. Ids are small (a pc map's kind is 16
 * bits) and never reused, and no reference is kept: a code object freed and another made
 * at its address is told apart by its name. */
struct named_code { char *key; uint16_t id; };
static struct named_code *named;
static size_t nnamed, named_cap;
static uint64_t unnamed_code_objects;   /* past the 65535 ids */

/* code's CODE_OBJECT id, writing the record the first time; 0 when it cannot be named. */
static uint16_t code_object_id(PyCodeObject *code)
{
	const char *qualname = PyUnicode_AsUTF8(code->co_qualname);
	const char *file = PyUnicode_AsUTF8(code->co_filename);
	char key[1024];
	size_t i;

	if (!qualname || !file) {
		PyErr_Clear();
		return 0;
	}
	snprintf(key, sizeof(key), "%s\n%s\n%d", qualname, file, code->co_firstlineno);
	for (i = 0; i < nnamed; i++)
		if (!strcmp(named[i].key, key))
			return named[i].id;
	if (nnamed == UINT16_MAX) {
		if (!unnamed_code_objects++)
			fprintf(stderr, "jitflow: more than %u code objects; uops of the others have "
				"no code object in the pc maps\n", UINT16_MAX);
		return 0;
	}
	if (nnamed == named_cap) {
		size_t cap = named_cap ? named_cap * 2 : 64;
		struct named_code *grown = realloc(named, cap * sizeof(*named));

		if (!grown)
			return 0;
		named = grown;
		named_cap = cap;
	}
	if (!(named[nnamed].key = strdup(key)))
		return 0;
	named[nnamed].id = (uint16_t)(nnamed + 1);
	jf_emit_code_object(zones, named[nnamed].id, qualname, file, (uint32_t)code->co_firstlineno);
	return named[nnamed++].id;
}

/* Uops whose stub target is not their own: an iteration test exits past the loop's
 * END_FOR (Python/optimizer.c, prepare_for_execution). */
static int exits_past_loop(int op)
{
	return op == _GUARD_NOT_EXHAUSTED_RANGE || op == _GUARD_NOT_EXHAUSTED_LIST ||
	       op == _GUARD_NOT_EXHAUSTED_TUPLE || op == _FOR_ITER_TIER_TWO;
}

/* The target (a bytecode index, in code units, in its frame's code object) of a stub
 * after the trace, or -1. */
static int64_t stub_target(const _PyExecutorObject *e, uint32_t i)
{
	const _PyUOpInstruction *u = &e->trace[i];

	if (i >= e->code_size)
		return -1;
	if (u->opcode == _ERROR_POP_N)
		return (int64_t)u->operand; /* its target; the target field is 0 */
	if (u->format == UOP_FORMAT_TARGET)
		return u->target;
	if (u->format == UOP_FORMAT_EXIT && u->exit_index < e->exit_count)
		return e->exits[u->exit_index].target;
	return -1;
}

/* The byte offset in its frame's code object that uop i goes back to, or -1 when the uop
 * does not say. A uop that can exit or fail keeps jumps instead of its target; the stubs
 * it jumps to have it: the error stub's operand, or the exit stub's target. _JUMP_TO_TOP
 * and _DYNAMIC_EXIT have none. */
static int64_t bytecode_offset(const _PyExecutorObject *e, uint32_t i)
{
	const _PyUOpInstruction *u = &e->trace[i];
	int64_t t = -1;

	switch (u->format) {
	case UOP_FORMAT_TARGET:
		if (u->opcode != _JUMP_TO_TOP && u->opcode != _DYNAMIC_EXIT)
			t = stub_target(e, i);
		break;
	case UOP_FORMAT_EXIT:
		t = stub_target(e, i);
		break;
	case UOP_FORMAT_JUMP:
		if ((_PyUop_Flags[u->opcode] & HAS_ERROR_FLAG) && u->error_target < e->code_size &&
		    e->trace[u->error_target].opcode == _ERROR_POP_N)
			t = stub_target(e, u->error_target);
		else if ((_PyUop_Flags[u->opcode] & (HAS_EXIT_FLAG | HAS_DEOPT_FLAG)) &&
			 !exits_past_loop(u->opcode) && u->jump_target > i)
			t = stub_target(e, u->jump_target);
		break;
	}
	return t < 0 ? -1 : t * 2;
}

#define MAX_INLINED 16   /* 3.13 traces at most TRACE_STACK_SIZE (5) frames deep */
#define NO_CALLER UINT32_MAX

/* The code object each uop runs in (its CODE_OBJECT id, 0: not known) and how deeply it
 * is inlined: the executor's own code, then from each _PUSH_FRAME on the callee its
 * operand names (a function, or a code object with the low bit set; 0 when the optimizer
 * did not follow the call), back at each _POP_FRAME, _RETURN_GENERATOR or _YIELD_VALUE;
 * and the _PUSH_FRAME that entered its frame (caller, NO_CALLER in the executor's own),
 * whose own frame and bytecode offset are the call's. Operands are read only when
 * follow_calls is set, for an executor the optimizer has just made: the objects they
 * point to are alive then. The stubs after the trace run in the frame of the first uop
 * that jumps to them. */
static void frames_of(const _PyExecutorObject *e, PyCodeObject *code, int follow_calls,
		      uint16_t *co, uint16_t *depth, uint32_t *caller)
{
	uint16_t stack[MAX_INLINED];
	uint32_t pushed_by[MAX_INLINED];
	uint32_t i, j, n = e->code_size, end = n;
	int d = 0;

	stack[0] = code_object_id(code);
	pushed_by[0] = NO_CALLER;
	for (i = 0; i < n; i++) {
		const _PyUOpInstruction *u = &e->trace[i];

		co[i] = stack[d];
		depth[i] = (uint16_t)d;
		caller[i] = pushed_by[d];
		if (u->opcode == _PUSH_FRAME && d + 1 < MAX_INLINED) {
			uint64_t operand = u->operand;
			PyObject *callee = (PyObject *)(uintptr_t)(operand & ~(uint64_t)1);
			uint16_t id = 0;

			if (follow_calls && callee && (operand & 1) && PyCode_Check(callee))
				id = code_object_id((PyCodeObject *)callee);
			else if (follow_calls && callee && !(operand & 1) && PyFunction_Check(callee) &&
				 PyCode_Check(PyFunction_GET_CODE(callee)))
				id = code_object_id((PyCodeObject *)PyFunction_GET_CODE(callee));
			stack[++d] = id;
			pushed_by[d] = i;
		} else if ((u->opcode == _POP_FRAME || u->opcode == _RETURN_GENERATOR ||
			    u->opcode == _YIELD_VALUE) && d > 0) {
			d--;
		} else if (u->opcode == _JUMP_TO_TOP || u->opcode == _EXIT_TRACE ||
			   u->opcode == _DYNAMIC_EXIT || u->opcode == _COLD_EXIT) {
			end = i + 1; /* the trace ends; its stubs follow */
			break;
		}
	}
	for (i = end; i < n; i++) {
		co[i] = 0;
		depth[i] = 0;
		caller[i] = NO_CALLER;
		for (j = 0; j < end; j++) {
			const _PyUOpInstruction *u = &e->trace[j];

			if (u->format == UOP_FORMAT_JUMP && (u->jump_target == i || u->error_target == i)) {
				co[i] = co[j];
				depth[i] = depth[j];
				caller[i] = caller[j];
				break;
			}
		}
	}
	co[n] = 0; /* _FATAL_ERROR */
	depth[n] = 0;
	caller[n] = NO_CALLER;
}

/* The frames around each inlined uop's (an INLINE_FRAMES record): per code offset that
 * starts a uop of an inlined function, its callers outermost first (the executor's own
 * code object at depth 0), each with the bytecode offset of its call, the _PUSH_FRAME's.
 * Zero-size stencils share their offset with the next uop, whose instructions they are:
 * the last uop at an offset says. A chain with a frame the optimizer did not name is left
 * out (the uop keeps its innermost frame only). */
static void emit_inline_frames(uint64_t region, const struct jf_pc_map_entry *map,
			       const struct jf_pc_map_entry *code_map, const uint32_t *caller,
			       uint32_t n)
{
	struct jf_pc_map_entry *f = malloc((size_t)n * (MAX_INLINED - 1) * sizeof(*f));
	uint32_t i, nf = 0;

	if (!f)
		return;
	for (i = 0; i < n; i++) {
		uint32_t d = code_map[i].inline_depth, j = caller[i], k, whole = 1;

		if (!d || !code_map[i].op_kind ||
		    (i + 1 < n && code_map[i + 1].code_offset == code_map[i].code_offset))
			continue;
		for (k = d; k-- > 0; j = caller[j]) {
			if (j == NO_CALLER || !code_map[j].op_kind || code_map[j].inline_depth != k) {
				whole = 0;
				break;
			}
			f[nf + k].code_offset = code_map[i].code_offset;
			f[nf + k].bytecode_pc = map[j].bytecode_pc;
			f[nf + k].op_index = 0;
			f[nf + k].inline_depth = (uint16_t)k;
			f[nf + k].op_kind = code_map[j].op_kind;
		}
		if (whole)
			nf += d;
	}
	if (nf)
		jf_emit_inline_frames(zones, region, f, nf);
	free(f);
}

/* Direct jumps (jmp rel32, or jcc rel32) in [from, to) whose target is dest: a guard's
 * stencil reaches its exit stub through them (the relaxed tail call of
 * JUMP_TO_JUMP_TARGET). Writes at most max addresses; returns how many. */
static int jumps_to(const uint8_t *from, const uint8_t *to, const uint8_t *dest,
		    const uint8_t **out, int max)
{
	const uint8_t *p;
	int n = 0;

	for (p = from; p + 5 <= to && n < max; p++) {
		int32_t rel;

		if (p[0] == 0xE9) {
			memcpy(&rel, p + 1, 4);
			if (p + 5 + rel == dest)
				out[n++] = p;
		} else if (p[0] == 0x0F && (p[1] & 0xF0) == 0x80 && p + 6 <= to) {
			memcpy(&rel, p + 2, 4);
			if (p + 6 + rel == dest)
				out[n++] = p;
		}
	}
	return n;
}

static csh disasm;            /* capstone, x86-64, with instruction groups */

/* A guard's flags hold for all of its branches, and one uop's stencil has branches that
 * exit when taken and others that exit when they fall through: two guard ids per uop. */
#define GUARD_ID(index, on_fallthrough) ((uint64_t)(index) << 1 | (on_fallthrough))

/* The target of a direct jmp/jcc (rel8 or rel32) at insn, or 0. */
static uint64_t direct_target(const cs_insn *insn)
{
	const uint8_t *b = insn->bytes;
	int8_t r8;
	int32_t r32;

	if (insn->size == 2 && ((b[0] & 0xF0) == 0x70 || b[0] == 0xEB)) {
		memcpy(&r8, b + 1, 1);
		return insn->address + 2 + (int64_t)r8;
	}
	if (insn->size == 5 && b[0] == 0xE9) {
		memcpy(&r32, b + 1, 4);
		return insn->address + 5 + (int64_t)r32;
	}
	if (insn->size == 6 && b[0] == 0x0F && (b[1] & 0xF0) == 0x80) {
		memcpy(&r32, b + 2, 4);
		return insn->address + 6 + (int64_t)r32;
	}
	return 0;
}

static int is_jcc(const cs_insn *insn)
{
	return (insn->size == 2 && (insn->bytes[0] & 0xF0) == 0x70) ||
	       (insn->size == 6 && insn->bytes[0] == 0x0F && (insn->bytes[1] & 0xF0) == 0x80);
}

static int ends_block(const cs_insn *insn)
{
	return cs_insn_group(disasm, insn, CS_GRP_JUMP) || cs_insn_group(disasm, insn, CS_GRP_RET);
}

static int is_jmp(const cs_insn *insn)
{
	return (insn->size == 2 && insn->bytes[0] == 0xEB) ||
	       (insn->size == 5 && insn->bytes[0] == 0xE9);
}

/* The index of the first instruction of insn k's block: after the previous instruction
 * that ends a block, or the nearest one that a branch of the stencil targets. */
static size_t block_start(const cs_insn *insn, size_t n, size_t k)
{
	size_t b, j;

	for (b = k;; b--) {
		for (j = 0; j < n && direct_target(&insn[j]) != insn[b].address; j++)
			;
		if (j < n || b == 0 || ends_block(&insn[b - 1]))
			return b;
	}
}

#define MAX_EXIT_BLOCKS 32

/* GUARD records for uop i of executor id: the conditional branches that decide whether
 * its stencil [from, to) goes to its exit stub. The stencil reaches the stub through a
 * jump (JUMP_TO_JUMP_TARGET, relaxed to jmp rel32 by jit.c) that ends a block; in pystats
 * builds the block that counts the miss jumps or falls into it. Every block that leads
 * to the stub without a condition is an exit block; the deciding branches are the jccs
 * that jump to an exit block (exit when taken) or fall into one (exit on fall-through).
 * A jcc straight to the stub is a guard too. Returns the number of GUARD records. */
static int emit_guards(uint64_t id, uint32_t i, const uint8_t *from, const uint8_t *to,
		       const uint8_t *stub, uint32_t resume_pc)
{
	cs_insn *insn;
	size_t n, k, j, exits[MAX_EXIT_BLOCKS], nexits = 0, w;
	uint64_t stub_addr = (uint64_t)(uintptr_t)stub;
	int guards = 0;

	n = cs_disasm(disasm, from, (size_t)(to - from), (uint64_t)(uintptr_t)from, 0, &insn);
#define ADD_EXIT_BLOCK(b)                                                                  \
	do {                                                                               \
		size_t b_ = (b), q_;                                                       \
		for (q_ = 0; q_ < nexits && exits[q_] != b_; q_++)                          \
			;                                                                  \
		if (q_ == nexits && nexits < MAX_EXIT_BLOCKS)                              \
			exits[nexits++] = b_;                                              \
	} while (0)
	for (k = 0; k < n; k++) {
		if (direct_target(&insn[k]) != stub_addr)
			continue;
		if (is_jcc(&insn[k])) {
			jf_emit_guard_flags(zones, GUARD_ID(i, 0), id, insn[k].address, stub_addr,
					    resume_pc, 0);
			guards++;
		} else {
			ADD_EXIT_BLOCK(block_start(insn, n, k));
		}
	}
	for (w = 0; w < nexits; w++) {
		size_t x = exits[w];
		uint64_t start = insn[x].address;

		for (j = 0; j < n; j++) {
			if (direct_target(&insn[j]) != start)
				continue;
			if (is_jcc(&insn[j])) {
				jf_emit_guard_flags(zones, GUARD_ID(i, 0), id, insn[j].address,
						    stub_addr, resume_pc, 0);
				guards++;
			} else if (is_jmp(&insn[j])) {
				ADD_EXIT_BLOCK(block_start(insn, n, j));
			}
		}
		if (x > 0 && is_jcc(&insn[x - 1])) {
			jf_emit_guard_flags(zones, GUARD_ID(i, 1), id, insn[x - 1].address, stub_addr,
					    resume_pc, JF_GUARD_EXIT_ON_FALLTHROUGH);
			guards++;
		} else if (x > 0 && !ends_block(&insn[x - 1])) {
			ADD_EXIT_BLOCK(block_start(insn, n, x - 1));
		}
	}
#undef ADD_EXIT_BLOCK
	if (n)
		cs_free(insn, n);
	return guards;
}

/* Whether the executor's trace ends by jumping back to its top (a loop). */
static int loops(const _PyExecutorObject *e)
{
	uint32_t i;

	for (i = 0; i < e->code_size; i++) {
		int op = e->trace[i].opcode;

		if (op == _JUMP_TO_TOP)
			return 1;
		if (op == _EXIT_TRACE || op == _DYNAMIC_EXIT || op == _COLD_EXIT)
			return 0;
	}
	return 0;
}

static void describe(_PyExecutorObject *e, PyCodeObject *code, int64_t start_offset,
		     int follow_calls)
{
	uint32_t i, n = e->code_size;
	uint64_t off, data = trampoline_data, code_end, id;
	uint8_t *base = e->jit_code, *side = e->jit_side_entry;
	struct jf_pc_map_entry *map, *code_map;
	uint16_t *co, *depth, root = 0;
	uint32_t *caller;
	uint64_t *starts;
	struct jf_region r;
	struct described d;
	char name[512];
	int cold = n == 1 && e->trace[0].opcode == _COLD_EXIT;
	size_t page = 4096, total;

	if (!base || lookup(e))
		return;
	starts = malloc((n + 1) * sizeof(*starts));
	map = malloc((n + 1) * sizeof(*map));
	code_map = malloc((n + 1) * sizeof(*code_map));
	co = malloc((n + 1) * sizeof(*co));
	depth = malloc((n + 1) * sizeof(*depth));
	caller = malloc((n + 1) * sizeof(*caller));
	if (!starts || !map || !code_map || !co || !depth || !caller)
		goto out;
	off = trampoline_size;
	for (i = 0; i <= n; i++) {
		int op = i < n ? e->trace[i].opcode : _FATAL_ERROR;

		if (!have_size[op]) {
			unknown_uops++;
			fprintf(stderr, "jitflow: executor at %p: uop %d (%s) has no stencil in "
				"jit_stencils.h; not described\n", (void *)e, op,
				_PyOpcode_uop_name[op] ? _PyOpcode_uop_name[op] : "?");
			goto out;
		}
		starts[i] = off;
		off += code_size_of[op];
		data += data_size_of[op];
	}
	code_end = off;
	/* jit.c rounds code + data up to whole pages: the check that the table is the one
	 * this interpreter was built with. */
	total = (size_t)(code_end + data);
	total += page - (total & (page - 1));
	if (total != e->jit_size || side != base + trampoline_size) {
		size_mismatches++;
		fprintf(stderr, "jitflow: executor at %p: %zu bytes by jit_stencils.h, %zu by "
			"CPython; not described (stencil table of another build?)\n", (void *)e,
			total, e->jit_size);
		goto out;
	}
	id = next_id++;
	if (cold)
		snprintf(name, sizeof(name), "cold exit %d", e->trace[0].oparg);
	else if (code)
		snprintf(name, sizeof(name), "executor %" PRIu64 " %s (%s:%d) @%" PRId64, id,
			 PyUnicode_AsUTF8(code->co_qualname), PyUnicode_AsUTF8(code->co_filename),
			 PyCode_Addr2Line(code, (int)start_offset), start_offset);
	else
		snprintf(name, sizeof(name), "executor %" PRIu64, id);
	if (code) {
		frames_of(e, code, follow_calls, co, depth, caller);
		root = co[0];
	}
	if (PyErr_Occurred())
		PyErr_Clear();

	memset(&r, 0, sizeof(r));
	r.name = "trampoline";
	r.addr = (uint64_t)(uintptr_t)base;
	r.code = base;
	r.size = trampoline_size;
	r.kind = JF_REGION_TRAMPOLINE;
	if (trampoline_size)
		jf_emit_region_load(zones, &r);

	r.name = name;
	r.addr = (uint64_t)(uintptr_t)side;
	r.code = side;
	r.size = code_end - trampoline_size;
	r.kind = cold ? JF_REGION_TRAMPOLINE : JF_REGION_TRACE;
	r.trace_id = id;
	r.code_object = root;
	jf_emit_region_load(zones, &r);
	/* _JUMP_TO_TOP jumps to the second uop's stencil (jit.c's _JIT_TOP), past
	 * _START_EXECUTOR: there the loop's iterations begin */
	if (n > 1 && loops(e))
		jf_emit_event(zones, JF_EVENT_LOOP_HEADER, (uint64_t)(uintptr_t)(base + starts[1]));

	for (i = 0; i <= n; i++) {
		int64_t pc = i < n ? bytecode_offset(e, i) : -1;
		/* a uop that does not say takes the previous one's offset, in the same frame */
		int same_frame = code && i && co[i] == co[i - 1] && depth[i] == depth[i - 1];

		map[i].code_offset = (uint32_t)(starts[i] - trampoline_size);
		map[i].bytecode_pc = pc >= 0 ? (uint32_t)pc : i && (!code || same_frame) ?
				     map[i - 1].bytecode_pc : 0;
		map[i].op_index = i;
		map[i].inline_depth = code ? depth[i] : 0;
		map[i].op_kind = (uint16_t)(i < n ? e->trace[i].opcode : _FATAL_ERROR);
		code_map[i] = map[i];
		code_map[i].op_kind = pc >= 0 || same_frame ? (code ? co[i] : 0) : 0;
	}
	jf_emit_pc_map(zones, r.addr, map, n + 1);
	if (code) {
		jf_emit_pc_map_flags(zones, r.addr, code_map, n + 1, JF_PC_MAP_CODE_OBJECTS);
		emit_inline_frames(r.addr, map, code_map, caller, n + 1);
	}

	for (i = 0; i < n; i++) {
		const _PyUOpInstruction *u = &e->trace[i];
		/* zero-size stencils share their address with the next one */
		if (code_size_of[u->opcode])
			jf_emit_point(zones, id, (uint64_t)(uintptr_t)(base + starts[i]),
				      STENCIL_POINT(u->opcode, i), JF_POINT_LABEL);
		if (u->format == UOP_FORMAT_JUMP && u->jump_target && u->jump_target < n &&
		    (_PyUop_Flags[u->opcode] & (HAS_EXIT_FLAG | HAS_DEOPT_FLAG))) {
			const uint8_t *found[8];
			int k, nf = jumps_to(base + starts[i], base + starts[i + 1],
					     base + starts[u->jump_target], found, 8);

			for (k = 0; k < nf; k++)
				jf_emit_point(zones, id, (uint64_t)(uintptr_t)found[k],
					      EXIT_POINT(u->opcode, i, k), JF_POINT_LABEL);
			if (!nf)
				fprintf(stderr, "jitflow: executor %" PRIu64 ": no jump from uop %u "
					"(%s) to its exit stub\n", id, i, _PyOpcode_uop_name[u->opcode]);
			else if (!emit_guards(id, i, base + starts[i], base + starts[i + 1],
					      base + starts[u->jump_target],
					      map[u->jump_target].bytecode_pc))
				fprintf(stderr, "jitflow: executor %" PRIu64 ": no branch decides "
					"uop %u (%s)\n", id, i, _PyOpcode_uop_name[u->opcode]);
		}
	}

	d.key = e;
	d.id = id;
	d.addr = r.addr;
	d.size = r.size;
	d.tramp = trampoline_size ? (uint64_t)(uintptr_t)base : 0;
	remember(&d);
out:
	free(starts);
	free(map);
	free(code_map);
	free(co);
	free(depth);
	free(caller);
}

/* Cold exits [cold_described, upto): CPython made all of them when the optimizer was
 * first set; exits[i] of a new executor points at cold exit i. */
static void describe_cold_exits(const _PyExecutorObject *e)
{
	uint32_t i;

	if (!e->exit_count)
		return;
	if (!cold_base)
		cold_base = e->exits[0].executor;
	for (i = cold_described; i < e->exit_count; i++) {
		_PyExecutorObject *c = (_PyExecutorObject *)&cold_base[i];

		if (e->exits[i].executor == c && c->code_size == 1 &&
		    c->trace[0].opcode == _COLD_EXIT && c->trace[0].oparg == i)
			describe(c, NULL, 0, 0);
		else
			fprintf(stderr, "jitflow: cold exit %u not where expected\n", i);
	}
	if (e->exit_count > cold_described)
		cold_described = e->exit_count;
}

static void executor_dealloc(PyObject *self)
{
	struct described *d = lookup(self);

	if (d) {
		begin();
		if (d->tramp)
			jf_emit_region_free(zones, d->tramp, trampoline_size);
		jf_emit_region_free(zones, d->addr, d->size);
		forget(d);
		end();
		written_now();
	}
	original_dealloc(self);
}

static void hook_type(_PyExecutorObject *e)
{
	if (executor_type || Py_TYPE(e)->tp_dealloc == executor_dealloc)
		return;
	executor_type = Py_TYPE(e);
	original_dealloc = executor_type->tp_dealloc;
	executor_type->tp_dealloc = executor_dealloc;
}

static int wrapped_optimize(_PyOptimizerObject *self, struct _PyInterpreterFrame *frame,
			    _Py_CODEUNIT *instr, _PyExecutorObject **exec_ptr, int curr_stackentries)
{
	int res = inner->optimize(inner, frame, instr, exec_ptr, curr_stackentries);

	if (res > 0 && *exec_ptr) {
		PyCodeObject *code = _PyFrame_GetCode(frame);

		begin();
		hook_type(*exec_ptr);
		describe_cold_exits(*exec_ptr);
		describe(*exec_ptr, code, (int64_t)(instr - _PyCode_CODE(code)) * 2, 1);
		end();
		written_now();
	}
	return res;
}

static void wrapper_dealloc(PyObject *self)
{
	PyObject_Free(self);
}

static PyTypeObject WrapperType = {
	PyVarObject_HEAD_INIT(&PyType_Type, 0)
	.tp_name = "_jitflow_cpython.optimizer",
	.tp_basicsize = sizeof(_PyOptimizerObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
	.tp_dealloc = wrapper_dealloc,
};

static int load_table(const char *path)
{
	struct cpython_stencil_table t;
	char err[256];
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	long len;
	int op;

	if (!f) {
		PyErr_Format(PyExc_OSError, "%s: cannot open", path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    !(text = malloc((size_t)len + 1)) || fread(text, 1, (size_t)len, f) != (size_t)len) {
		fclose(f);
		free(text);
		PyErr_Format(PyExc_OSError, "%s: cannot read", path);
		return -1;
	}
	fclose(f);
	if (cpython_stencil_table_parse(text, (size_t)len, &t, err, sizeof(err)) < 0) {
		free(text);
		PyErr_Format(PyExc_ValueError, "%s: %s", path, err);
		return -1;
	}
	free(text);
	trampoline_size = t.trampoline.code_size;
	trampoline_data = t.trampoline.data_size;
	for (op = 0; op <= MAX_UOP_ID; op++) {
		const struct cpython_stencil *s;

		if (!_PyOpcode_uop_name[op] || !(s = cpython_stencil_find(&t, _PyOpcode_uop_name[op])))
			continue;
		have_size[op] = 1;
		code_size_of[op] = s->code_size;
		data_size_of[op] = s->data_size;
	}
	cpython_stencil_table_free(&t);
	if (!have_size[_FATAL_ERROR] || !have_size[_START_EXECUTOR] || !have_size[_COLD_EXIT]) {
		PyErr_Format(PyExc_ValueError, "%s: no stencil for _FATAL_ERROR, _START_EXECUTOR "
			     "or _COLD_EXIT", path);
		return -1;
	}
	return 0;
}

/* Wraps the optimizer CPython has installed; describes the executors that exist. */
static int wrap_optimizer(void)
{
	_PyOptimizerObject *wrapper;
	PyInterpreterState *interp;
	_PyExecutorObject *e;
	int rc;

	inner = _Py_GetOptimizer();
	if (!inner)
		return 0; /* the JIT is off (PYTHON_JIT=0) */
	wrapper = PyObject_New(_PyOptimizerObject, &WrapperType);
	if (!wrapper)
		return -1;
	wrapper->optimize = wrapped_optimize;
	begin();
	interp = PyInterpreterState_Get();
	for (e = interp->executor_list_head; e; e = e->vm_data.links.next) {
		hook_type(e);
		describe_cold_exits(e);
		/* made before the module started: the functions their operands name may be
		 * gone, so inlined frames stay unnamed */
		describe(e, e->vm_data.code, e->vm_data.code ? (int64_t)e->vm_data.index * 2 : 0, 0);
	}
	rc = _Py_SetTier2Optimizer(wrapper);
	end();
	Py_DECREF(wrapper);
	return rc;
}

/* CPython installs its optimizer after `site` (and so this module) is imported, and
 * before the program runs: the audit event that starts the program (cpython.run_file,
 * run_module, run_command, run_stdin, ...) is the first moment the optimizer is there and
 * no executor exists yet. */
static int on_audit(const char *event, PyObject *args, void *data)
{
	static int wrapped;

	(void)args;
	(void)data;
	if (wrapped || strncmp(event, "cpython.run_", 12))
		return 0;
	wrapped = 1;
	if (wrap_optimizer() < 0) {
		fprintf(stderr, "jitflow: cannot wrap CPython's optimizer; JIT code not described\n");
		PyErr_Clear();
	}
	return 0;
}

/* The tier-1 interpreter's eval loop, from its dynamic symbol (address and size), so that
 * reports tell it apart from the rest of CPython's native code. */
static void describe_interpreter(void)
{
	void *f = (void *)&_PyEval_EvalFrameDefault;
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (dladdr1(f, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size)
		jf_emit_interp_range(zones, JF_INTERP_EVAL_LOOP, (uint64_t)(uintptr_t)f,
				     (uint64_t)(uintptr_t)f + sym->st_size, "_PyEval_EvalFrameDefault");
	else
		fprintf(stderr, "jitflow: no size for _PyEval_EvalFrameDefault; the interpreter "
			"counts as native code\n");
}

/* start(jit_stencils_h_path): opens the emitter and wraps the optimizer, now or when
 * the program starts. */
static PyObject *start(PyObject *mod, PyObject *args)
{
	const char *path;
	_PyOptimizerObject *current;
	int op;

	if (!PyArg_ParseTuple(args, "s", &path))
		return NULL;
	if (zones)
		Py_RETURN_FALSE;
	if (load_table(path) < 0)
		return NULL;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &disasm) != CS_ERR_OK ||
	    cs_option(disasm, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK)
		return PyErr_Format(PyExc_OSError, "capstone cannot disassemble x86-64");
	zones = jf_emitter_open(NULL, 0);
	if (!zones)
		return PyErr_Format(PyExc_OSError, "cannot open the jitflow zone file");
	jf_emit_event(zones, JF_EVENT_RUNTIME, JF_RUNTIME_CPYTHON);
	begin();
	describe_interpreter();
	for (op = 0; op <= MAX_UOP_ID; op++)
		if (have_size[op])
			jf_emit_op_name(zones, (uint16_t)op, _PyOpcode_uop_name[op]);
	end();
	written_now();
	current = _Py_GetOptimizer();
	if (current) {
		Py_DECREF(current);
		if (wrap_optimizer() < 0)
			return NULL;
	} else if (PySys_AddAuditHook(on_audit, NULL) < 0) {
		return NULL;
	}
	Py_RETURN_TRUE;
}

/* counts(): (executors described, stencil-size mismatches, uops without a stencil, code
 * objects past the 65535 the pc maps can name). */
static PyObject *counts(PyObject *mod, PyObject *noargs)
{
	return Py_BuildValue("(KKKK)", (unsigned long long)(next_id - 1),
			     (unsigned long long)size_mismatches, (unsigned long long)unknown_uops,
			     (unsigned long long)unnamed_code_objects);
}

static PyMethodDef methods[] = {
	{ "start", start, METH_VARARGS, "start(jit_stencils_h): describe executors to jitflow" },
	{ "counts", counts, METH_NOARGS,
	  "(described, size mismatches, unknown uops, unnamed code objects)" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "_jitflow_cpython", NULL, -1, methods,
	NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__jitflow_cpython(void)
{
	if (PyType_Ready(&WrapperType) < 0)
		return NULL;
	return PyModule_Create(&module);
}
