/* The zone filter: a decoder that pulls flow records from another one and, before handing
 * each record on, applies the zone records that became true at that point of the trace
 * (jitflow/zone_image.h). It also turns decode errors in JIT code into image mismatches
 * that name the region and its version. */
#include <inttypes.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/count_gate.h"
#include "jitflow/insn.h"
#include "zone_image_internal.h"

/* What the flow just returned makes due. It is applied at the start of the next pull,
 * after the consumer has seen the flow with the image it was decoded with (a listing
 * walks a block's instructions in the code map) and before the decoder decodes on. */
struct due {
	int time;                     /* records up to time_value */
	uint64_t time_value;
	int first_time;               /* ... including marked ones (before the trace began) */
	int marker;                   /* a block that may be a marker call */
	struct jf_block block;
	int ptwrite;
	uint64_t ptwrite_seq;
	int position;                 /* the thread's instruction count is now ... */
	struct thread_count *thread;
	uint64_t count, count_before; /* ... count (count_before before the last block) */
};

/* Instructions decoded per thread, for streams placed by position. Every block asks the
 * position streams whether one of their next records is due; mostly none is. Their next
 * records move only when one is taken (jf_zone_image.nexts_taken) or a stream is added,
 * so what the last ask found holds until then: none of this thread's is due before the
 * count quiet_below. */
struct thread_count {
	int32_t tid;
	uint64_t count;
	uint64_t quiet_below;         /* (0: not asked yet) */
	uint64_t quiet_taken;         /* nexts_taken and nstreams when quiet_below was found */
	size_t quiet_streams;
};

struct zone_filter {
	struct jf_decoder *inner;
	struct jf_decoder *outer;     /* the decoder wrapping us (for its stats) */
	struct jf_zone_image *zi;
	struct jf_insn_cache *insns;  /* to find the marker function's return */
	int started;                  /* a flow with a time has been seen */
	struct due due;
	uint64_t last_start, last_end; /* the last block, to locate errors after it */
	struct { uint32_t source; int32_t tid; } sources[64]; /* each source's thread */
	size_t nsources;
	struct thread_count threads[64];
	size_t nthreads;
	/* thread_of's last answer (threads[] entries never move; a context record may give
	 * a source another thread, and forgets it). */
	uint32_t last_source;
	struct thread_count *last_thread;
	/* What every flow would otherwise ask of every stream (see streams_changed). */
	size_t known_streams;         /* streams when the summary was made */
	int any_marker, any_ptwrite, any_position;
	/* The streams' marker addresses (all of them unless markers_unknown): a block that
	 * starts at none of them and does not return is no marker call. */
	uint64_t markers[8];
	size_t nmarkers;
	uint64_t marker_rets[8];      /* (gate_limit's: the returns of those it knows) */
	int markers_unknown;
	int time_floor_valid;         /* no time stream's next record is due before ... */
	uint64_t time_floor;          /* ... this time (apply_until's answer is then none) */
	const struct jf_decode_stats *in_stats;
	struct jf_decode_stats *out_stats;
	uint64_t in_insns, in_blocks; /* in_stats' counts as the last call left them */
};

static int is_ext(const struct jf_zone_record *rec)
{
	return rec->id > JF_ZONE_ID_BASE && rec->id <= JF_ZONE_ID_LAST;
}

/* A stream whose records apply by time alone (no markers, PTWRITEs or positions). */
static int by_time_only(const struct jf_zone_stream *s)
{
	return !s->by_position && !s->marker_addr && !s->ptwrite;
}

/* Streams are added while decoding (the zone files a perf.data names); how their records
 * are announced is known once added. Every flow asks which kinds there are, so that is
 * summed up once per added stream. */
static void streams_changed(struct zone_filter *zf)
{
	struct jf_zone_image *zi = zf->zi;
	size_t i;

	zf->any_marker = zf->any_ptwrite = zf->any_position = 0;
	zf->nmarkers = 0;
	zf->markers_unknown = 0;
	for (i = 0; i < zi->nstreams; i++) {
		uint64_t m = zi->streams[i].marker_addr;

		if (m && zf->nmarkers < sizeof(zf->markers) / sizeof(zf->markers[0]))
			zf->markers[zf->nmarkers++] = m;
		else if (m)
			zf->markers_unknown = 1;
		zf->any_marker |= m != 0;
		zf->any_ptwrite |= zi->streams[i].ptwrite;
		zf->any_position |= zi->streams[i].by_position;
	}
	zf->known_streams = zi->nstreams;
	zf->time_floor_valid = 0;
}

/* Records that happened before time t (streams without markers: all of them; streams with
 * markers: only at the start of the trace, for what happened before it began).
 *
 * Every timed flow asks; mostly nothing is due. Only this function moves a by-time
 * stream's next record (the marker, PTWRITE and position paths take other streams), so
 * after a call the earliest next record of those streams bounds the next call: before
 * that time, with no stream added or fresh, there is nothing to do. */
static int apply_until(struct zone_filter *zf, uint64_t t, int markers_too,
		       struct jf_error *err)
{
	struct jf_zone_image *zi = zf->zi;
	uint64_t floor = UINT64_MAX;
	size_t i;

	if (zf->known_streams != zi->nstreams)
		streams_changed(zf);
	if (!markers_too && zf->time_floor_valid && t < zf->time_floor)
		return 0;
	zf->time_floor_valid = 0;
	for (i = 0; i < zi->nstreams; i++) {
		struct jf_zone_stream *s = &zi->streams[i];

		if (s->by_position ||
		    (!markers_too && !s->fresh && (s->marker_addr || s->ptwrite)))
			continue;
		s->fresh = 0;
		while (s->has_next && s->next.time <= t)
			if (jf_zone_apply_next(zi, s, JF_ZONE_BY_TIME, err))
				return -1;
	}
	/* (Streams skipped above are not fresh, or go by position and never apply here.) */
	for (i = 0; i < zi->nstreams; i++) {
		const struct jf_zone_stream *s = &zi->streams[i];

		if (by_time_only(s) && s->has_next && s->next.time < floor)
			floor = s->next.time;
	}
	zf->time_floor = floor;
	zf->time_floor_valid = 1;
	return 0;
}

/* The marker function's return instruction: it is straight-line code (see marker.c), so
 * the first return from its entry. Searched again only when the code map changed (the
 * runtime's code may be mapped later than the zone file). */
static uint64_t marker_return(struct zone_filter *zf, struct jf_zone_stream *s, uint8_t isa)
{
	uint64_t gen, ip = s->marker_addr;
	int i;

	/* Asked for every block that ends in a return: found once, it stays. */
	if (s->marker_ret)
		return s->marker_ret;
	gen = jf_codemap_generation(zf->zi->map);
	if (s->marker_ret_gen == gen)
		return 0;
	s->marker_ret_gen = gen;
	for (i = 0; i < 64; i++) {
		struct jf_insn_info info;

		if (jf_insn_at(zf->insns, (enum jf_isa)isa, ip, &info) < 0)
			return 0;
		if (info.cls == JF_INSN_RETURN) {
			s->marker_ret = ip;
			return ip;
		}
		if (info.cls != JF_INSN_OTHER)
			return 0; /* not the marker we know: no guessing */
		ip += info.size;
	}
	return 0;
}

/* Is this block a call of the stream's marker? It starts at the marker when the decoder
 * ends blocks at calls (jf_pt_config.end_on_call); otherwise libipt follows the direct
 * call, and the block ends with the marker's return. */
static int is_marker_block(struct zone_filter *zf, struct jf_zone_stream *s,
			   const struct jf_block *b)
{
	if (!s->marker_addr)
		return 0;
	if (b->start == s->marker_addr)
		return 1;
	return b->end == JF_END_RETURN && b->last == marker_return(zf, s, b->isa);
}

/* Whether block b may be a marker call (is_marker_block asks the streams): asked for every
 * block, and mostly not. */
static int may_be_marker(const struct zone_filter *zf, const struct jf_block *b)
{
	size_t i;

	if (b->end == JF_END_RETURN || zf->markers_unknown)
		return 1;
	for (i = 0; i < zf->nmarkers; i++)
		if (b->start == zf->markers[i])
			return 1;
	return 0;
}

/* A marker call: the next extension record of that stream (and perf's records that lead
 * up to it, e.g. the CODE_LOAD of a REGION_LOAD) applies here. */
static int apply_marker_call(struct zone_filter *zf, const struct jf_block *b,
			     struct jf_error *err)
{
	struct jf_zone_image *zi = zf->zi;
	struct jf_zone_stream *best = NULL;
	int is_marker = 0;
	size_t i;

	for (i = 0; i < zi->nstreams; i++) {
		struct jf_zone_stream *s = &zi->streams[i];

		if (!is_marker_block(zf, s, b))
			continue;
		is_marker = 1;
		if (s->has_next && (!best || s->next.time < best->next.time))
			best = s;
	}
	if (!best) {
		/* a marker call with nothing left to apply: counted, never guessed at */
		zi->stats.unmatched_markers += is_marker;
		return 0;
	}
	while (best->has_next) {
		int ext = is_ext(&best->next);

		if (jf_zone_apply_next(zi, best, JF_ZONE_BY_CALL, err))
			return -1;
		if (ext)
			break;
	}
	return 0;
}

/* PTWRITE(seq): every record up to seq applies here (idempotent with marker calls). */
static int apply_ptwrite(struct jf_zone_image *zi, uint64_t seq, struct jf_error *err)
{
	size_t i;

	for (i = 0; i < zi->nstreams; i++) {
		struct jf_zone_stream *s = &zi->streams[i];

		if (!s->ptwrite)
			continue;
		while (s->has_next && (!is_ext(&s->next) || s->next.seq <= seq)) {
			int last = is_ext(&s->next) && s->next.seq == seq;

			if (jf_zone_apply_next(zi, s, JF_ZONE_BY_PTWRITE, err))
				return -1;
			if (last)
				break;
		}
	}
	return 0;
}

/* The thread that record rec belongs to: extension records name it; perf's CODE_LOAD
 * too. */
static int32_t record_tid(const struct jf_zone_record *rec, int32_t tid)
{
	if (is_ext(rec))
		return (int32_t)rec->tid;
	if (rec->id == JF_JITDUMP_CODE_LOAD)
		return (int32_t)rec->u.code_load.tid;
	return tid;
}

/* Whether stream s's next record is thread tid's (and there is one). */
static int next_is_threads(const struct jf_zone_stream *s, int32_t tid)
{
	return s->has_next && record_tid(&s->next, tid) == tid;
}

/* Records of position streams that thread t has reached: count instructions decoded.
 * A record whose position fell inside the last block applies after it, and is counted
 * as late (that block was decoded with the code before it). */
static int apply_positions(struct jf_zone_image *zi, struct thread_count *t, uint64_t count,
			   uint64_t count_before, struct jf_error *err)
{
	uint64_t quiet_below = UINT64_MAX;
	size_t i;

	if (t->quiet_streams == zi->nstreams && t->quiet_taken == zi->nexts_taken &&
	    count < t->quiet_below)
		return 0;
	for (i = 0; i < zi->nstreams; i++) {
		struct jf_zone_stream *s = &zi->streams[i];

		if (!s->by_position)
			continue;
		while (next_is_threads(s, t->tid) && s->next.timestamp <= count) {
			if (s->next.timestamp < count && s->next.timestamp > count_before)
				zi->stats.late_in_block++;
			if (jf_zone_apply_next(zi, s, JF_ZONE_BY_POSITION, err))
				return -1;
		}
		if (next_is_threads(s, t->tid) && s->next.timestamp < quiet_below)
			quiet_below = s->next.timestamp;
	}
	t->quiet_below = quiet_below;
	t->quiet_taken = zi->nexts_taken;
	t->quiet_streams = zi->nstreams;
	return 0;
}

static int image_error_code(int32_t code)
{
	return code == -pte_nomap || code == -pte_bad_query || code == -pte_bad_insn;
}

/* A decode error in JIT code: the trace cannot have run over this image. Say which
 * region and version (or which freed region) it was decoded against. */
static void annotate_error(struct zone_filter *zf, struct jf_flow *f)
{
	struct jf_zone_image *zi = zf->zi;
	const struct jf_zone_region *r;
	const char *what = "";
	char msg[256];
	size_t n;
	uint64_t at = f->ip;

	if (f->u.error.phase != JF_PHASE_DECODE || !image_error_code(f->u.error.code))
		return;
	r = jf_zone_regions_find(&zi->regions, at);
	if (!r && zf->last_end) {
		/* the error is at the end of the last block, which may be in JIT code */
		at = zf->last_start;
		r = jf_zone_regions_find(&zi->regions, at);
	}
	if (!r) {
		at = f->ip;
		r = jf_zone_regions_find_freed(&zi->regions, at);
		what = "freed ";
	}
	if (!r)
		return;
	/* region first: the message is cut at 63 characters */
	snprintf(msg, sizeof(msg), "%s%s v%" PRIu32 "+0x%" PRIx64 ": %s", what, r->name,
		 r->version, at - r->addr, f->u.error.text);
	n = strlen(msg);
	if (n >= sizeof(f->u.error.text))
		n = sizeof(f->u.error.text) - 1;
	memcpy(f->u.error.text, msg, n);
	f->u.error.text[n] = 0;
	f->u.error.phase = JF_PHASE_IMAGE;
	zi->stats.mismatches++;
}

/* Called for every flow: each part is cleared as it is taken (nothing applied here makes
 * anything due), not the whole record copied and zeroed. */
static int apply_due(struct zone_filter *zf, struct jf_error *err)
{
	struct due *d = &zf->due;

	if (d->time) {
		d->time = 0;
		if (apply_until(zf, d->time_value, d->first_time, err))
			return -1;
		d->first_time = 0;
	}
	/* apply_until has summed up the streams; the kinds that none of them has are not
	 * asked for (a stream added since is summed up here). */
	if (zf->known_streams != zf->zi->nstreams)
		streams_changed(zf);
	if (d->marker) {
		d->marker = 0;
		if (zf->any_marker && may_be_marker(zf, &d->block) &&
		    apply_marker_call(zf, &d->block, err))
			return -1;
	}
	if (d->ptwrite) {
		d->ptwrite = 0;
		if (zf->any_ptwrite && apply_ptwrite(zf->zi, d->ptwrite_seq, err))
			return -1;
	}
	if (d->position) {
		d->position = 0;
		if (zf->any_position &&
		    apply_positions(zf->zi, d->thread, d->count, d->count_before, err))
			return -1;
	}
	return 0;
}

/* A damaged zone file, once, after the trace: a located error (the zone file's offset),
 * so every output counts it; its whole records applied as usual. */
static int report_damage(struct zone_filter *zf, struct jf_flow *f)
{
	size_t i;

	for (i = 0; i < zf->zi->nstreams; i++) {
		struct jf_zone_stream *s = &zf->zi->streams[i];
		const char *base = strrchr(s->path, '/');

		if (!s->damaged || s->damage_reported)
			continue;
		s->damage_reported = 1;
		zf->zi->stats.damaged_files++;
		memset(f, 0, sizeof(*f));
		f->kind = JF_FLOW_ERROR;
		f->flags = JF_FLOW_IP_SUPPRESSED;
		f->offset = s->damage_offset;
		f->u.error.phase = JF_PHASE_CONTAINER;
		snprintf(f->u.error.text, sizeof(f->u.error.text), "zone file %s damaged",
			 base ? base + 1 : s->path);
		return 1;
	}
	return 0;
}

/* The thread source's flows are counted for (a context record names it), and its count if
 * it has one yet. */
static int32_t source_tid(struct zone_filter *zf, uint32_t source,
			  struct thread_count **t)
{
	int32_t tid = -1 - (int32_t)source; /* until a context record names it */
	size_t i;

	for (i = 0; i < zf->nsources; i++)
		if (zf->sources[i].source == source)
			tid = zf->sources[i].tid;
	*t = NULL;
	for (i = 0; i < zf->nthreads && !*t; i++)
		if (zf->threads[i].tid == tid)
			*t = &zf->threads[i];
	return tid;
}

static struct thread_count *thread_of(struct zone_filter *zf, uint32_t source)
{
	struct thread_count *t;
	int32_t tid;

	if (zf->last_thread && zf->last_source == source)
		return zf->last_thread;
	zf->last_source = source;
	tid = source_tid(zf, source, &t);
	if (t)
		return zf->last_thread = t;
	if (zf->nthreads == sizeof(zf->threads) / sizeof(zf->threads[0]))
		return zf->last_thread = NULL;
	zf->threads[zf->nthreads].tid = tid;
	zf->threads[zf->nthreads].count = 0;
	zf->threads[zf->nthreads].quiet_below = 0;
	return zf->last_thread = &zf->threads[zf->nthreads++];
}

/* Keep each thread's instruction count; after every flow, its thread's position records
 * up to that count are due. */
static void count_position(struct zone_filter *zf, const struct jf_flow *f)
{
	struct thread_count *t;
	size_t i;

	if (f->kind == JF_FLOW_CONTEXT) {
		zf->last_thread = NULL;
		for (i = 0; i < zf->nsources && zf->sources[i].source != f->source; i++)
			;
		if (i == zf->nsources && i < sizeof(zf->sources) / sizeof(zf->sources[0]))
			zf->nsources++;
		if (i < zf->nsources) {
			zf->sources[i].source = f->source;
			zf->sources[i].tid = f->u.context.tid;
		}
	}
	t = thread_of(zf, f->source);
	if (!t)
		return;
	zf->due.count_before = t->count;
	if (f->kind == JF_FLOW_BLOCK)
		t->count += f->u.block.ninsn;
	zf->due.position = 1;
	zf->due.thread = t;
	zf->due.count = t->count;
}

/* A counting backend (a perf.data session with count_when_fast: jitflow/pt_fast.h) adds
 * instructions and blocks to its statistics without returning them, and its time span with
 * them: pass those on, beside what the records passed here count. Call after each call
 * of the inner decoder; rc and f are what it returned. */
static void pass_uncounted(struct zone_filter *zf, const struct jf_flow *f, int rc)
{
	const struct jf_decode_stats *in = zf->in_stats;
	uint64_t insns = in->insns - zf->in_insns, blocks = in->blocks - zf->in_blocks;

	if (rc > 0 && f->kind == JF_FLOW_BLOCK) {
		insns -= f->u.block.ninsn;
		blocks--;
	}
	zf->out_stats->insns += insns;
	zf->out_stats->blocks += blocks;
	zf->in_insns = in->insns;
	zf->in_blocks = in->blocks;
	if (in->has_time) {
		struct jf_decode_stats *out = zf->out_stats;

		if (!out->has_time || in->first_time < out->first_time)
			out->first_time = in->first_time;
		if (!out->has_time || in->last_time > out->last_time)
			out->last_time = in->last_time;
		out->has_time = 1;
	}
}

/* The count gate (jitflow/count_gate.h) for an inner decoder that can count blocks (stat on
 * a perf.data session): the blocks of a source after which apply_due would apply nothing.
 * That holds for a block whose time (if it has one) is below the time streams' next
 * record (time_floor, as apply_until found it after the last flow), whose thread's count
 * stays below its position streams' next record (quiet_below, while the streams' next
 * records are those it was found with), and which is no marker call: it starts at no
 * marker and does not end at a marker's return (found once: is_marker_block). Asked after
 * apply_due has run for the last flow returned. */
static int gate_limit(void *ctx, uint32_t source, struct jf_count_limit *limit)
{
	struct zone_filter *zf = ctx;
	const struct jf_zone_image *zi = zf->zi;
	struct thread_count *t;
	size_t i;

	if (zf->known_streams != zi->nstreams || zf->markers_unknown)
		return 0;
	/* Before the first time is seen, or where the floor is not known, only blocks
	 * without a time. */
	limit->time_below = zf->started && zf->time_floor_valid ? zf->time_floor : 0;
	limit->insns = UINT64_MAX;
	limit->starts = zf->markers;
	limit->nstarts = zf->nmarkers;
	limit->returns = zf->marker_rets;
	limit->nreturns = 0;
	limit->any_return = 0;
	for (i = 0; i < zi->nstreams; i++) {
		const struct jf_zone_stream *s = &zi->streams[i];

		if (!s->marker_addr)
			continue;
		if (!s->marker_ret || limit->nreturns == zf->nmarkers)
			limit->any_return = 1;
		else
			zf->marker_rets[limit->nreturns++] = s->marker_ret;
	}
	if (!zf->any_position)
		return 1;
	source_tid(zf, source, &t);
	if (!t || t->quiet_streams != zi->nstreams || t->quiet_taken != zi->nexts_taken ||
	    t->count >= t->quiet_below)
		return 0;
	limit->insns = t->quiet_below - t->count - 1;
	return 1;
}

/* Blocks of source counted by the gate: its thread's count, as count_position would have
 * kept it, and the last block, which a decode error after it is located by. */
static void gate_counted(void *ctx, uint32_t source, uint64_t insns,
			 const struct jf_block *last)
{
	struct zone_filter *zf = ctx;
	struct thread_count *t = thread_of(zf, source);

	if (t)
		t->count += insns;
	zf->last_start = last->start;
	zf->last_end = last->last;
}

static int filter_next(void *self, struct jf_flow *f, struct jf_error *err)
{
	struct zone_filter *zf = self;
	const struct jf_decode_stats *in;
	struct jf_decode_stats *out;
	int rc;

	if (apply_due(zf, err))
		return -1;
	rc = jf_decoder_next(zf->inner, f, err);
	pass_uncounted(zf, f, rc);
	/* Backends report trace size and clock facts on their own stats, some only at the
	 * end (a decoder in a child process). */
	in = zf->in_stats;
	out = zf->out_stats;
	out->trace_bytes = in->trace_bytes;
	out->time_is_ns = in->time_is_ns;
	out->time_is_synthetic = in->time_is_synthetic;
	if (rc == 0 && report_damage(zf, f))
		return 1;
	if (rc <= 0)
		return rc;

	if (f->flags & JF_FLOW_HAS_TIME) {
		zf->due.time = 1;
		zf->due.time_value = f->time;
		/* The first time seen: whatever the runtime wrote before the trace began is in
		 * place by then, markers or not (a trace's first flows are events, PSB+ and
		 * enable, before any block). */
		zf->due.first_time = !zf->started;
		zf->started = 1;
	}
	count_position(zf, f);
	if (f->kind == JF_FLOW_BLOCK) {
		zf->due.marker = 1;
		zf->due.block = f->u.block;
		zf->last_start = f->u.block.start;
		zf->last_end = f->u.block.last;
	} else if (f->kind == JF_FLOW_PTWRITE) {
		zf->due.ptwrite = 1;
		zf->due.ptwrite_seq = f->u.ptwrite.payload;
	} else if (f->kind == JF_FLOW_ERROR) {
		annotate_error(zf, f);
		zf->last_start = zf->last_end = 0;
	}
	return 1;
}

static void filter_free(void *self)
{
	struct zone_filter *zf = self;

	jf_decoder_free(zf->inner);
	jf_insn_cache_free(zf->insns);
	free(zf);
}

static const struct jf_decoder_ops filter_ops = { filter_next, filter_free };

struct jf_decoder *jf_zone_filter_new(struct jf_decoder *inner, struct jf_zone_image *zi,
				      struct jf_error *err)
{
	struct zone_filter *zf;

	if (!inner)
		return NULL;
	zf = calloc(1, sizeof(*zf));
	if (!zf) {
		jf_decoder_free(inner);
		jf_fail(err, "out of memory");
		return NULL;
	}
	zf->inner = inner;
	zf->zi = zi;
	zf->insns = jf_insn_cache_new(zi->map);
	if (!zf->insns) {
		filter_free(zf);
		jf_fail(err, "out of memory");
		return NULL;
	}
	zf->outer = jf_decoder_new(&filter_ops, zf);
	if (!zf->outer) {
		/* jf_decoder_new has freed zf (and inner with it) through filter_ops. */
		jf_fail(err, "out of memory");
		return NULL;
	}
	zf->in_stats = jf_decoder_stats(inner);
	zf->out_stats = jf_decoder_stats_mut(zf->outer);
	{
		const struct jf_count_gate gate = { zf, gate_limit, gate_counted };

		jf_decoder_offer_count_gate(inner, &gate);
	}
	return zf->outer;
}
