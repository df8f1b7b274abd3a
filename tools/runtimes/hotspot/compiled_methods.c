/* CompiledMethodLoad / CompiledMethodUnload: every nmethod as a function region.
 *
 * The event gives the code, its size, the method and the inline stacks per pc; HotSpot's
 * own nmethod (found from the code address, through gHotSpotVMStructs) gives what the
 * event lacks: compile id, compile level (0 native wrapper, 1-3 C1, 4 C2) and the OSR
 * entry bci. The region's trace id is the compile id, its name starts with them
 * ("nmethod 12 L4 osr@34 Hello.hot()V"), its code object is the method, and a pc map gives
 * the innermost frame's method and bci (and the inline depth) of each range of code the
 * event's debug info covers, so that reports count bytecode ranges per nmethod and method,
 * the methods compiled inline included; the frames around an inlined method's code
 * follow (INLINE_FRAMES), so that call stacks show whole inline chains. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "nmethod_header.h"
#include "jitflow/zone_format.h"

const jvmtiCompiledMethodLoadInlineRecord *jf_hs_inline_record(const void *compile_info)
{
	const jvmtiCompiledMethodLoadRecordHeader *h = compile_info;

	for (; h; h = h->next) {
		if (h->kind == JVMTI_CMLR_INLINE_INFO)
			return (const jvmtiCompiledMethodLoadInlineRecord *)h;
	}
	return NULL;
}

/* A range of code and the inline stack HotSpot gives for it (NULL: none). */
struct pc_range {
	struct jf_pc_map_entry e;
	const PCStackInfo *stack;
};

static int by_offset(const void *a, const void *b)
{
	const struct pc_range *x = a, *y = b;

	return x->e.code_offset < y->e.code_offset ? -1 : x->e.code_offset > y->e.code_offset;
}

/* The frames around each range's innermost one (an INLINE_FRAMES record): its callers in
 * the nmethod, outermost (the nmethod's own method) first, each with the bci of its call. */
static void emit_inline_frames(jvmtiEnv *jvmti, uint64_t start, const struct pc_range *r,
			       uint32_t n)
{
	struct jf_pc_map_entry *f;
	uint32_t i, nf = 0;
	jint d;

	for (i = 0; i < n; i++)
		nf += r[i].e.inline_depth;
	if (!nf || !(f = calloc(nf, sizeof(*f))))
		return;
	for (nf = 0, i = 0; i < n; i++) {
		const PCStackInfo *p = r[i].stack;

		for (d = 0; d < (jint)r[i].e.inline_depth; d++, nf++) {
			jint k = p->numstackframes - 1 - d; /* methods[0] is the innermost */

			f[nf].code_offset = r[i].e.code_offset;
			f[nf].bytecode_pc = (uint32_t)p->bcis[k];
			f[nf].inline_depth = (uint16_t)d;
			f[nf].op_kind = jf_hs_method_id(jvmti, p->methods[k]);
		}
	}
	jf_emit_inline_frames(jf_hs_emitter, start, f, nf);
	free(f);
}

/* The inline stacks as a pc map whose kinds are the methods (method_ids.c): per range of
 * code, the innermost frame's method and bci, and the inline depth, counted per nmethod
 * (JF_PC_MAP_PER_REGION), and the frames around it (emit_inline_frames). A pc of
 * HotSpot's debug info ends its frame's code (a call's is its return address; those
 * recorded between safepoints follow their bytecode's code), so each entry here starts
 * at the previous pc, and one of kind 0 (no method says) at the last pc, where the stubs
 * and exception handlers follow. A bci below 0 (HotSpot's "before the first bytecode"
 * markers) is kept as its 32-bit two's complement. */
static void emit_pc_map(jvmtiEnv *jvmti, uint64_t start, uint64_t size, const void *compile_info)
{
	const jvmtiCompiledMethodLoadInlineRecord *rec = jf_hs_inline_record(compile_info);
	struct pc_range *r;
	struct jf_pc_map_entry *e;
	jint i;
	uint32_t n = 0, w, k, from;

	if (!rec || rec->numpcs <= 0 || !(r = calloc((size_t)rec->numpcs + 1, sizeof(*r))))
		return;
	if (!(e = calloc((size_t)rec->numpcs + 1, sizeof(*e)))) {
		free(r);
		return;
	}
	for (i = 0; i < rec->numpcs; i++) {
		const PCStackInfo *p = &rec->pcinfo[i];
		uint64_t pc = (uint64_t)(uintptr_t)p->pc;

		if (pc < start || pc - start > size || p->numstackframes <= 0)
			continue;
		r[n].e.code_offset = (uint32_t)(pc - start);
		r[n].e.bytecode_pc = (uint32_t)p->bcis[0];
		r[n].e.inline_depth = (uint16_t)(p->numstackframes - 1);
		r[n].e.op_kind = jf_hs_method_id(jvmti, p->methods[0]);
		r[n].stack = p;
		n++;
	}
	qsort(r, n, sizeof(*r), by_offset);
	/* One entry per pc: the last one HotSpot gave for it. */
	for (w = 0, k = 0; k < n; k++) {
		if (w && r[w - 1].e.code_offset == r[k].e.code_offset)
			w--;
		r[w++] = r[k];
	}
	n = w;
	/* From ends to starts; a frame whose code is empty (its pc equals the one before)
	 * covers nothing and is left out. */
	for (w = 0, k = 0, from = 0; k < n; k++) {
		uint32_t end = r[k].e.code_offset;

		if (end == from)
			continue;
		r[w] = r[k];
		r[w++].e.code_offset = from;
		from = end;
	}
	if (n && from < size) {
		memset(&r[w], 0, sizeof(r[w]));
		r[w++].e.code_offset = from;
	}
	for (k = 0; k < w; k++)
		e[k] = r[k].e;
	if (w) {
		jf_emit_pc_map_flags(jf_hs_emitter, start, e, w,
				     JF_PC_MAP_CODE_OBJECTS | JF_PC_MAP_PER_REGION);
		emit_inline_frames(jvmti, start, r, w);
	}
	free(e);
	free(r);
}

void JNICALL jf_hs_compiled_load(jvmtiEnv *jvmti, jmethodID method, jint code_size,
				 const void *code_addr, jint map_length,
				 const jvmtiAddrLocationMap *map, const void *compile_info)
{
	char name[512], region_name[600], file[256], osr[32] = "";
	struct jf_nmethod_facts nm;
	struct jf_region r;
	uint32_t line;

	(void)map_length;
	(void)map;
	if (!code_addr || code_size <= 0)
		return;
	jf_hs_instrumentation_begin();
	jf_hs_method_name(jvmti, method, name, sizeof(name), file, sizeof(file), &line);
	if (jf_hs_nmethod_facts(code_addr, &nm) == 0) {
		if (nm.osr_bci >= 0)
			snprintf(osr, sizeof(osr), " osr@%d", nm.osr_bci);
		snprintf(region_name, sizeof(region_name), "nmethod %d L%d%s %s", nm.compile_id,
			 nm.level, osr, name);
	} else {
		nm.compile_id = 0;
		snprintf(region_name, sizeof(region_name), "nmethod %s", name);
	}
	memset(&r, 0, sizeof(r));
	r.name = region_name;
	r.addr = (uint64_t)(uintptr_t)code_addr;
	r.code = code_addr;
	r.size = (uint64_t)code_size;
	r.kind = JF_REGION_FUNCTION;
	r.trace_id = nm.compile_id > 0 ? (uint64_t)nm.compile_id : 0;
	r.code_object = jf_hs_method_id(jvmti, method);
	if (jf_hs_code_add(r.addr, r.size) == 1 && jf_emit_region_load(jf_hs_emitter, &r)) {
		emit_pc_map(jvmti, r.addr, r.size, compile_info);
		if (r.trace_id) {
			jf_hs_emit_trap_sites(jvmti, r.trace_id, r.addr, r.size, code_addr, compile_info);
			jf_hs_emit_nmethod_points(&nm, r.addr, r.size);
		}
		/* The Service Thread's buffer would reach the file (and a recording, which
		 * dates the records by that write) only when full, nmethods later. */
		jf_emitter_flush(jf_hs_emitter);
	}
	jf_hs_instrumentation_end();
}

void JNICALL jf_hs_compiled_unload(jvmtiEnv *jvmti, jmethodID method, const void *code_addr)
{
	uint64_t size;

	(void)jvmti;
	(void)method;
	jf_hs_instrumentation_begin();
	size = jf_hs_code_remove((uint64_t)(uintptr_t)code_addr);
	if (size)
		jf_emit_region_free(jf_hs_emitter, (uint64_t)(uintptr_t)code_addr, size);
	jf_hs_instrumentation_end();
}
