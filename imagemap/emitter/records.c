/* One function per record type of docs/zone-format.md. Each takes the lock, appends the
 * record to the buffer (perf's own record first where there is one), and leaves through
 * jf_emit_end, which releases the lock and fires the ordering marker. */
#include <string.h>

#include "emitter_internal.h"
#include "jitflow/zone_format.h"

JF_EMIT_CODE
static size_t str_size(const char *s)
{
	return (s ? strlen(s) : 0) + 1;
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
	uint64_t seq, code_index;

	if (!em || !r || (r->size && !r->code) || r->size > (1u << 30) ||
	    too_big(r->size + 2 * str_size(r->name)))
		return 0;
	pthread_mutex_lock(&em->lock);
	code_index = em->next_code_index++;
	/* perf's CODE_LOAD with the bytes: perf inject --jit turns it into an ELF file, and
	 * jitflow's reader maps the bytes straight from this file. */
	jf_emit_begin_jitdump(em, JF_JITDUMP_CODE_LOAD,
			      JF_JITDUMP_CODE_LOAD_FIXED + str_size(r->name) + r->size);
	jf_emit_put_u32(em, em->pid);
	jf_emit_put_u32(em, jf_emit_tid());
	jf_emit_put_u64(em, r->addr); /* vma */
	jf_emit_put_u64(em, r->addr); /* code_addr */
	jf_emit_put_u64(em, r->size);
	jf_emit_put_u64(em, code_index);
	jf_emit_put_str(em, r->name);
	jf_emit_put(em, r->code, (size_t)r->size);

	seq = jf_emit_begin_ext(em, JF_ZONE_REGION_LOAD, JF_ZONE_REGION_LOAD_FIXED +
						       str_size(r->name));
	jf_emit_put_u64(em, r->addr);
	jf_emit_put_u64(em, r->size);
	jf_emit_put_u64(em, code_index);
	jf_emit_put_u64(em, r->trace_id);
	jf_emit_put_u64(em, r->parent_trace);
	jf_emit_put_u64(em, r->parent_guard);
	jf_emit_put_u64(em, r->code_object);
	jf_emit_put_u32(em, r->kind);
	jf_emit_put_u32(em, r->generation);
	jf_emit_put_str(em, r->name);
	if (jf_code_index_put(&em->code_index, r->addr, code_index))
		jf_emit_fail(em, "out of memory for the code index table");
	return jf_emit_end(em, seq);
}

JF_EMIT_CODE
uint64_t jf_emit_region_free(struct jf_emitter *em, uint64_t addr, uint64_t size)
{
	uint64_t seq;

	if (!em)
		return 0;
	pthread_mutex_lock(&em->lock);
	seq = jf_emit_begin_ext(em, JF_ZONE_REGION_FREE, JF_ZONE_REGION_FREE_FIXED);
	jf_emit_put_u64(em, addr);
	jf_emit_put_u64(em, size);
	jf_code_index_del(&em->code_index, addr);
	return jf_emit_end(em, seq);
}

JF_EMIT_CODE
uint64_t jf_emit_region_move(struct jf_emitter *em, uint64_t old_addr, uint64_t new_addr,
			     uint64_t size)
{
	uint64_t seq, code_index = UINT64_MAX;

	if (!em)
		return 0;
	pthread_mutex_lock(&em->lock);
	/* perf's CODE_MOVE names the CODE_LOAD by its index; code the emitter never loaded
	 * has none, and then only jitflow's record is written. */
	if (jf_code_index_get(&em->code_index, old_addr, &code_index)) {
		jf_emit_begin_jitdump(em, JF_JITDUMP_CODE_MOVE, JF_JITDUMP_CODE_MOVE_FIXED);
		jf_emit_put_u32(em, em->pid);
		jf_emit_put_u32(em, jf_emit_tid());
		jf_emit_put_u64(em, new_addr); /* vma */
		jf_emit_put_u64(em, old_addr);
		jf_emit_put_u64(em, new_addr);
		jf_emit_put_u64(em, size);
		jf_emit_put_u64(em, code_index);
		jf_code_index_del(&em->code_index, old_addr);
		if (jf_code_index_put(&em->code_index, new_addr, code_index))
			jf_emit_fail(em, "out of memory for the code index table");
	}
	seq = jf_emit_begin_ext(em, JF_ZONE_REGION_MOVE, JF_ZONE_REGION_MOVE_FIXED);
	jf_emit_put_u64(em, old_addr);
	jf_emit_put_u64(em, new_addr);
	jf_emit_put_u64(em, size);
	return jf_emit_end(em, seq);
}

JF_EMIT_CODE
uint64_t jf_emit_patch(struct jf_emitter *em, uint64_t addr, const void *bytes,
		       uint32_t size, const char *reason)
{
	uint64_t seq;

	if (!em || (size && !bytes) || too_big((size_t)size + str_size(reason)))
		return 0;
	pthread_mutex_lock(&em->lock);
	seq = jf_emit_begin_ext(em, JF_ZONE_PATCH, JF_ZONE_PATCH_FIXED + size + str_size(reason));
	jf_emit_put_u64(em, addr);
	jf_emit_put_u32(em, size);
	jf_emit_put_u32(em, 0);
	jf_emit_put(em, bytes, size);
	jf_emit_put_str(em, reason);
	return jf_emit_end(em, seq);
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
	uint64_t seq;

	if (!em)
		return 0;
	pthread_mutex_lock(&em->lock);
	seq = jf_emit_begin_ext(em, JF_ZONE_GUARD, JF_ZONE_GUARD_FIXED);
	jf_emit_put_u64(em, guard_id);
	jf_emit_put_u64(em, trace_id);
	jf_emit_put_u64(em, branch_addr);
	jf_emit_put_u64(em, stub_addr);
	jf_emit_put_u32(em, resume_pc);
	jf_emit_put_u16(em, 0); /* op_kind: none (runtimes that name guard kinds say so) */
	jf_emit_put_u16(em, (uint16_t)flags);
	return jf_emit_end(em, seq);
}

JF_EMIT_CODE
uint64_t jf_emit_pc_map(struct jf_emitter *em, uint64_t region_addr,
			const struct jf_pc_map_entry *entries, uint32_t count)
{
	uint64_t seq;
	uint32_t i;

	/* a record's total_size is 32 bits */
	if (!em || (count && !entries) || count > (UINT32_MAX / 2) / JF_ZONE_PC_MAP_ENTRY_SIZE)
		return 0;
	pthread_mutex_lock(&em->lock);
	seq = jf_emit_begin_ext(em, JF_ZONE_PC_MAP, JF_ZONE_PC_MAP_FIXED +
						  (size_t)count * JF_ZONE_PC_MAP_ENTRY_SIZE);
	jf_emit_put_u64(em, region_addr);
	jf_emit_put_u32(em, count);
	jf_emit_put_u32(em, 0);
	for (i = 0; i < count; i++) {
		jf_emit_put_u32(em, entries[i].code_offset);
		jf_emit_put_u32(em, entries[i].bytecode_pc);
		jf_emit_put_u32(em, entries[i].op_index);
		jf_emit_put_u16(em, entries[i].inline_depth);
		jf_emit_put_u16(em, entries[i].op_kind);
	}
	return jf_emit_end(em, seq);
}

JF_EMIT_CODE
uint64_t jf_emit_code_object(struct jf_emitter *em, uint64_t id, const char *name,
			     const char *file, uint32_t line)
{
	uint64_t seq;

	if (!em || too_big(str_size(name) + str_size(file)))
		return 0;
	pthread_mutex_lock(&em->lock);
	seq = jf_emit_begin_ext(em, JF_ZONE_CODE_OBJECT, JF_ZONE_CODE_OBJECT_FIXED +
						       str_size(name) + str_size(file));
	jf_emit_put_u64(em, id);
	jf_emit_put_u32(em, line);
	jf_emit_put_u32(em, 0);
	jf_emit_put_str(em, name);
	jf_emit_put_str(em, file);
	return jf_emit_end(em, seq);
}

JF_EMIT_CODE
uint64_t jf_emit_interp_range(struct jf_emitter *em, uint32_t kind, uint64_t start,
			      uint64_t end, const char *name)
{
	uint64_t seq;

	if (!em || too_big(str_size(name)))
		return 0;
	pthread_mutex_lock(&em->lock);
	seq = jf_emit_begin_ext(em, JF_ZONE_INTERP_RANGE, JF_ZONE_INTERP_RANGE_FIXED +
							str_size(name));
	jf_emit_put_u64(em, start);
	jf_emit_put_u64(em, end);
	jf_emit_put_u32(em, kind);
	jf_emit_put_u32(em, 0);
	jf_emit_put_str(em, name);
	return jf_emit_end(em, seq);
}

JF_EMIT_CODE
uint64_t jf_emit_op_name(struct jf_emitter *em, uint16_t op_kind, const char *name)
{
	uint64_t seq;

	if (!em || too_big(str_size(name)))
		return 0;
	pthread_mutex_lock(&em->lock);
	seq = jf_emit_begin_ext(em, JF_ZONE_OP_NAME, JF_ZONE_OP_NAME_FIXED + str_size(name));
	jf_emit_put_u16(em, op_kind);
	jf_emit_put_u16(em, 0);
	jf_emit_put_u32(em, 0);
	jf_emit_put_str(em, name);
	return jf_emit_end(em, seq);
}

JF_EMIT_CODE
uint64_t jf_emit_event(struct jf_emitter *em, uint32_t kind, uint64_t arg)
{
	uint64_t seq;

	if (!em)
		return 0;
	pthread_mutex_lock(&em->lock);
	seq = jf_emit_begin_ext(em, JF_ZONE_EVENT, JF_ZONE_EVENT_FIXED);
	jf_emit_put_u32(em, kind);
	jf_emit_put_u32(em, 0);
	jf_emit_put_u64(em, arg);
	return jf_emit_end(em, seq);
}
