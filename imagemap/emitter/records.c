/* One function per record type of docs/zone-format.md. Each takes the calling thread's
 * buffer, appends the record (perf's own record first where there is one), and leaves
 * through jf_emit_end, which releases the buffer and fires the ordering marker. */
#include <string.h>

#include "emitter_internal.h"
#include "jitflow/zone_format.h"

JF_EMIT_CODE
static size_t str_size(const char *s)
{
	return (s ? strlen(s) : 0) + 1;
}

/* A record of a fixed size, the common case (events, guards, frees): assembled on the
 * stack and appended as one copy. Always inlined, so that each copy is of a constant
 * size. */
#define EMIT_FIXED(em, id, body) emit_fixed(em, id, &(body), sizeof(body))

JF_EMIT_CODE
static inline __attribute__((always_inline)) uint64_t
emit_fixed(struct jf_emitter *em, uint32_t id, const void *body, size_t size)
{
	struct jf_emit_tbuf *tb = jf_emit_begin(em);
	struct {
		struct jf_emit_ext_prefix p;
		uint8_t body[48];
	} rec;

	if (!tb)
		return 0;
	jf_emit_ext_prefix(em, tb, &rec.p, id, size);
	memcpy(rec.body, body, size);
	jf_emit_put(em, tb, &rec, sizeof(rec.p) + size);
	return jf_emit_end(em, tb, rec.p.seq);
}

/* A record's total_size is a u32; anything near that is a caller's bug, refused (0). */
JF_EMIT_CODE
static int too_big(size_t body)
{
	return body > (1u << 30);
}

JF_EMIT_CODE
uint64_t jf_emit_region_load(struct jf_emitter *em, const struct jf_region *r)
{
	struct jf_emit_tbuf *tb;
	uint64_t seq, code_index;

	if (!em || !r || (r->size && !r->code) || r->size > (1u << 30) ||
	    too_big(r->size + 2 * str_size(r->name)))
		return 0;
	if (!(tb = jf_emit_begin(em)))
		return 0;
	/* Loads, moves and frees share the code index table: the emitter's one lock taken
	 * per record, and only by these (rare next to events). */
	pthread_mutex_lock(&em->index_lock);
	code_index = em->next_code_index++;
	if (jf_code_index_put(&em->code_index, r->addr, code_index))
		jf_emit_fail(em, "out of memory for the code index table");
	pthread_mutex_unlock(&em->index_lock);
	/* perf's CODE_LOAD with the bytes: perf inject --jit turns it into an ELF file, and
	 * jitflow's reader maps the bytes straight from this file. */
	jf_emit_begin_jitdump(em, tb, JF_JITDUMP_CODE_LOAD,
			      JF_JITDUMP_CODE_LOAD_FIXED + str_size(r->name) + r->size);
	jf_emit_put_u32(em, tb, em->pid);
	jf_emit_put_u32(em, tb, jf_emit_tid());
	jf_emit_put_u64(em, tb, r->addr); /* vma */
	jf_emit_put_u64(em, tb, r->addr); /* code_addr */
	jf_emit_put_u64(em, tb, r->size);
	jf_emit_put_u64(em, tb, code_index);
	jf_emit_put_str(em, tb, r->name);
	jf_emit_put(em, tb, r->code, (size_t)r->size);

	seq = jf_emit_begin_ext(em, tb, JF_ZONE_REGION_LOAD, JF_ZONE_REGION_LOAD_FIXED +
						       str_size(r->name));
	jf_emit_put_u64(em, tb, r->addr);
	jf_emit_put_u64(em, tb, r->size);
	jf_emit_put_u64(em, tb, code_index);
	jf_emit_put_u64(em, tb, r->trace_id);
	jf_emit_put_u64(em, tb, r->parent_trace);
	jf_emit_put_u64(em, tb, r->parent_guard);
	jf_emit_put_u64(em, tb, r->code_object);
	jf_emit_put_u32(em, tb, r->kind);
	jf_emit_put_u32(em, tb, r->generation);
	jf_emit_put_str(em, tb, r->name);
	return jf_emit_end(em, tb, seq);
}

JF_EMIT_CODE
uint64_t jf_emit_region_free(struct jf_emitter *em, uint64_t addr, uint64_t size)
{
	struct { uint64_t addr, size; } body = { addr, size };

	_Static_assert(sizeof(body) == JF_ZONE_REGION_FREE_FIXED, "REGION_FREE body");
	if (!em)
		return 0;
	pthread_mutex_lock(&em->index_lock);
	jf_code_index_del(&em->code_index, addr);
	pthread_mutex_unlock(&em->index_lock);
	return EMIT_FIXED(em, JF_ZONE_REGION_FREE, body);
}

JF_EMIT_CODE
uint64_t jf_emit_region_move(struct jf_emitter *em, uint64_t old_addr, uint64_t new_addr,
			     uint64_t size)
{
	struct jf_emit_tbuf *tb;
	uint64_t seq, code_index = UINT64_MAX;

	if (!em)
		return 0;
	if (!(tb = jf_emit_begin(em)))
		return 0;
	/* perf's CODE_MOVE names the CODE_LOAD by its index; code the emitter never loaded
	 * has none, and then only jitflow's record is written. */
	pthread_mutex_lock(&em->index_lock);
	if (jf_code_index_get(&em->code_index, old_addr, &code_index)) {
		jf_code_index_del(&em->code_index, old_addr);
		if (jf_code_index_put(&em->code_index, new_addr, code_index))
			jf_emit_fail(em, "out of memory for the code index table");
	} else {
		code_index = UINT64_MAX;
	}
	pthread_mutex_unlock(&em->index_lock);
	if (code_index != UINT64_MAX) {
		jf_emit_begin_jitdump(em, tb, JF_JITDUMP_CODE_MOVE, JF_JITDUMP_CODE_MOVE_FIXED);
		jf_emit_put_u32(em, tb, em->pid);
		jf_emit_put_u32(em, tb, jf_emit_tid());
		jf_emit_put_u64(em, tb, new_addr); /* vma */
		jf_emit_put_u64(em, tb, old_addr);
		jf_emit_put_u64(em, tb, new_addr);
		jf_emit_put_u64(em, tb, size);
		jf_emit_put_u64(em, tb, code_index);
	}
	seq = jf_emit_begin_ext(em, tb, JF_ZONE_REGION_MOVE, JF_ZONE_REGION_MOVE_FIXED);
	jf_emit_put_u64(em, tb, old_addr);
	jf_emit_put_u64(em, tb, new_addr);
	jf_emit_put_u64(em, tb, size);
	return jf_emit_end(em, tb, seq);
}

JF_EMIT_CODE
uint64_t jf_emit_patch(struct jf_emitter *em, uint64_t addr, const void *bytes,
		       uint32_t size, const char *reason)
{
	struct jf_emit_tbuf *tb;
	uint64_t seq;

	if (!em || (size && !bytes) || too_big((size_t)size + str_size(reason)))
		return 0;
	if (!(tb = jf_emit_begin(em)))
		return 0;
	seq = jf_emit_begin_ext(em, tb, JF_ZONE_PATCH, JF_ZONE_PATCH_FIXED + size + str_size(reason));
	jf_emit_put_u64(em, tb, addr);
	jf_emit_put_u32(em, tb, size);
	jf_emit_put_u32(em, tb, 0);
	jf_emit_put(em, tb, bytes, size);
	jf_emit_put_str(em, tb, reason);
	return jf_emit_end(em, tb, seq);
}

JF_EMIT_CODE
uint64_t jf_emit_guard(struct jf_emitter *em, uint64_t guard_id, uint64_t trace_id,
		       uint64_t branch_addr, uint64_t stub_addr, uint32_t resume_pc)
{
	return jf_emit_guard_flags(em, guard_id, trace_id, branch_addr, stub_addr, resume_pc, 0);
}

JF_EMIT_CODE
uint64_t jf_emit_guard_flags(struct jf_emitter *em, uint64_t guard_id, uint64_t trace_id,
			     uint64_t branch_addr, uint64_t stub_addr, uint32_t resume_pc,
			     uint32_t flags)
{
	return jf_emit_guard_kind(em, guard_id, trace_id, branch_addr, stub_addr, resume_pc,
				  flags, 0);
}

JF_EMIT_CODE
uint64_t jf_emit_guard_kind(struct jf_emitter *em, uint64_t guard_id, uint64_t trace_id,
			    uint64_t branch_addr, uint64_t stub_addr, uint32_t resume_pc,
			    uint32_t flags, uint16_t op_kind)
{
	struct {
		uint64_t guard_id, trace_id, branch_addr, stub_addr;
		uint32_t resume_pc;
		uint16_t op_kind, flags;
	} body = { guard_id, trace_id, branch_addr, stub_addr, resume_pc, op_kind,
		   (uint16_t)flags };
	_Static_assert(sizeof(body) == JF_ZONE_GUARD_FIXED, "GUARD body");

	if (!em)
		return 0;
	return EMIT_FIXED(em, JF_ZONE_GUARD, body);
}

JF_EMIT_CODE
uint64_t jf_emit_pc_map(struct jf_emitter *em, uint64_t region_addr,
			const struct jf_pc_map_entry *entries, uint32_t count)
{
	return jf_emit_pc_map_flags(em, region_addr, entries, count, 0);
}

/* A PC_MAP or INLINE_FRAMES record (the same layout). */
JF_EMIT_CODE
static uint64_t emit_pc_entries(struct jf_emitter *em, uint32_t id, uint64_t region_addr,
				const struct jf_pc_map_entry *entries, uint32_t count,
				uint32_t flags)
{
	struct jf_emit_tbuf *tb;
	uint64_t seq;
	uint32_t i;

	/* a record's total_size is 32 bits */
	if (!em || (count && !entries) || count > (UINT32_MAX / 2) / JF_ZONE_PC_MAP_ENTRY_SIZE)
		return 0;
	if (!(tb = jf_emit_begin(em)))
		return 0;
	seq = jf_emit_begin_ext(em, tb, id, JF_ZONE_PC_MAP_FIXED +
					    (size_t)count * JF_ZONE_PC_MAP_ENTRY_SIZE);
	jf_emit_put_u64(em, tb, region_addr);
	jf_emit_put_u32(em, tb, count);
	jf_emit_put_u32(em, tb, flags);
	for (i = 0; i < count; i++) {
		jf_emit_put_u32(em, tb, entries[i].code_offset);
		jf_emit_put_u32(em, tb, entries[i].bytecode_pc);
		jf_emit_put_u32(em, tb, entries[i].op_index);
		jf_emit_put_u16(em, tb, entries[i].inline_depth);
		jf_emit_put_u16(em, tb, entries[i].op_kind);
	}
	return jf_emit_end(em, tb, seq);
}

JF_EMIT_CODE
uint64_t jf_emit_pc_map_flags(struct jf_emitter *em, uint64_t region_addr,
			      const struct jf_pc_map_entry *entries, uint32_t count, uint32_t flags)
{
	return emit_pc_entries(em, JF_ZONE_PC_MAP, region_addr, entries, count, flags);
}

JF_EMIT_CODE
uint64_t jf_emit_inline_frames(struct jf_emitter *em, uint64_t region_addr,
			       const struct jf_pc_map_entry *entries, uint32_t count)
{
	return emit_pc_entries(em, JF_ZONE_INLINE_FRAMES, region_addr, entries, count, 0);
}

JF_EMIT_CODE
uint64_t jf_emit_code_object(struct jf_emitter *em, uint64_t id, const char *name,
			     const char *file, uint32_t line)
{
	struct jf_emit_tbuf *tb;
	uint64_t seq;

	if (!em || too_big(str_size(name) + str_size(file)))
		return 0;
	if (!(tb = jf_emit_begin(em)))
		return 0;
	seq = jf_emit_begin_ext(em, tb, JF_ZONE_CODE_OBJECT, JF_ZONE_CODE_OBJECT_FIXED +
						       str_size(name) + str_size(file));
	jf_emit_put_u64(em, tb, id);
	jf_emit_put_u32(em, tb, line);
	jf_emit_put_u32(em, tb, 0);
	jf_emit_put_str(em, tb, name);
	jf_emit_put_str(em, tb, file);
	return jf_emit_end(em, tb, seq);
}

JF_EMIT_CODE
uint64_t jf_emit_interp_range(struct jf_emitter *em, uint32_t kind, uint64_t start,
			      uint64_t end, const char *name)
{
	struct jf_emit_tbuf *tb;
	uint64_t seq;

	if (!em || too_big(str_size(name)))
		return 0;
	if (!(tb = jf_emit_begin(em)))
		return 0;
	seq = jf_emit_begin_ext(em, tb, JF_ZONE_INTERP_RANGE, JF_ZONE_INTERP_RANGE_FIXED +
							str_size(name));
	jf_emit_put_u64(em, tb, start);
	jf_emit_put_u64(em, tb, end);
	jf_emit_put_u32(em, tb, kind);
	jf_emit_put_u32(em, tb, 0);
	jf_emit_put_str(em, tb, name);
	return jf_emit_end(em, tb, seq);
}

/* A record of 8 fixed bytes and a name (OP_NAME, THREAD_NAME). */
JF_EMIT_CODE
static uint64_t emit_named(struct jf_emitter *em, uint32_t id, const void *fixed,
			   const char *name)
{
	struct jf_emit_tbuf *tb;
	uint64_t seq;

	if (!em || too_big(str_size(name)))
		return 0;
	if (!(tb = jf_emit_begin(em)))
		return 0;
	seq = jf_emit_begin_ext(em, tb, id, 8 + str_size(name));
	jf_emit_put(em, tb, fixed, 8);
	jf_emit_put_str(em, tb, name);
	return jf_emit_end(em, tb, seq);
}

JF_EMIT_CODE
uint64_t jf_emit_op_name(struct jf_emitter *em, uint16_t op_kind, const char *name)
{
	struct {
		uint16_t op_kind, reserved16;
		uint32_t reserved32;
	} body = { op_kind, 0, 0 };
	_Static_assert(sizeof(body) == JF_ZONE_OP_NAME_FIXED, "OP_NAME body");

	return emit_named(em, JF_ZONE_OP_NAME, &body, name);
}

JF_EMIT_CODE
uint64_t jf_emit_event(struct jf_emitter *em, uint32_t kind, uint64_t arg)
{
	struct {
		uint32_t kind, reserved;
		uint64_t arg;
	} body = { kind, 0, arg };
	_Static_assert(sizeof(body) == JF_ZONE_EVENT_FIXED, "EVENT body");

	if (!em)
		return 0;
	return EMIT_FIXED(em, JF_ZONE_EVENT, body);
}

JF_EMIT_CODE
uint64_t jf_emit_thread_name(struct jf_emitter *em, uint32_t tid, const char *name)
{
	struct {
		uint32_t tid, reserved;
	} body = { tid, 0 };
	_Static_assert(sizeof(body) == JF_ZONE_THREAD_NAME_FIXED, "THREAD_NAME body");

	return emit_named(em, JF_ZONE_THREAD_NAME, &body, name);
}

JF_EMIT_CODE
uint64_t jf_emit_point(struct jf_emitter *em, uint64_t trace_id, uint64_t addr,
		       uint64_t point_id, uint32_t kind)
{
	struct {
		uint64_t trace_id, addr, point_id;
		uint32_t kind, reserved;
	} body = { trace_id, addr, point_id, kind, 0 };
	_Static_assert(sizeof(body) == JF_ZONE_POINT_FIXED, "POINT body");

	if (!em)
		return 0;
	return EMIT_FIXED(em, JF_ZONE_POINT, body);
}
