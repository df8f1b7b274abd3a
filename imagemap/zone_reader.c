/* The zone reader: the jitdump header, the record walk with its size checks, and perf's
 * own record types. Extension records are parsed in zone_ext.c. */
#include <byteswap.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "zone_internal.h"

static int header_fail(struct jf_zone_reader *r, struct jf_error *err, const char *what)
{
	return jf_fail(err, "%s: offset 0: %s", r->name, what);
}

static int read_header(struct jf_zone_reader *r, struct jf_error *err)
{
	struct jf_cursor c = { r->file.data, r->file.size, 0, 1 };
	uint32_t magic, total;

	if (r->file.size < JF_JITDUMP_HEADER_SIZE)
		return header_fail(r, err, "expected a 40-byte jitdump header, the file is shorter");
	magic = jf_cur_u32(&c);
	if (magic == JF_JITDUMP_MAGIC_SWAPPED)
		c.swap = 1;
	else if (magic != JF_JITDUMP_MAGIC)
		return jf_fail(err, "%s: offset 0: expected jitdump magic 0x4a695444 (\"JiTD\"), "
			       "found 0x%08" PRIx32, r->name, magic);
	r->header.swapped = c.swap;
	r->header.version = jf_cur_u32(&c);
	total = jf_cur_u32(&c);
	r->header.elf_mach = jf_cur_u32(&c);
	(void)jf_cur_u32(&c); /* pad1 */
	r->header.pid = jf_cur_u32(&c);
	r->header.timestamp = jf_cur_u64(&c);
	r->header.flags = jf_cur_u64(&c);
	r->header.arch_timestamp = (r->header.flags & JF_JITDUMP_FLAG_ARCH_TIMESTAMP) != 0;
	if (r->header.version != JF_JITDUMP_VERSION)
		return jf_fail(err, "%s: offset 4: expected jitdump version 1, found %" PRIu32,
			       r->name, r->header.version);
	if (total < JF_JITDUMP_HEADER_SIZE || total > r->file.size)
		return jf_fail(err, "%s: offset 8: header size %" PRIu32 " is outside 40..%zu "
			       "(the file's size)", r->name, total, r->file.size);
	if (r->header.flags & ~JF_JITDUMP_FLAG_ARCH_TIMESTAMP)
		return jf_fail(err, "%s: offset 32: unknown header flags 0x%" PRIx64, r->name,
			       r->header.flags);
	r->pos = total;
	return jf_zone_order_scan(r, err);
}

static int finish_open(struct jf_zone_reader *r, struct jf_zone_reader **out,
		       struct jf_error *err)
{
	if (read_header(r, err)) {
		jf_zone_reader_close(r);
		return -1;
	}
	*out = r;
	return 0;
}

int jf_zone_reader_open(struct jf_zone_reader **out, const char *path, struct jf_error *err)
{
	struct jf_zone_reader *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r)
		return jf_fail(err, "%s: out of memory", path);
	if (jf_map_file(&r->file, path, err)) {
		free(r);
		return -1;
	}
	r->mapped = 1;
	r->name = strdup(path);
	if (!r->name) {
		jf_zone_reader_close(r);
		return jf_fail(err, "%s: out of memory", path);
	}
	jf_mapped_file_sequential(&r->file);
	return finish_open(r, out, err);
}

int jf_zone_reader_open_memory(struct jf_zone_reader **out, const void *data, size_t size,
			       const char *name, struct jf_error *err)
{
	struct jf_zone_reader *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r || !(r->name = strdup(name ? name : "(memory)"))) {
		free(r);
		return jf_fail(err, "%s: out of memory", name ? name : "(memory)");
	}
	r->file.data = data;
	r->file.size = size;
	return finish_open(r, out, err);
}

void jf_zone_reader_close(struct jf_zone_reader *r)
{
	if (!r)
		return;
	if (r->mapped)
		jf_unmap_file(&r->file);
	jf_live_free(&r->live);
	free(r->runs);
	free(r->name);
	free(r);
}

const struct jf_zone_header *jf_zone_reader_header(const struct jf_zone_reader *r)
{
	return &r->header;
}

const struct jf_zone_stats *jf_zone_reader_stats(const struct jf_zone_reader *r)
{
	return &r->stats;
}

const char *jf_zone_reader_path(const struct jf_zone_reader *r)
{
	return r->name;
}

void jf_zone_reader_set_time_fn(struct jf_zone_reader *r, jf_zone_time_fn fn, void *ctx)
{
	r->time_fn = fn;
	r->time_ctx = ctx;
}

static int parse_code_load(struct jf_zone_reader *r, struct jf_cursor *c,
			   struct jf_zone_record *rec, struct jf_error *err)
{
	const uint8_t *code;

	rec->u.code_load.pid = jf_cur_u32(c);
	rec->u.code_load.tid = jf_cur_u32(c);
	rec->u.code_load.vma = jf_cur_u64(c);
	rec->u.code_load.addr = jf_cur_u64(c);
	rec->u.code_load.size = jf_cur_u64(c);
	rec->u.code_load.index = jf_cur_u64(c);
	if (!c->ok)
		return jf_fail(err, "CODE_LOAD of %" PRIu32 " bytes is shorter than its 56-byte "
			       "fixed part", rec->size);
	rec->u.code_load.name = jf_cur_str(c);
	if (!rec->u.code_load.name)
		return jf_fail(err, "CODE_LOAD name is not NUL-terminated inside the record");
	/* perf takes the code as the record's last code_size bytes; they must be exactly
	 * what follows the name. */
	if (rec->u.code_load.size != c->left)
		return jf_fail(err, "CODE_LOAD code_size %" PRIu64 " does not match the %zu bytes "
			       "after its name", rec->u.code_load.size, c->left);
	if (rec->u.code_load.addr + rec->u.code_load.size < rec->u.code_load.addr)
		return jf_fail(err, "CODE_LOAD at 0x%" PRIx64 " + %" PRIu64 " wraps around the "
			       "address space", rec->u.code_load.addr, rec->u.code_load.size);
	code = c->p;
	rec->u.code_load.code = code;
	rec->u.code_load.code_offset = (uint64_t)(code - r->file.data);
	r->have_load = 1;
	r->load_addr = rec->u.code_load.addr;
	r->load_size = rec->u.code_load.size;
	r->load_index = rec->u.code_load.index;
	r->load_code_offset = rec->u.code_load.code_offset;
	return 0;
}

static int parse_code_move(struct jf_cursor *c, struct jf_zone_record *rec,
			   struct jf_error *err)
{
	rec->u.code_move.pid = jf_cur_u32(c);
	rec->u.code_move.tid = jf_cur_u32(c);
	rec->u.code_move.vma = jf_cur_u64(c);
	rec->u.code_move.old_addr = jf_cur_u64(c);
	rec->u.code_move.new_addr = jf_cur_u64(c);
	rec->u.code_move.size = jf_cur_u64(c);
	rec->u.code_move.index = jf_cur_u64(c);
	if (!c->ok)
		return jf_fail(err, "CODE_MOVE of %" PRIu32 " bytes is shorter than its 64 bytes",
			       rec->size);
	return 0;
}

/* DEBUG_INFO: every entry must fit and be terminated; checked here, before anyone trusts
 * nr_entry (which can be absurd). */
static int parse_debug_info(struct jf_cursor *c, struct jf_zone_record *rec,
			    struct jf_error *err)
{
	struct jf_cursor walk;
	uint64_t i;

	rec->u.debug_info.addr = jf_cur_u64(c);
	rec->u.debug_info.count = jf_cur_u64(c);
	if (!c->ok)
		return jf_fail(err, "DEBUG_INFO of %" PRIu32 " bytes is shorter than its 32-byte "
			       "fixed part", rec->size);
	if (rec->u.debug_info.count > c->left / (JF_JITDUMP_DEBUG_ENTRY_FIXED + 1))
		return jf_fail(err, "DEBUG_INFO nr_entry %" PRIu64 " cannot fit in its %zu bytes",
			       rec->u.debug_info.count, c->left);
	rec->u.debug_info.entries = c->p;
	rec->u.debug_info.entries_size = c->left;
	walk = *c;
	for (i = 0; i < rec->u.debug_info.count; i++) {
		jf_cur_bytes(&walk, JF_JITDUMP_DEBUG_ENTRY_FIXED);
		if (!jf_cur_str(&walk))
			return jf_fail(err, "DEBUG_INFO entry %" PRIu64 " of %" PRIu64 " runs past "
				       "the record's end", i, rec->u.debug_info.count);
	}
	return 0;
}

static int parse_record(struct jf_zone_reader *r, struct jf_cursor *c,
			struct jf_zone_record *rec, struct jf_error *err)
{
	int is_ext = rec->id > JF_ZONE_ID_BASE && rec->id <= JF_ZONE_ID_LAST;
	int rc = 0;

	if (rec->id != JF_JITDUMP_CODE_LOAD && !is_ext)
		r->have_load = 0; /* REGION_LOAD must follow its CODE_LOAD directly */
	if (rec->id < JF_JITDUMP_CODE_MAX)
		r->stats.by_id[rec->id]++;
	switch (rec->id) {
	case JF_JITDUMP_CODE_LOAD:
		return parse_code_load(r, c, rec, err);
	case JF_JITDUMP_CODE_MOVE:
		return parse_code_move(c, rec, err);
	case JF_JITDUMP_CODE_DEBUG_INFO:
		return parse_debug_info(c, rec, err);
	case JF_JITDUMP_CODE_CLOSE:
		return 0;
	case JF_JITDUMP_CODE_UNWINDING_INFO:
		r->stats.unwinding_skipped++;
		return 0;
	}
	if (!is_ext) {
		r->stats.unknown++;
		return 0;
	}
	r->stats.by_ext[rec->id - JF_ZONE_ID_BASE]++;
	rec->seq = jf_cur_u64(c);
	rec->tid = jf_cur_u32(c);
	{
		uint16_t version = jf_cur_u16(c);

		(void)jf_cur_u16(c);
		if (!c->ok)
			return jf_fail(err, "%s record of %" PRIu32 " bytes is shorter than the "
				       "32-byte extension prefix", jf_zone_record_name(rec->id),
				       rec->size);
		if (version != JF_ZONE_EXT_VERSION)
			return jf_fail(err, "%s record has extension version %u, expected %u",
				       jf_zone_record_name(rec->id), version,
				       JF_ZONE_EXT_VERSION);
	}
	jf_zone_order_check(r, rec);
	rc = jf_zone_parse_ext(r, c, rec, err);
	if (rec->id != JF_ZONE_REGION_LOAD)
		r->have_load = 0;
	return rc;
}

size_t jf_zone_reader_offset(const struct jf_zone_reader *r)
{
	return r->failed ? r->pos : jf_zone_order_next((struct jf_zone_reader *)r);
}

int jf_zone_next(struct jf_zone_reader *r, struct jf_zone_record *rec, struct jf_error *err)
{
	struct jf_cursor c;
	size_t left;

	if (r->failed)
		return jf_fail(err, "%s: reading stopped at offset %zu after an earlier error",
			       r->name, r->pos);
	r->pos = jf_zone_order_next(r);
	if (r->pos >= r->file.size)
		return 0;
	memset(rec, 0, sizeof(*rec));
	left = r->file.size - r->pos;
	rec->offset = r->pos;
	c = (struct jf_cursor){ r->file.data + r->pos, left, r->header.swapped, 1 };
	rec->id = jf_cur_u32(&c);
	rec->size = jf_cur_u32(&c);
	rec->timestamp = jf_cur_u64(&c);
	if (!c.ok) {
		r->failed = 1;
		return jf_fail(err, "%s: offset %zu: expected a 16-byte record header, %zu bytes "
			       "left in the file", r->name, r->pos, left);
	}
	if (rec->size < JF_JITDUMP_PREFIX_SIZE || rec->size > left) {
		r->failed = 1;
		return jf_fail(err, "%s: offset %zu: record size %" PRIu32 " is outside 16..%zu "
			       "(bytes left in the file); the record's id is %" PRIu32 " (%s)",
			       r->name, r->pos, rec->size, left, rec->id,
			       jf_zone_record_name(rec->id));
	}
	c.left = rec->size - JF_JITDUMP_PREFIX_SIZE;
	if (rec->timestamp < r->last_timestamp)
		r->stats.time_backwards++;
	r->last_timestamp = rec->timestamp;
	rec->time = r->time_fn ? r->time_fn(r->time_ctx, rec->timestamp) : rec->timestamp;
	r->stats.records++;
	if (parse_record(r, &c, rec, err)) {
		r->failed = 1;
		return jf_fail_prefix(err, "%s: offset %zu: ", r->name, r->pos);
	}
	jf_zone_order_advance(r, rec->size, rec->id > JF_ZONE_ID_BASE && rec->id <= JF_ZONE_ID_LAST);
	return 1;
}

void jf_zone_pc_map_entry(const struct jf_zone_reader *r, const struct jf_zone_record *rec,
			  uint32_t i, struct jf_zone_pc_entry *e)
{
	struct jf_cursor c = { rec->u.pc_map.entries + (size_t)i * JF_ZONE_PC_MAP_ENTRY_SIZE,
			       JF_ZONE_PC_MAP_ENTRY_SIZE, r->header.swapped, 1 };

	e->code_offset = jf_cur_u32(&c);
	e->bytecode_pc = jf_cur_u32(&c);
	e->op_index = jf_cur_u32(&c);
	e->inline_depth = jf_cur_u16(&c);
	e->op_kind = jf_cur_u16(&c);
}

int jf_zone_debug_entries(const struct jf_zone_reader *r, const struct jf_zone_record *rec,
			  struct jf_zone_debug_iter *it, struct jf_zone_debug_entry *e)
{
	struct jf_cursor c;

	if (it->index >= rec->u.debug_info.count || it->pos >= rec->u.debug_info.entries_size)
		return 0;
	c = (struct jf_cursor){ rec->u.debug_info.entries + it->pos,
				rec->u.debug_info.entries_size - it->pos, r->header.swapped, 1 };
	e->addr = jf_cur_u64(&c);
	e->line = jf_cur_u32(&c);
	e->discrim = jf_cur_u32(&c);
	e->file = jf_cur_str(&c);
	if (!c.ok)
		return 0;
	it->pos = rec->u.debug_info.entries_size - c.left;
	it->index++;
	return 1;
}
