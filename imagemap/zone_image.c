/* Applying zone records to the code map (struct jf_zone_image): loads as file sections of
 * the zone file, patches as in-memory bytes, frees, moves; and the region table that names
 * JIT code in listings and errors. When each record applies is the filter's business
 * (zone_filter.c). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "zone_image_internal.h"

struct jf_zone_image *jf_zone_image_new(struct jf_codemap *map,
					const struct jf_zone_image_config *config,
					struct jf_error *err)
{
	struct jf_zone_image *zi = calloc(1, sizeof(*zi));

	if (!zi) {
		jf_fail(err, "out of memory");
		return NULL;
	}
	zi->map = map;
	if (config)
		zi->cfg = *config;
	jf_codemap_set_fill(map, jf_zone_early_fill, zi);
	jf_codemap_set_pending(map, jf_zone_pending, zi);
	return zi;
}

void jf_zone_image_free(struct jf_zone_image *zi)
{
	size_t i;

	if (!zi)
		return;
	jf_codemap_set_fill(zi->map, NULL, NULL);
	jf_codemap_set_pending(zi->map, NULL, NULL);
	jf_zone_pending_fini(zi);
	for (i = 0; i < zi->nstreams; i++) {
		jf_zone_reader_close(zi->streams[i].reader);
		jf_zone_reader_close(zi->streams[i].survey);
		free(zi->streams[i].loads);
		free(zi->streams[i].observed);
		free(zi->streams[i].changes);
		free(zi->streams[i].path);
	}
	free(zi->streams);
	jf_zone_regions_fini(&zi->regions);
	free(zi);
}

int jf_zone_changes_code(const struct jf_zone_stream *s, const struct jf_zone_record *rec)
{
	switch (rec->id) {
	case JF_JITDUMP_CODE_LOAD:
		return rec->u.code_load.size != 0;
	case JF_JITDUMP_CODE_MOVE:
		return !s->has_ext;
	case JF_ZONE_REGION_FREE:
	case JF_ZONE_REGION_MOVE:
		return 1;
	case JF_ZONE_PATCH:
		return rec->u.patch.size != 0;
	}
	return 0;
}

static int read_next(struct jf_zone_stream *s, struct jf_error *err)
{
	int rc;

	if (s->damaged && s->read_records >= s->whole_records) {
		s->has_next = 0;
		return 0;
	}
	rc = jf_zone_next(s->reader, &s->next, err);
	s->has_next = rc == 1;
	s->read_records += rc == 1;
	return rc < 0 ? -1 : 0;
}

/* Read the file through once: errors surface now, and we learn how its records are
 * announced in the trace. */
static int survey(struct jf_zone_stream *s, struct jf_error *err)
{
	struct jf_zone_reader *r;
	struct jf_zone_record rec;
	int rc;

	if (jf_zone_reader_open(&r, s->path, err))
		return -1;
	s->survey = r;
	while ((rc = jf_zone_next(r, &rec, err)) == 1) {
		if (jf_zone_early_note(s, &rec, s->whole_records) < 0 ||
		    jf_zone_settled_note(s, &rec, s->whole_records) < 0 ||
		    jf_zone_pending_note(s, &rec, s->whole_records) < 0)
			return jf_fail(err, "%s: out of memory indexing code changes", s->path);
		s->whole_records++;
		if (rec.id > JF_ZONE_ID_BASE && rec.id <= JF_ZONE_ID_LAST)
			s->has_ext = 1;
		/* Whether perf's CODE_MOVEs change code depends on has_ext, known at the end. */
		if (rec.id == JF_JITDUMP_CODE_MOVE)
			s->code_moves++;
		else
			s->code_changes += (uint64_t)jf_zone_changes_code(s, &rec);
		if (rec.id == JF_ZONE_MARKER) {
			if (rec.u.marker.methods & JF_ZONE_MARKER_CALLS)
				s->marker_addr = rec.u.marker.addr;
			s->ptwrite = (rec.u.marker.methods & JF_ZONE_MARKER_PTWRITE) != 0;
			s->by_position = (rec.u.marker.methods & JF_ZONE_MARKER_POSITION) != 0;
		}
	}
	if (rc < 0) {
		/* What is whole still applies; the damage is reported where decoding starts. */
		s->damaged = 1;
		s->damage_offset = jf_zone_reader_offset(r);
		s->damage = *err;
		return 0;
	}
	return rc;
}

int jf_zone_image_add_file(struct jf_zone_image *zi, const char *path, struct jf_error *err)
{
	struct jf_zone_stream *v, *s;

	v = realloc(zi->streams, (zi->nstreams + 1) * sizeof(*v));
	if (!v)
		return jf_fail(err, "out of memory");
	zi->streams = v;
	s = &zi->streams[zi->nstreams];
	memset(s, 0, sizeof(*s));
	s->path = strdup(path);
	if (!s->path)
		return jf_fail(err, "out of memory");
	if (survey(s, err) < 0 || jf_zone_reader_open(&s->reader, path, err) < 0) {
		jf_zone_reader_close(s->survey);
		free(s->loads);
		free(s->observed);
		free(s->changes);
		free(s->path);
		return -1;
	}
	if (zi->cfg.apply == JF_ZONE_APPLY_TIME) {
		s->marker_addr = 0;
		s->ptwrite = 0;
	}
	jf_zone_reader_set_time_fn(s->reader, zi->cfg.time_fn, zi->cfg.time_ctx);
	s->marker_ret_gen = UINT64_MAX;
	s->fresh = 1;
	zi->nstreams++;
	zi->stats.files++;
	zi->stats.ext_files += s->has_ext;
	return read_next(s, err);
}

static int load(struct jf_zone_image *zi, struct jf_zone_stream *s,
		const struct jf_zone_record *rec, struct jf_error *err)
{
	struct jf_zone_region r = { 0 };

	if (!rec->u.code_load.size)
		return 0;
	r.addr = rec->u.code_load.addr;
	r.size = rec->u.code_load.size;
	r.name = rec->u.code_load.name;
	r.version = 1;
	r.code_offset = rec->u.code_load.code_offset;
	r.path = s->path;
	if (jf_codemap_add_file(zi->map, s->path, r.code_offset, r.size, r.addr, r.name, err))
		return -1;
	if (!jf_zone_regions_insert(&zi->regions, &r))
		return jf_fail(err, "out of memory");
	zi->stats.loads++;
	return 0;
}

static void describe(struct jf_zone_image *zi, const struct jf_zone_record *rec)
{
	struct jf_zone_region *r = jf_zone_regions_find(&zi->regions, rec->u.region_load.addr);

	/* The CODE_LOAD just before made the region; add what only jitflow's record knows. */
	if (r && r->addr == rec->u.region_load.addr) {
		r->kind = rec->u.region_load.kind;
		r->name = rec->u.region_load.name;
	}
}

static int free_range(struct jf_zone_image *zi, uint64_t addr, uint64_t size)
{
	jf_zone_regions_retire(&zi->regions, addr, size);
	jf_codemap_remove(zi->map, addr, size);
	zi->stats.frees++;
	return 0;
}

/* The bytes currently mapped at [addr, addr + size), which may span several sections
 * after patches. */
static int read_current(struct jf_zone_image *zi, uint64_t addr, uint64_t size, uint8_t *buf,
			struct jf_error *err)
{
	uint64_t done = 0;

	while (done < size) {
		size_t n = jf_codemap_read(zi->map, addr + done, buf + done, (size_t)(size - done));

		if (!n)
			return jf_fail(err, "moving code: nothing mapped at 0x%" PRIx64, addr + done);
		done += n;
	}
	return 0;
}

static int move(struct jf_zone_image *zi, uint64_t from, uint64_t to, uint64_t size,
		struct jf_error *err)
{
	struct jf_zone_region r;
	uint8_t *buf;
	int rc;

	const struct jf_zone_region *known = jf_zone_regions_find(&zi->regions, from);

	if (!known || known->addr != from || known->size != size ||
	    !jf_zone_regions_take(&zi->regions, from, &r)) {
		/* not a region we know as such: nothing to carry over, the old range is gone */
		jf_zone_regions_retire(&zi->regions, from, size);
		jf_codemap_remove(zi->map, from, size);
		zi->stats.moves++;
		return 0;
	}
	if (!r.patched) {
		jf_codemap_remove(zi->map, from, size);
		rc = jf_codemap_add_file(zi->map, r.path, r.code_offset, size, to, r.name, err);
	} else {
		buf = malloc(size ? size : 1);
		if (!buf)
			return jf_fail(err, "out of memory");
		rc = read_current(zi, from, size, buf, err);
		jf_codemap_remove(zi->map, from, size);
		if (!rc)
			rc = jf_codemap_add_bytes(zi->map, buf, size, to, r.name, err);
		free(buf);
	}
	if (rc)
		return -1;
	r.addr = to;
	if (!jf_zone_regions_insert(&zi->regions, &r))
		return jf_fail(err, "out of memory");
	zi->stats.moves++;
	return 0;
}

/* jf_zone_bytes_difference of the bytes read reads. */
static int difference(size_t (*read)(struct jf_codemap *, uint64_t, void *, size_t),
		      struct jf_codemap *map, uint64_t addr, const uint8_t *bytes, uint64_t size)
{
	uint8_t buf[256];
	uint64_t done = 0;
	int differs = 0;

	while (done < size) {
		size_t want = size - done < sizeof(buf) ? (size_t)(size - done) : sizeof(buf);
		size_t n = read(map, addr + done, buf, want);

		if (!n)
			return 2;
		differs |= memcmp(buf, bytes + done, n) != 0;
		done += n;
	}
	return differs;
}

int jf_zone_bytes_difference(struct jf_codemap *map, uint64_t addr, const uint8_t *bytes,
			     uint64_t size)
{
	return difference(jf_codemap_read_mapped, map, addr, bytes, size);
}

int jf_zone_bytes_difference_as_read(struct jf_codemap *map, uint64_t addr,
				     const uint8_t *bytes, uint64_t size)
{
	return difference(jf_codemap_read, map, addr, bytes, size);
}

/* 0 applied, 1 an observed patch that changes nothing (not applied), -1 error. */
static int patch(struct jf_zone_image *zi, const struct jf_zone_record *rec,
		 struct jf_error *err)
{
	struct jf_zone_region *r = jf_zone_regions_find(&zi->regions, rec->u.patch.addr);

	if (!rec->u.patch.size)
		return 0;
	if (rec->u.patch.flags & JF_PATCH_OBSERVED) {
		switch (jf_zone_bytes_difference(zi->map, rec->u.patch.addr, rec->u.patch.bytes,
						 rec->u.patch.size)) {
		case 0:
			zi->stats.observed_same++;
			return 1;
		case 1:
			zi->stats.observed_changed++;
			break;
		default:
			zi->stats.observed_unmapped++;
			break;
		}
	}
	if (jf_codemap_add_bytes(zi->map, rec->u.patch.bytes, rec->u.patch.size,
				 rec->u.patch.addr, r ? r->name : rec->u.patch.reason, err))
		return -1;
	if (r) {
		r->version++;
		r->patched = 1;
	}
	zi->stats.patches++;
	return 0;
}

static int apply(struct jf_zone_image *zi, struct jf_zone_stream *s,
		 const struct jf_zone_record *rec, struct jf_error *err)
{
	switch (rec->id) {
	case JF_JITDUMP_CODE_LOAD:
		return load(zi, s, rec, err);
	case JF_JITDUMP_CODE_MOVE:
		/* with jitflow records, the REGION_MOVE that follows does it */
		if (s->has_ext)
			return 0;
		return move(zi, rec->u.code_move.old_addr, rec->u.code_move.new_addr,
			    rec->u.code_move.size, err);
	case JF_ZONE_REGION_LOAD:
		describe(zi, rec);
		return 0;
	case JF_ZONE_REGION_FREE:
		return free_range(zi, rec->u.region_free.addr, rec->u.region_free.size);
	case JF_ZONE_REGION_MOVE:
		return move(zi, rec->u.region_move.old_addr, rec->u.region_move.new_addr,
			    rec->u.region_move.size, err);
	case JF_ZONE_PATCH:
		return patch(zi, rec, err);
	}
	return 0; /* descriptions (guards, pc maps, names, events) do not change code */
}

int jf_zone_apply_next(struct jf_zone_image *zi, struct jf_zone_stream *s, enum jf_zone_how how,
		       struct jf_error *err)
{
	int rc;

	if (!s->has_next)
		return 0;
	zi->nexts_taken++;
	rc = apply(zi, s, &s->next, err);
	if (rc < 0)
		return jf_fail_prefix(err, "%s: offset %" PRIu64 ": applying %s: ", s->path,
				      s->next.offset, jf_zone_record_name(s->next.id));
	s->code_changes_applied += (uint64_t)jf_zone_changes_code(s, &s->next);
	if (rc == 1)
		return read_next(s, err); /* nothing changed: no event for the analysis */
	if (zi->cfg.on_apply && zi->cfg.on_apply(zi->cfg.apply_ctx, s->reader, &s->next) < 0)
		return jf_fail(err, "%s: offset %" PRIu64 ": out of memory analysing %s", s->path,
			       s->next.offset, jf_zone_record_name(s->next.id));
	zi->stats.applied++;
	if (how == JF_ZONE_BY_CALL)
		zi->stats.by_marker_call++;
	else if (how == JF_ZONE_BY_PTWRITE)
		zi->stats.by_ptwrite++;
	else if (how == JF_ZONE_BY_POSITION)
		zi->stats.by_position++;
	else
		zi->stats.by_time++;
	return read_next(s, err);
}

int jf_zone_image_apply_all(struct jf_zone_image *zi, struct jf_error *err)
{
	size_t i;

	for (i = 0; i < zi->nstreams; i++)
		while (zi->streams[i].has_next)
			if (jf_zone_apply_next(zi, &zi->streams[i], JF_ZONE_BY_TIME, err))
				return -1;
	return 0;
}

const char *jf_zone_image_lookup(const struct jf_zone_image *zi, uint64_t addr,
				 uint64_t *start, uint32_t *version)
{
	struct jf_zone_region *r = jf_zone_regions_find((struct jf_zone_regions *)&zi->regions,
							addr);

	if (!r)
		return NULL;
	if (start)
		*start = r->addr;
	if (version)
		*version = r->version;
	return r->name;
}

const struct jf_zone_image_stats *jf_zone_image_stats(const struct jf_zone_image *zi)
{
	return &zi->stats;
}

void jf_zone_image_on_apply(struct jf_zone_image *zi,
			    int (*on_apply)(void *ctx, const struct jf_zone_reader *reader,
					    const struct jf_zone_record *rec),
			    void *ctx)
{
	zi->cfg.on_apply = on_apply;
	zi->cfg.apply_ctx = ctx;
}

const char *jf_zone_image_damage(const struct jf_zone_image *zi, size_t file)
{
	if (file >= zi->nstreams || !zi->streams[file].damaged)
		return NULL;
	return zi->streams[file].damage.msg;
}
