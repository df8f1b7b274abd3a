/* The live code model: which jitted region, guard and pc map is where, kept up to date by
 * zone records in the order they took effect; and the static native ranges. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "runtime.h"
#include "jitflow/emitter.h"

static void free_pc_maps(struct live_region *r)
{
	free(r->op_map.entries);
	free(r->code_object_map.entries);
}

void jf_zone_model_free(struct jf_zone_model *zm)
{
	size_t i;

	for (i = 0; i < zm->nlive; i++)
		free_pc_maps(&zm->live[i]);
	free(zm->live);
	free(zm->natives);
	free(zm->op_names);
	free(zm->code_objects);
	free(zm->points);
	free(zm->thread_names);
	free(zm->inline_frames);
	jf_index_map_free(&zm->inline_frame_by_key);
	jf_index_map_free(&zm->guard_by_branch);
	memset(zm, 0, sizeof(*zm));
}

/* Index of the first live region ending above addr. */
static size_t first_ending_after(const struct jf_zone_model *zm, uint64_t addr)
{
	size_t lo = 0, hi = zm->nlive;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (zm->live[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct live_region *jf_zone_model_region_at(struct jf_zone_model *zm, uint64_t addr)
{
	size_t i = zm->last_hit;

	if (i < zm->nlive && zm->live[i].start <= addr && addr < zm->live[i].end)
		return &zm->live[i];
	i = first_ending_after(zm, addr);
	if (i < zm->nlive && zm->live[i].start <= addr) {
		zm->last_hit = i;
		return &zm->live[i];
	}
	return NULL;
}

/* Remove every live region overlapping [start, end). */
static void remove_range(struct jf_zone_model *zm, uint64_t start, uint64_t end)
{
	size_t i = first_ending_after(zm, start), j = i, k;

	while (j < zm->nlive && zm->live[j].start < end)
		j++;
	if (i == j)
		return; /* nothing overlaps (the table may still be empty, NULL) */
	for (k = i; k < j; k++)
		free_pc_maps(&zm->live[k]);
	memmove(&zm->live[i], &zm->live[j], (zm->nlive - j) * sizeof(*zm->live));
	zm->nlive -= j - i;
	zm->last_hit = 0;
}

static struct live_region *insert(struct jf_zone_model *zm, uint64_t start, uint64_t end)
{
	size_t i;

	remove_range(zm, start, end);
	if (jf_grow((void **)&zm->live, &zm->live_cap, zm->nlive, sizeof(*zm->live)) < 0)
		return NULL;
	i = first_ending_after(zm, start);
	memmove(&zm->live[i + 1], &zm->live[i], (zm->nlive - i) * sizeof(*zm->live));
	memset(&zm->live[i], 0, sizeof(zm->live[i]));
	zm->live[i].start = start;
	zm->live[i].end = end;
	zm->live[i].trace = -1;
	zm->live[i].region_key = start;
	zm->live[i].header = start;
	zm->nlive++;
	return &zm->live[i];
}

static enum jf_code_class class_of_kind(uint32_t kind)
{
	switch (kind) {
	case JF_REGION_INTERPRETER: return JF_CLASS_INTERPRETER;
	case JF_REGION_TRACE: case JF_REGION_FUNCTION: return JF_CLASS_TRACE;
	case JF_REGION_BRIDGE: return JF_CLASS_BRIDGE;
	case JF_REGION_EXIT_STUB: return JF_CLASS_EXIT_STUB;
	case JF_REGION_TRAMPOLINE: return JF_CLASS_TRAMPOLINE;
	case JF_REGION_INLINE_CACHE: return JF_CLASS_INLINE_CACHE;
	case JF_REGION_STENCIL: return JF_CLASS_STENCIL;
	default: return JF_CLASS_JITTED;
	}
}

static int load_code(struct jf_analysis *a, uint64_t addr, uint64_t size, const char *name)
{
	struct live_region *r;
	int32_t region;

	if (!size || addr + size < addr)
		return 0;
	region = jf_region_index(a, name && *name ? name : "(unnamed)", addr);
	r = insert(&a->zm, addr, addr + size);
	if (!r || region < 0)
		return -1;
	r->cls = JF_CLASS_JITTED;
	r->region = (uint32_t)region;
	a->regions[region].size = size;
	return 0;
}

/* A REGION_LOAD says what the code that its CODE_LOAD brought is. */
static int describe_region(struct jf_analysis *a, const struct jf_zone_record *rec)
{
	struct live_region *r = jf_zone_model_region_at(&a->zm, rec->u.region_load.addr);
	uint32_t kind = rec->u.region_load.kind;

	if (!r || r->start != rec->u.region_load.addr) {
		if (load_code(a, rec->u.region_load.addr, rec->u.region_load.size,
			      rec->u.region_load.name) < 0)
			return -1;
		r = jf_zone_model_region_at(&a->zm, rec->u.region_load.addr);
		if (!r)
			return 0;
	}
	r->kind = kind;
	r->cls = class_of_kind(kind);
	r->group = jf_runtime_region_group(a->runtime, kind, rec->u.region_load.name);
	a->regions[r->region].kind = kind;
	if (rec->u.region_load.trace_id)
		r->region_key = rec->u.region_load.trace_id;
	if ((kind == JF_REGION_TRACE || kind == JF_REGION_BRIDGE || kind == JF_REGION_FUNCTION) &&
	    rec->u.region_load.trace_id) {
		int32_t t = jf_trace_index(a, rec->u.region_load.trace_id);
		struct jf_trace_result *tr;

		if (t < 0)
			return -1;
		tr = &a->traces[t];
		r->trace = t;
		a->last_loaded_trace = t;
		tr->kind = kind;
		tr->parent_trace = rec->u.region_load.parent_trace;
		tr->parent_guard = rec->u.region_load.parent_guard;
		tr->code_object = rec->u.region_load.code_object;
		if (rec->u.region_load.name)
			snprintf(tr->name, sizeof(tr->name), "%s", rec->u.region_load.name);
		if (kind == JF_REGION_BRIDGE && rec->u.region_load.parent_trace) {
			int32_t g = jf_guard_index(a, rec->u.region_load.parent_trace,
						   rec->u.region_load.parent_guard);

			if (g < 0)
				return -1;
			if (!a->guards[g].has_bridge) {
				a->guards[g].has_bridge = 1;
				a->guards[g].bridge_id = rec->u.region_load.trace_id;
				a->guards[g].exits_before_bridge = a->guards[g].exits;
				a->guards[g].bridge_before_flow = a->blocks == 0;
			}
		}
	}
	return 0;
}

static int move_region(struct jf_analysis *a, uint64_t from, uint64_t to, uint64_t size)
{
	struct live_region *r = jf_zone_model_region_at(&a->zm, from), copy;

	if (!r || r->start != from)
		return 0;
	copy = *r;
	/* ownership of the pc maps moves with the copy */
	memset(&r->op_map, 0, sizeof(r->op_map));
	memset(&r->code_object_map, 0, sizeof(r->code_object_map));
	remove_range(&a->zm, from, from + (copy.end - copy.start));
	r = insert(&a->zm, to, to + size);
	if (!r) {
		free_pc_maps(&copy);
		return -1;
	}
	copy.end = to + (copy.end - copy.start);
	copy.start = to;
	if (copy.region_key == from)
		copy.region_key = to;
	copy.header = to + (copy.header - from);
	*r = copy;
	return 0;
}

static int set_guard(struct jf_analysis *a, const struct jf_zone_record *rec)
{
	int32_t g = jf_guard_index(a, rec->u.guard.trace_id, rec->u.guard.guard_id);

	if (g < 0)
		return -1;
	a->guards[g].trace_id = rec->u.guard.trace_id;
	a->guards[g].branch_addr = rec->u.guard.branch_addr;
	a->guards[g].stub_addr = rec->u.guard.stub_addr;
	a->guards[g].resume_pc = rec->u.guard.resume_pc;
	if (rec->u.guard.op_kind) {
		const char *kind = jf_zone_model_op_name(&a->zm, rec->u.guard.op_kind);

		if (kind)
			snprintf(a->guards[g].kind, sizeof(a->guards[g].kind), "%s", kind);
	}
	a->guards[g].flags = rec->u.guard.flags;
	return jf_index_map_put(&a->zm.guard_by_branch, rec->u.guard.branch_addr, (uint32_t)g);
}

static int by_offset(const void *x, const void *y)
{
	const struct pc_entry *p = x, *q = y;

	return p->code_offset < q->code_offset ? -1 : p->code_offset > q->code_offset;
}

/* A region keeps one pc map of each kind, ops and code objects: a map replaces the
 * region's earlier map of its kind and leaves the other. */
static int set_pc_map(struct jf_analysis *a, const struct jf_zone_reader *reader,
		      const struct jf_zone_record *rec)
{
	struct live_region *r = jf_zone_model_region_at(&a->zm, rec->u.pc_map.region_addr);
	uint32_t i, n = rec->u.pc_map.count;
	int code_objects = (rec->u.pc_map.flags & JF_PC_MAP_CODE_OBJECTS) != 0;
	struct pc_map *map;
	struct pc_entry *pcs;

	if (!r || r->start != rec->u.pc_map.region_addr || !n)
		return 0;
	pcs = calloc(n, sizeof(*pcs));
	if (!pcs)
		return -1;
	for (i = 0; i < n; i++) {
		struct jf_zone_pc_entry e;

		jf_zone_pc_map_entry(reader, rec, i, &e);
		pcs[i].code_offset = e.code_offset;
		pcs[i].bytecode_pc = e.bytecode_pc;
		pcs[i].op_kind = e.op_kind;
	}
	jf_sort_rows(pcs, n, sizeof(*pcs), by_offset);
	/* A bytecode range runs to the next entry's pc when that is further on (in the same
	 * code object, when the kinds are code objects). */
	for (i = 0; i < n; i++) {
		int same = i + 1 < n && (!code_objects || pcs[i + 1].op_kind == pcs[i].op_kind);
		uint32_t next = same ? pcs[i + 1].bytecode_pc : pcs[i].bytecode_pc;

		pcs[i].bytecode_next = next > pcs[i].bytecode_pc ? next : pcs[i].bytecode_pc;
	}
	map = code_objects ? &r->code_object_map : &r->op_map;
	free(map->entries);
	map->entries = pcs;
	map->n = n;
	if (code_objects)
		r->pc_per_region = (rec->u.pc_map.flags & JF_PC_MAP_PER_REGION) != 0;
	a->has_pc_maps = 1;
	return 0;
}

const struct jf_code_object_name *jf_zone_model_code_object(const struct jf_zone_model *zm,
							     uint64_t id)
{
	size_t i;

	for (i = 0; i < zm->ncode_objects; i++)
		if (zm->code_objects[i].id == id)
			return &zm->code_objects[i];
	return NULL;
}

int jf_zone_model_set_code_object(struct jf_zone_model *zm, const struct jf_code_object_name *co)
{
	struct jf_code_object_name *known =
		(struct jf_code_object_name *)jf_zone_model_code_object(zm, co->id);

	if (!known) {
		if (jf_grow((void **)&zm->code_objects, &zm->code_objects_cap, zm->ncode_objects,
			    sizeof(*zm->code_objects)) < 0)
			return -1;
		known = &zm->code_objects[zm->ncode_objects++];
	}
	*known = *co;
	return 0;
}

/* Whether name is one of the " / "-separated names in names. */
static int names_include(const char *names, const char *name)
{
	size_t n = strlen(name);
	const char *at;

	for (at = names; (at = strstr(at, name)) != NULL; at++)
		if ((at == names || !strncmp(at - 3, " / ", 3)) && (!at[n] || !strncmp(at + n, " / ", 3)))
			return 1;
	return 0;
}

const char *jf_zone_model_thread_name(const struct jf_zone_model *zm, int32_t tid)
{
	size_t i;

	for (i = 0; i < zm->nthread_names; i++)
		if (zm->thread_names[i].tid == tid)
			return zm->thread_names[i].name;
	return NULL;
}

/* An OS thread may run under several names in turn (HotSpot's main thread ends as
 * "DestroyJavaVM"): each new one is added after " / ", as far as the name's room goes. */
int jf_zone_model_set_thread_name(struct jf_zone_model *zm, int32_t tid, const char *name)
{
	struct jf_thread_name *t;
	size_t i, used;

	if (!name || !*name)
		return 0;
	for (i = 0; i < zm->nthread_names && zm->thread_names[i].tid != tid; i++)
		;
	if (i == zm->nthread_names) {
		if (jf_grow((void **)&zm->thread_names, &zm->thread_names_cap, zm->nthread_names,
			    sizeof(*zm->thread_names)) < 0)
			return -1;
		zm->nthread_names++;
		zm->thread_names[i].tid = tid;
		zm->thread_names[i].name[0] = '\0';
	}
	t = &zm->thread_names[i];
	if (names_include(t->name, name))
		return 0;
	used = strlen(t->name);
	snprintf(t->name + used, sizeof(t->name) - used, "%s%s", used ? " / " : "", name);
	return 0;
}

static int set_code_object(struct jf_zone_model *zm, const struct jf_zone_record *rec)
{
	struct jf_code_object_name co = { rec->u.code_object.id, rec->u.code_object.line, "", "" };

	snprintf(co.name, sizeof(co.name), "%s", rec->u.code_object.name ? rec->u.code_object.name : "");
	snprintf(co.file, sizeof(co.file), "%s", rec->u.code_object.file ? rec->u.code_object.file : "");
	return jf_zone_model_set_code_object(zm, &co);
}

static int set_op_name(struct jf_zone_model *zm, uint16_t kind, const char *name)
{
	size_t i;

	for (i = 0; i < zm->nop_names && zm->op_names[i].kind != kind; i++)
		;
	if (i == zm->nop_names) {
		if (jf_grow((void **)&zm->op_names, &zm->op_names_cap, zm->nop_names,
			    sizeof(*zm->op_names)) < 0)
			return -1;
		zm->nop_names++;
	}
	zm->op_names[i].kind = kind;
	snprintf(zm->op_names[i].name, sizeof(zm->op_names[i].name), "%s", name ? name : "");
	return 0;
}

const char *jf_zone_model_op_name(struct jf_zone_model *zm, uint16_t kind)
{
	size_t i;

	for (i = 0; i < zm->nop_names; i++) {
		if (zm->op_names[i].kind == kind)
			return zm->op_names[i].name;
	}
	return NULL;
}

int jf_zone_model_add_native(struct jf_zone_model *zm, uint64_t start, uint64_t end,
			     enum jf_code_class cls)
{
	if (end <= start)
		return 0;
	if (jf_grow((void **)&zm->natives, &zm->natives_cap, zm->nnatives, sizeof(*zm->natives)) < 0)
		return -1;
	zm->natives[zm->nnatives].start = start;
	zm->natives[zm->nnatives].end = end;
	zm->natives[zm->nnatives].cls = cls;
	zm->nnatives++;
	zm->natives_sorted = 0;
	memset(zm->native_memo, 0, sizeof(zm->native_memo));
	return 0;
}

/* Narrower ranges first among equal starts, so an interpreter range inside the runtime's
 * ELF wins over the ELF. */
static int by_start(const void *x, const void *y)
{
	const struct native_range *p = x, *q = y;

	if (p->start != q->start)
		return p->start < q->start ? -1 : 1;
	return (p->end - p->start) < (q->end - q->start) ? -1 : (p->end - p->start) > (q->end - q->start);
}

enum jf_code_class jf_zone_model_native_at(struct jf_zone_model *zm, uint64_t addr)
{
	enum jf_code_class best = JF_CLASS_UNKNOWN;
	uint64_t best_size = UINT64_MAX;
	size_t lo = 0, hi = zm->nnatives;
	size_t slot = (size_t)(addr ^ addr >> 8) % (sizeof(zm->native_memo) / sizeof(zm->native_memo[0]));

	if (zm->native_memo[slot].valid && zm->native_memo[slot].addr == addr)
		return (enum jf_code_class)zm->native_memo[slot].cls;

	/* An empty table is NULL: qsort must not be handed that (UBSan says so). */
	if (!zm->natives_sorted && zm->nnatives > 1) {
		qsort(zm->natives, zm->nnatives, sizeof(*zm->natives), by_start);
		zm->natives_sorted = 1;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (zm->natives[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges may nest (handlers inside the eval loop inside the ELF): the narrowest
	 * containing range among the few that start below addr wins. */
	while (lo-- > 0) {
		const struct native_range *n = &zm->natives[lo];

		if (addr < n->end && n->end - n->start < best_size) {
			best = n->cls;
			best_size = n->end - n->start;
		}
		if (zm->nnatives - lo > 64)
			break;
	}
	zm->native_memo[slot].addr = addr;
	zm->native_memo[slot].cls = (uint32_t)best;
	zm->native_memo[slot].valid = 1;
	return best;
}

int jf_zone_model_apply(struct jf_analysis *a, const struct jf_zone_reader *reader,
			const struct jf_zone_record *rec)
{
	if (rec->id >= JF_ZONE_ID_BASE)
		a->has_zone_records = 1;
	switch (rec->id) {
	case JF_JITDUMP_CODE_LOAD:
		return load_code(a, rec->u.code_load.addr, rec->u.code_load.size,
				 rec->u.code_load.name);
	case JF_JITDUMP_CODE_MOVE:
		return move_region(a, rec->u.code_move.old_addr, rec->u.code_move.new_addr,
				   rec->u.code_move.size);
	case JF_ZONE_REGION_LOAD:
		return describe_region(a, rec);
	case JF_ZONE_REGION_FREE:
		remove_range(&a->zm, rec->u.region_free.addr,
			     rec->u.region_free.addr + rec->u.region_free.size);
		return 0;
	case JF_ZONE_REGION_MOVE:
		return move_region(a, rec->u.region_move.old_addr, rec->u.region_move.new_addr,
				   rec->u.region_move.size);
	case JF_ZONE_GUARD:
		return set_guard(a, rec);
	case JF_ZONE_POINT:
		return jf_points_add(a, rec);
	case JF_ZONE_PC_MAP:
		return set_pc_map(a, reader, rec);
	case JF_ZONE_INLINE_FRAMES:
		return jf_inline_frames_set(&a->zm, reader, rec);
	case JF_ZONE_OP_NAME:
		return set_op_name(&a->zm, rec->u.op_name.op_kind, rec->u.op_name.name);
	case JF_ZONE_CODE_OBJECT:
		return set_code_object(&a->zm, rec);
	case JF_ZONE_THREAD_NAME:
		return jf_zone_model_set_thread_name(&a->zm, (int32_t)rec->u.thread_name.tid,
						     rec->u.thread_name.name);
	case JF_ZONE_INTERP_RANGE: {
		uint32_t k = rec->u.interp_range.kind;
		enum jf_code_class cls = (k == JF_INTERP_EVAL_LOOP || k == JF_INTERP_HANDLER) ?
			JF_CLASS_INTERPRETER : k == JF_INTERP_INSTRUMENTATION ?
			JF_CLASS_INSTRUMENTATION : k == JF_INTERP_DEOPT ?
			JF_CLASS_EXIT_HANDLING : JF_CLASS_RUNTIME;

		return jf_zone_model_add_native(&a->zm, rec->u.interp_range.start,
						rec->u.interp_range.end, cls);
	}
	default:
		return 0;
	}
}
