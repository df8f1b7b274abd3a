/* jitflow's extension records (docs/zone-format.md), after their extension prefix. Checks
 * what the format promises: fixed parts present, strings terminated, counts that fit,
 * REGION_LOAD right after its CODE_LOAD, no load over live code. */
#include <inttypes.h>

#include "zone_internal.h"

static int short_record(struct jf_zone_record *rec, struct jf_error *err)
{
	return jf_fail(err, "%s record of %" PRIu32 " bytes is shorter than its fields",
		       jf_zone_record_name(rec->id), rec->size);
}

static int add_live(struct jf_zone_reader *r, struct jf_zone_record *rec, uint64_t addr,
		    uint64_t size, struct jf_error *err)
{
	struct jf_live_range hit;
	int rc;

	if (addr + size < addr)
		return jf_fail(err, "%s at 0x%" PRIx64 " + %" PRIu64 " wraps around the address "
			       "space", jf_zone_record_name(rec->id), addr, size);
	if (!size)
		return 0;
	rc = jf_live_insert(&r->live, addr, addr + size, &hit);
	if (rc < 0)
		return jf_fail(err, "out of memory tracking live regions");
	if (rc > 0)
		return jf_fail(err, "%s [0x%" PRIx64 ", 0x%" PRIx64 ") overlaps live region "
			       "[0x%" PRIx64 ", 0x%" PRIx64 ") that was never freed",
			       jf_zone_record_name(rec->id), addr, addr + size, hit.start, hit.end);
	return 0;
}

static int region_load(struct jf_zone_reader *r, struct jf_cursor *c,
		       struct jf_zone_record *rec, struct jf_error *err)
{
	typeof(rec->u.region_load) *l = &rec->u.region_load;

	l->addr = jf_cur_u64(c);
	l->size = jf_cur_u64(c);
	l->code_index = jf_cur_u64(c);
	l->trace_id = jf_cur_u64(c);
	l->parent_trace = jf_cur_u64(c);
	l->parent_guard = jf_cur_u64(c);
	l->code_object = jf_cur_u64(c);
	l->kind = jf_cur_u32(c);
	l->generation = jf_cur_u32(c);
	if (!c->ok)
		return short_record(rec, err);
	l->name = jf_cur_str(c);
	if (!l->name)
		return jf_fail(err, "REGION_LOAD name is not NUL-terminated inside the record");
	if (!r->have_load || r->load_index != l->code_index || r->load_addr != l->addr ||
	    r->load_size != l->size)
		return jf_fail(err, "REGION_LOAD of 0x%" PRIx64 " (code_index %" PRIu64 ") does "
			       "not directly follow its CODE_LOAD with the same address, size "
			       "and code_index", l->addr, l->code_index);
	l->code_offset = r->load_code_offset;
	l->code = r->file.data + r->load_code_offset;
	return add_live(r, rec, l->addr, l->size, err);
}

static int region_move(struct jf_zone_reader *r, struct jf_cursor *c,
		       struct jf_zone_record *rec, struct jf_error *err)
{
	typeof(rec->u.region_move) *m = &rec->u.region_move;
	uint64_t end;

	m->old_addr = jf_cur_u64(c);
	m->new_addr = jf_cur_u64(c);
	m->size = jf_cur_u64(c);
	if (!c->ok)
		return short_record(rec, err);
	end = jf_live_take(&r->live, m->old_addr);
	if (!end)
		r->stats.free_unknown++;
	return add_live(r, rec, m->new_addr, m->size, err);
}

static int patch(struct jf_cursor *c, struct jf_zone_reader *r, struct jf_zone_record *rec,
		 struct jf_error *err)
{
	typeof(rec->u.patch) *p = &rec->u.patch;

	p->addr = jf_cur_u64(c);
	p->size = jf_cur_u32(c);
	p->flags = jf_cur_u32(c);
	if (!c->ok)
		return short_record(rec, err);
	p->bytes = jf_cur_bytes(c, p->size);
	if (!p->bytes)
		return jf_fail(err, "PATCH of %" PRIu32 " bytes does not fit in its record",
			       p->size);
	p->bytes_offset = (uint64_t)(p->bytes - r->file.data);
	p->reason = jf_cur_str(c);
	if (!p->reason)
		return jf_fail(err, "PATCH reason is not NUL-terminated inside the record");
	return 0;
}

static int pc_map(struct jf_cursor *c, struct jf_zone_record *rec, struct jf_error *err)
{
	rec->u.pc_map.region_addr = jf_cur_u64(c);
	rec->u.pc_map.count = jf_cur_u32(c);
	rec->u.pc_map.flags = jf_cur_u32(c);
	if (!c->ok)
		return short_record(rec, err);
	if (rec->u.pc_map.count > c->left / JF_ZONE_PC_MAP_ENTRY_SIZE)
		return jf_fail(err, "%s count %" PRIu32 " cannot fit in its %zu bytes",
			       jf_zone_record_name(rec->id), rec->u.pc_map.count, c->left);
	rec->u.pc_map.entries = c->p;
	return 0;
}

int jf_zone_parse_ext(struct jf_zone_reader *r, struct jf_cursor *c, struct jf_zone_record *rec,
		      struct jf_error *err)
{
	switch (rec->id) {
	case JF_ZONE_CLOCK:
		rec->u.clock.clock = jf_cur_u32(c);
		(void)jf_cur_u32(c);
		rec->u.clock.tick_hz = jf_cur_u64(c);
		rec->u.clock.mono_ns = jf_cur_u64(c);
		rec->u.clock.ticks = jf_cur_u64(c);
		break;
	case JF_ZONE_REGION_LOAD:
		return region_load(r, c, rec, err);
	case JF_ZONE_REGION_FREE:
		rec->u.region_free.addr = jf_cur_u64(c);
		rec->u.region_free.size = jf_cur_u64(c);
		if (!c->ok)
			return short_record(rec, err);
		if (rec->u.region_free.addr + rec->u.region_free.size < rec->u.region_free.addr)
			return jf_fail(err, "REGION_FREE range wraps around the address space");
		if (!jf_live_remove(&r->live, rec->u.region_free.addr,
				    rec->u.region_free.addr + rec->u.region_free.size))
			r->stats.free_unknown++;
		return 0;
	case JF_ZONE_REGION_MOVE:
		return region_move(r, c, rec, err);
	case JF_ZONE_PATCH:
		return patch(c, r, rec, err);
	case JF_ZONE_GUARD:
		rec->u.guard.guard_id = jf_cur_u64(c);
		rec->u.guard.trace_id = jf_cur_u64(c);
		rec->u.guard.branch_addr = jf_cur_u64(c);
		rec->u.guard.stub_addr = jf_cur_u64(c);
		rec->u.guard.resume_pc = jf_cur_u32(c);
		rec->u.guard.op_kind = jf_cur_u16(c);
		rec->u.guard.flags = jf_cur_u16(c);
		break;
	case JF_ZONE_PC_MAP:
	case JF_ZONE_INLINE_FRAMES:
		return pc_map(c, rec, err);
	case JF_ZONE_OP_NAME:
		rec->u.op_name.op_kind = jf_cur_u16(c);
		(void)jf_cur_u16(c);
		(void)jf_cur_u32(c);
		rec->u.op_name.name = jf_cur_str(c);
		break;
	case JF_ZONE_CODE_OBJECT:
		rec->u.code_object.id = jf_cur_u64(c);
		rec->u.code_object.line = jf_cur_u32(c);
		(void)jf_cur_u32(c);
		rec->u.code_object.name = jf_cur_str(c);
		rec->u.code_object.file = jf_cur_str(c);
		break;
	case JF_ZONE_INTERP_RANGE:
		rec->u.interp_range.start = jf_cur_u64(c);
		rec->u.interp_range.end = jf_cur_u64(c);
		rec->u.interp_range.kind = jf_cur_u32(c);
		(void)jf_cur_u32(c);
		rec->u.interp_range.name = jf_cur_str(c);
		if (c->ok && rec->u.interp_range.end < rec->u.interp_range.start)
			return jf_fail(err, "INTERP_RANGE end 0x%" PRIx64 " is before its start "
				       "0x%" PRIx64, rec->u.interp_range.end,
				       rec->u.interp_range.start);
		break;
	case JF_ZONE_EVENT:
		rec->u.event.kind = jf_cur_u32(c);
		(void)jf_cur_u32(c);
		rec->u.event.arg = jf_cur_u64(c);
		break;
	case JF_ZONE_MARKER:
		rec->u.marker.addr = jf_cur_u64(c);
		rec->u.marker.methods = jf_cur_u32(c);
		(void)jf_cur_u32(c);
		break;
	case JF_ZONE_POINT:
		rec->u.point.trace_id = jf_cur_u64(c);
		rec->u.point.addr = jf_cur_u64(c);
		rec->u.point.point_id = jf_cur_u64(c);
		rec->u.point.kind = jf_cur_u32(c);
		(void)jf_cur_u32(c);
		break;
	case JF_ZONE_THREAD_NAME:
		rec->u.thread_name.tid = jf_cur_u32(c);
		(void)jf_cur_u32(c);
		rec->u.thread_name.name = jf_cur_str(c);
		break;
	}
	if (!c->ok)
		return jf_fail(err, "%s record of %" PRIu32 " bytes is shorter than its fields or "
			       "has a string not NUL-terminated inside it",
			       jf_zone_record_name(rec->id), rec->size);
	return 0;
}
