/* perf.data records: framing (header, size, AUXTRACE payloads), the sample_id trailer, and
 * the bodies of the record types an Intel PT session needs. Layouts follow
 * linux/perf_event.h (kernel records) and perf's event.h (perf's own records). */
#include "perf_data_internal.h"

#include <string.h>

enum { RECORD_HEADER_SIZE = 8, AUXTRACE_RECORD_SIZE = 48 };

static int64_t s32(const uint8_t *p)
{
	return (int32_t)jf_perf_u32(p);
}

const char *jf_perf_record_name(uint32_t type)
{
	switch (type) {
	case JF_PERF_RECORD_MMAP: return "MMAP";
	case JF_PERF_RECORD_LOST: return "LOST";
	case JF_PERF_RECORD_COMM: return "COMM";
	case JF_PERF_RECORD_EXIT: return "EXIT";
	case JF_PERF_RECORD_THROTTLE: return "THROTTLE";
	case JF_PERF_RECORD_UNTHROTTLE: return "UNTHROTTLE";
	case JF_PERF_RECORD_FORK: return "FORK";
	case JF_PERF_RECORD_READ: return "READ";
	case JF_PERF_RECORD_SAMPLE: return "SAMPLE";
	case JF_PERF_RECORD_MMAP2: return "MMAP2";
	case JF_PERF_RECORD_AUX: return "AUX";
	case JF_PERF_RECORD_ITRACE_START: return "ITRACE_START";
	case JF_PERF_RECORD_LOST_SAMPLES: return "LOST_SAMPLES";
	case JF_PERF_RECORD_SWITCH: return "SWITCH";
	case JF_PERF_RECORD_SWITCH_CPU_WIDE: return "SWITCH_CPU_WIDE";
	case JF_PERF_RECORD_HEADER_ATTR: return "HEADER_ATTR";
	case JF_PERF_RECORD_FINISHED_ROUND: return "FINISHED_ROUND";
	case JF_PERF_RECORD_ID_INDEX: return "ID_INDEX";
	case JF_PERF_RECORD_AUXTRACE_INFO: return "AUXTRACE_INFO";
	case JF_PERF_RECORD_AUXTRACE: return "AUXTRACE";
	case JF_PERF_RECORD_AUXTRACE_ERROR: return "AUXTRACE_ERROR";
	case JF_PERF_RECORD_THREAD_MAP: return "THREAD_MAP";
	case JF_PERF_RECORD_CPU_MAP: return "CPU_MAP";
	case JF_PERF_RECORD_TIME_CONV: return "TIME_CONV";
	case JF_PERF_RECORD_HEADER_FEATURE: return "HEADER_FEATURE";
	case JF_PERF_RECORD_FINISHED_INIT: return "FINISHED_INIT";
	default: return "unknown";
	}
}

int jf_perf_record_known(uint32_t type)
{
	return strcmp(jf_perf_record_name(type), "unknown") != 0;
}

int jf_perf_record_maps_code(uint32_t type)
{
	return type == JF_PERF_RECORD_MMAP || type == JF_PERF_RECORD_MMAP2 ||
	       type == JF_PERF_RECORD_FORK || type == JF_PERF_RECORD_COMM;
}

static int sid_enabled(const struct jf_perf_attr *a)
{
	return a->sample_id_all;
}

void jf_perf_data_index_attrs(struct jf_perf_data *d)
{
	size_t i;
	int same = 1, any_sid = 0;

	for (i = 0; i < d->nattrs; i++) {
		any_sid |= sid_enabled(&d->attrs[i]);
		if (d->attrs[i].sample_type != d->attrs[0].sample_type ||
		    d->attrs[i].sample_id_all != d->attrs[0].sample_id_all)
			same = 0;
	}
	if (!any_sid)
		d->sid_mode = JF_SID_NONE;
	else if (same || !(d->attrs[0].sample_type & JF_PERF_SAMPLE_IDENTIFIER))
		/* perf itself refuses differing layouts without SAMPLE_IDENTIFIER; reading
		 * with the first attr's is what it would do before refusing. */
		d->sid_mode = JF_SID_FIRST_ATTR;
	else
		d->sid_mode = JF_SID_BY_ID;
}

/* The attr whose sample_type describes a kernel record's trailer (NULL: no trailer). */
static const struct jf_perf_attr *record_attr(const struct jf_perf_data *d,
					      const uint8_t *raw, uint16_t size)
{
	uint64_t id;
	size_t i, j;

	if (d->sid_mode == JF_SID_NONE)
		return NULL;
	if (d->sid_mode == JF_SID_FIRST_ATTR || size < RECORD_HEADER_SIZE + 8)
		return d->attrs[0].sample_id_all ? &d->attrs[0] : NULL;
	id = jf_perf_u64(raw + size - 8, 0);
	for (i = 0; i < d->nattrs; i++)
		for (j = 0; j < d->attrs[i].nr_ids; j++)
			if (jf_perf_u64(d->attrs[i].ids, j) == id)
				return d->attrs[i].sample_id_all ? &d->attrs[i] : NULL;
	return d->attrs[0].sample_id_all ? &d->attrs[0] : NULL;
}

static unsigned trailer_words(uint64_t st)
{
	return !!(st & JF_PERF_SAMPLE_TID) + !!(st & JF_PERF_SAMPLE_TIME) +
	       !!(st & JF_PERF_SAMPLE_ID) + !!(st & JF_PERF_SAMPLE_STREAM_ID) +
	       !!(st & JF_PERF_SAMPLE_CPU) + !!(st & JF_PERF_SAMPLE_IDENTIFIER);
}

/* Parse the trailer (fields in this order: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER) of
 * n words at p. */
static void parse_trailer(uint64_t st, const uint8_t *p, struct jf_perf_sample_id *sid)
{
	unsigned w = 0;

	if (st & JF_PERF_SAMPLE_TID) {
		sid->pid = (int32_t)s32(p);
		sid->tid = (int32_t)s32(p + 4);
		sid->present |= JF_PERF_SID_TID;
		w++;
	}
	if (st & JF_PERF_SAMPLE_TIME) {
		sid->time = jf_perf_u64(p, w++);
		sid->present |= JF_PERF_SID_TIME;
	}
	if (st & JF_PERF_SAMPLE_ID) {
		sid->id = jf_perf_u64(p, w++);
		sid->present |= JF_PERF_SID_ID;
	}
	if (st & JF_PERF_SAMPLE_STREAM_ID) {
		sid->stream_id = jf_perf_u64(p, w++);
		sid->present |= JF_PERF_SID_STREAM_ID;
	}
	if (st & JF_PERF_SAMPLE_CPU) {
		sid->cpu = jf_perf_u32(p + 8 * w++);
		sid->present |= JF_PERF_SID_CPU;
	}
	if (st & JF_PERF_SAMPLE_IDENTIFIER) {
		sid->id = jf_perf_u64(p, w++);
		sid->present |= JF_PERF_SID_ID;
	}
}

/* The leading fields of a SAMPLE (IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU come
 * before anything of variable size, so read_format is not needed for them). */
static void parse_sample(uint64_t st, const uint8_t *p, uint64_t len,
			 struct jf_perf_sample_id *sid)
{
	uint64_t w = 0, n = len / 8;

#define TAKE(bit) ((st & (bit)) && w < n)
	if (TAKE(JF_PERF_SAMPLE_IDENTIFIER)) {
		sid->id = jf_perf_u64(p, w++);
		sid->present |= JF_PERF_SID_ID;
	}
	if (TAKE(JF_PERF_SAMPLE_IP))
		w++;
	if (TAKE(JF_PERF_SAMPLE_TID)) {
		sid->pid = (int32_t)s32(p + 8 * w);
		sid->tid = (int32_t)s32(p + 8 * w + 4);
		sid->present |= JF_PERF_SID_TID;
		w++;
	}
	if (TAKE(JF_PERF_SAMPLE_TIME)) {
		sid->time = jf_perf_u64(p, w++);
		sid->present |= JF_PERF_SID_TIME;
	}
	if (TAKE(JF_PERF_SAMPLE_ADDR))
		w++;
	if (TAKE(JF_PERF_SAMPLE_ID)) {
		sid->id = jf_perf_u64(p, w++);
		sid->present |= JF_PERF_SID_ID;
	}
	if (TAKE(JF_PERF_SAMPLE_STREAM_ID)) {
		sid->stream_id = jf_perf_u64(p, w++);
		sid->present |= JF_PERF_SID_STREAM_ID;
	}
	if (TAKE(JF_PERF_SAMPLE_CPU)) {
		sid->cpu = jf_perf_u32(p + 8 * w);
		sid->present |= JF_PERF_SID_CPU;
	}
#undef TAKE
}

/* A NUL-terminated string at body offset at, inside len bytes. */
static const char *string_at(const uint8_t *body, uint64_t at, uint64_t len)
{
	if (at >= len || !memchr(body + at, 0, len - at))
		return NULL;
	return (const char *)body + at;
}

static int too_short(const struct jf_perf_data *d, const struct jf_perf_record *rec,
		     uint64_t body_len, uint64_t need, struct jf_error *err)
{
	return jf_fail(err,
		       "%s: offset %llu: %s record body of %llu bytes (after its sample_id); "
		       "expected at least %llu",
		       d->file.path, (unsigned long long)rec->offset,
		       jf_perf_record_name(rec->type), (unsigned long long)body_len,
		       (unsigned long long)need);
}

static int no_string(const struct jf_perf_data *d, const struct jf_perf_record *rec,
		     const char *what, struct jf_error *err)
{
	return jf_fail(err,
		       "%s: offset %llu: %s record: %s is not NUL-terminated inside the record",
		       d->file.path, (unsigned long long)rec->offset,
		       jf_perf_record_name(rec->type), what);
}

static int parse_mmap(const struct jf_perf_data *d, struct jf_perf_record *r,
		      const uint8_t *b, uint64_t len, struct jf_error *err)
{
	uint64_t name_at = r->type == JF_PERF_RECORD_MMAP2 ? 64 : 32;

	if (len < name_at + 1)
		return too_short(d, r, len, name_at + 1, err);
	r->u.mmap.pid = (int32_t)s32(b);
	r->u.mmap.tid = (int32_t)s32(b + 4);
	r->u.mmap.addr = jf_perf_u64(b, 1);
	r->u.mmap.len = jf_perf_u64(b, 2);
	r->u.mmap.pgoff = jf_perf_u64(b, 3);
	if (r->type == JF_PERF_RECORD_MMAP2) {
		if (r->misc & JF_PERF_MISC_MMAP_BUILD_ID) {
			r->u.mmap.build_id_size = b[32] <= 20 ? b[32] : 20;
			r->u.mmap.build_id = b + 36;
		} else {
			r->u.mmap.maj = jf_perf_u32(b + 32);
			r->u.mmap.min = jf_perf_u32(b + 36);
			r->u.mmap.ino = jf_perf_u64(b, 5);
			r->u.mmap.ino_generation = jf_perf_u64(b, 6);
		}
		r->u.mmap.prot = jf_perf_u32(b + 56);
		r->u.mmap.flags = jf_perf_u32(b + 60);
		r->u.mmap.exec = (r->u.mmap.prot & 4) != 0; /* PROT_EXEC */
	} else {
		r->u.mmap.exec = !(r->misc & JF_PERF_MISC_MMAP_DATA);
		r->u.mmap.prot = r->u.mmap.exec ? 5 : 1;    /* PROT_READ | PROT_EXEC */
	}
	r->u.mmap.filename = string_at(b, name_at, len);
	if (!r->u.mmap.filename)
		return no_string(d, r, "the file name", err);
	return 0;
}

static int parse_body(const struct jf_perf_data *d, struct jf_perf_record *r,
		      const uint8_t *b, uint64_t len, struct jf_error *err)
{
	switch (r->type) {
	case JF_PERF_RECORD_MMAP:
	case JF_PERF_RECORD_MMAP2:
		return parse_mmap(d, r, b, len, err);
	case JF_PERF_RECORD_COMM:
		if (len < 9)
			return too_short(d, r, len, 9, err);
		r->u.comm.pid = (int32_t)s32(b);
		r->u.comm.tid = (int32_t)s32(b + 4);
		r->u.comm.exec = (r->misc & JF_PERF_MISC_COMM_EXEC) != 0;
		r->u.comm.comm = string_at(b, 8, len);
		if (!r->u.comm.comm)
			return no_string(d, r, "the command name", err);
		return 0;
	case JF_PERF_RECORD_FORK:
	case JF_PERF_RECORD_EXIT:
		if (len < 24)
			return too_short(d, r, len, 24, err);
		r->u.fork.pid = (int32_t)s32(b);
		r->u.fork.ppid = (int32_t)s32(b + 4);
		r->u.fork.tid = (int32_t)s32(b + 8);
		r->u.fork.ptid = (int32_t)s32(b + 12);
		r->u.fork.time = jf_perf_u64(b, 2);
		return 0;
	case JF_PERF_RECORD_LOST:
		if (len < 16)
			return too_short(d, r, len, 16, err);
		r->u.lost.id = jf_perf_u64(b, 0);
		r->u.lost.lost = jf_perf_u64(b, 1);
		return 0;
	case JF_PERF_RECORD_LOST_SAMPLES:
		if (len < 8)
			return too_short(d, r, len, 8, err);
		r->u.lost.lost = jf_perf_u64(b, 0);
		return 0;
	case JF_PERF_RECORD_AUX:
		if (len < 24)
			return too_short(d, r, len, 24, err);
		r->u.aux.aux_offset = jf_perf_u64(b, 0);
		r->u.aux.aux_size = jf_perf_u64(b, 1);
		r->u.aux.flags = jf_perf_u64(b, 2);
		return 0;
	case JF_PERF_RECORD_ITRACE_START:
		if (len < 8)
			return too_short(d, r, len, 8, err);
		r->u.itrace_start.pid = (int32_t)s32(b);
		r->u.itrace_start.tid = (int32_t)s32(b + 4);
		return 0;
	case JF_PERF_RECORD_SWITCH:
	case JF_PERF_RECORD_SWITCH_CPU_WIDE:
		r->u.cswitch.out = (r->misc & JF_PERF_MISC_SWITCH_OUT) != 0;
		r->u.cswitch.preempt = (r->misc & JF_PERF_MISC_SWITCH_OUT_PREEMPT) != 0;
		r->u.cswitch.next_prev_pid = r->u.cswitch.next_prev_tid = -1;
		if (r->type == JF_PERF_RECORD_SWITCH)
			return 0;
		if (len < 8)
			return too_short(d, r, len, 8, err);
		r->u.cswitch.next_prev_pid = (int32_t)s32(b);
		r->u.cswitch.next_prev_tid = (int32_t)s32(b + 4);
		return 0;
	case JF_PERF_RECORD_AUXTRACE_INFO:
		if (len < 8)
			return too_short(d, r, len, 8, err);
		r->u.auxtrace_info.type = jf_perf_u32(b);
		r->u.auxtrace_info.nr_priv = (len - 8) / 8;
		r->u.auxtrace_info.priv = b + 8;
		return 0;
	case JF_PERF_RECORD_TIME_CONV:
		if (len < 24)
			return too_short(d, r, len, 24, err);
		r->u.time_conv.time_shift = jf_perf_u64(b, 0);
		r->u.time_conv.time_mult = jf_perf_u64(b, 1);
		r->u.time_conv.time_zero = jf_perf_u64(b, 2);
		if (len >= 48) {
			r->u.time_conv.extended = 1;
			r->u.time_conv.time_cycles = jf_perf_u64(b, 3);
			r->u.time_conv.time_mask = jf_perf_u64(b, 4);
			r->u.time_conv.cap_user_time_zero = b[40];
			r->u.time_conv.cap_user_time_short = b[41];
		}
		return 0;
	case JF_PERF_RECORD_ID_INDEX:
		if (len < 8)
			return too_short(d, r, len, 8, err);
		r->u.id_index.nr = jf_perf_u64(b, 0);
		if (r->u.id_index.nr > (len - 8) / 32)
			return jf_fail(err,
				       "%s: offset %llu: ID_INDEX claims %llu entries; the record "
				       "holds %llu",
				       d->file.path, (unsigned long long)r->offset,
				       (unsigned long long)r->u.id_index.nr,
				       (unsigned long long)((len - 8) / 32));
		r->u.id_index.entries = b + 8;
		return 0;
	case JF_PERF_RECORD_HEADER_FEATURE:
		if (len < 8)
			return too_short(d, r, len, 8, err);
		r->u.feature.feature = jf_perf_u64(b, 0);
		r->u.feature.data = b + 8;
		r->u.feature.size = len - 8;
		return 0;
	default:
		return 0; /* nothing to parse (or unknown: skipped by the caller) */
	}
}

void jf_perf_data_begin(const struct jf_perf_data *d, struct jf_perf_cursor *cur)
{
	cur->pos = d->data_begin;
}

/* Framing: the header, its size, and an AUXTRACE record's payload. */
static int frame(const struct jf_perf_data *d, struct jf_perf_cursor *cur,
		 struct jf_perf_record *r, struct jf_error *err)
{
	uint64_t pos = cur->pos, end = d->data_end, next;
	const uint8_t *raw;

	memset(r, 0, sizeof(*r));
	if (pos >= end)
		return 0;
	if (end - pos < RECORD_HEADER_SIZE && d->cut)
		return 0; /* a header cut in half: the data ends here (jf_perf_data_cut) */
	if (end - pos < RECORD_HEADER_SIZE)
		return jf_fail(err,
			       "%s: offset %llu: %llu bytes left in the data section; expected an "
			       "8-byte record header",
			       d->file.path, (unsigned long long)pos,
			       (unsigned long long)(end - pos));
	raw = d->file.data + pos;
	r->type = jf_perf_u32(raw);
	r->misc = (uint16_t)(raw[4] | raw[5] << 8);
	r->size = (uint16_t)(raw[6] | raw[7] << 8);
	r->offset = pos;
	r->raw = raw;
	if (r->size < RECORD_HEADER_SIZE)
		return jf_fail(err,
			       "%s: offset %llu: %s record (type %u) of size %u; expected at least "
			       "the 8-byte header",
			       d->file.path, (unsigned long long)pos, jf_perf_record_name(r->type),
			       r->type, r->size);
	if (r->size > end - pos && d->cut)
		return 0; /* a record cut in half: the data ends before it */
	if (r->size > end - pos)
		return jf_fail(err,
			       "%s: offset %llu: %s record (type %u) of %u bytes runs past the end "
			       "of the data section at %llu",
			       d->file.path, (unsigned long long)pos, jf_perf_record_name(r->type),
			       r->type, r->size, (unsigned long long)end);
	next = pos + r->size;
	if (r->type == JF_PERF_RECORD_AUXTRACE) {
		if (r->size < AUXTRACE_RECORD_SIZE)
			return jf_fail(err,
				       "%s: offset %llu: AUXTRACE record of %u bytes; expected %u",
				       d->file.path, (unsigned long long)pos, r->size,
				       AUXTRACE_RECORD_SIZE);
		r->u.auxtrace.size = jf_perf_u64(raw + 8, 0);
		r->u.auxtrace.offset = jf_perf_u64(raw + 8, 1);
		r->u.auxtrace.reference = jf_perf_u64(raw + 8, 2);
		r->u.auxtrace.idx = jf_perf_u32(raw + 32);
		r->u.auxtrace.tid = jf_perf_u32(raw + 36);
		r->u.auxtrace.cpu = jf_perf_u32(raw + 40);
		if (r->u.auxtrace.size > end - next && d->cut) {
			/* A payload cut in half: what is there still decodes. */
			r->u.auxtrace.cut = r->u.auxtrace.size - (end - next);
			r->u.auxtrace.size = end - next;
		}
		if (r->u.auxtrace.size > end - next)
			return jf_fail(err,
				       "%s: offset %llu: AUXTRACE payload of %llu bytes runs past "
				       "the end of the data section at %llu",
				       d->file.path, (unsigned long long)pos,
				       (unsigned long long)r->u.auxtrace.size,
				       (unsigned long long)end);
		r->u.auxtrace.payload_offset = next;
		r->u.auxtrace.payload = d->file.data + next;
		next += r->u.auxtrace.size;
	}
	cur->pos = next;
	return 1;
}

int jf_perf_data_next_header(const struct jf_perf_data *d, struct jf_perf_cursor *cur,
			     struct jf_perf_record *rec, struct jf_error *err)
{
	return frame(d, cur, rec, err);
}

int jf_perf_data_next(const struct jf_perf_data *d, struct jf_perf_cursor *cur,
		      struct jf_perf_record *r, struct jf_error *err)
{
	const uint8_t *body;
	uint64_t len;
	int rc = frame(d, cur, r, err);

	if (rc <= 0)
		return rc;
	body = r->raw + RECORD_HEADER_SIZE;
	len = r->size - RECORD_HEADER_SIZE;
	if (r->type == JF_PERF_RECORD_SAMPLE) {
		if (d->nattrs)
			parse_sample(d->attrs[0].sample_type, body, len, &r->sid);
		return 1;
	}
	if (r->type < JF_PERF_RECORD_USER_TYPE_START) {
		const struct jf_perf_attr *a = record_attr(d, r->raw, r->size);

		if (a) {
			uint64_t tlen = 8ull * trailer_words(a->sample_type);

			if (tlen > len)
				return jf_fail(err,
					       "%s: offset %llu: %s record of %u bytes is too short "
					       "for its %llu-byte sample_id trailer",
					       d->file.path, (unsigned long long)r->offset,
					       jf_perf_record_name(r->type), r->size,
					       (unsigned long long)tlen);
			len -= tlen;
			parse_trailer(a->sample_type, body + len, &r->sid);
		}
	}
	if (r->type == JF_PERF_RECORD_AUXTRACE)
		return 1; /* framed already */
	return parse_body(d, r, body, len, err) < 0 ? -1 : 1;
}
