/* A PyPy JIT log written as a zone file (jitflow/pypylog_zone.h). */
#include "jitflow/pypylog_zone.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/emitter.h"
#include "jitflow/zone_format.h"

/* ---- output buffer: records in the writer's (host) byte order ---- */

struct out {
	uint8_t *buf;
	size_t len, cap;
	int failed;
	uint64_t seq, code_index;
	/* where the record being written applies */
	uint64_t stamp;
	uint32_t tid;
	const struct jf_tsc_conversion *conv; /* TSC stamps -> flow time (NULL: kept) */
};

static void put(struct out *o, const void *p, size_t n)
{
	if (o->failed)
		return;
	if (o->cap - o->len < n) {
		size_t cap = o->cap ? o->cap : 1 << 16;
		uint8_t *b;

		while (cap - o->len < n)
			cap *= 2;
		b = realloc(o->buf, cap);
		if (!b) {
			o->failed = 1;
			return;
		}
		o->buf = b;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

static void u16(struct out *o, uint16_t v) { put(o, &v, 2); }
static void u32(struct out *o, uint32_t v) { put(o, &v, 4); }
static void u64(struct out *o, uint64_t v) { put(o, &v, 8); }
static void str(struct out *o, const char *s) { put(o, s ? s : "", strlen(s ? s : "") + 1); }

static void prefix(struct out *o, uint32_t id, size_t body)
{
	u32(o, id);
	u32(o, (uint32_t)(JF_JITDUMP_PREFIX_SIZE + body));
	u64(o, o->stamp);
}

static void ext(struct out *o, uint32_t id, size_t body)
{
	prefix(o, id, JF_ZONE_EXT_PREFIX_SIZE + body);
	u64(o, ++o->seq);
	u32(o, o->tid);
	u16(o, JF_ZONE_EXT_VERSION);
	u16(o, 0);
}

static void load(struct out *o, uint64_t addr, const uint8_t *code, uint64_t size,
		 const char *name, uint32_t kind, uint64_t trace, uint64_t parent_trace,
		 uint64_t parent_guard)
{
	uint64_t index = o->code_index++;

	prefix(o, JF_JITDUMP_CODE_LOAD, JF_JITDUMP_CODE_LOAD_FIXED + strlen(name) + 1 + size);
	u32(o, 0);
	u32(o, o->tid);
	u64(o, addr);
	u64(o, addr);
	u64(o, size);
	u64(o, index);
	str(o, name);
	put(o, code, (size_t)size);
	ext(o, JF_ZONE_REGION_LOAD, JF_ZONE_REGION_LOAD_FIXED + strlen(name) + 1);
	u64(o, addr);
	u64(o, size);
	u64(o, index);
	u64(o, trace);
	u64(o, parent_trace);
	u64(o, parent_guard);
	u64(o, 0);
	u32(o, kind);
	u32(o, 0);
	str(o, name);
}

/* ---- what is live (regions loaded and not freed), to tell patches from loads ---- */

struct live {
	uint64_t *start, *end;
	size_t n, cap;
};

static int live_inside(const struct live *l, uint64_t a, uint64_t b)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->start[i] <= a && b <= l->end[i])
			return 1;
	return 0;
}

/* Free (in the output too) every live region overlapping [a, b), then add it. */
static int live_load(struct live *l, struct out *o, uint64_t a, uint64_t b,
		     struct jf_pypylog_zone_stats *st)
{
	size_t i = 0;

	while (i < l->n) {
		if (l->start[i] < b && a < l->end[i]) {
			ext(o, JF_ZONE_REGION_FREE, JF_ZONE_REGION_FREE_FIXED);
			u64(o, l->start[i]);
			u64(o, l->end[i] - l->start[i]);
			st->frees++;
			l->start[i] = l->start[l->n - 1];
			l->end[i] = l->end[--l->n];
			continue;
		}
		i++;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		uint64_t *s = realloc(l->start, cap * sizeof(*s)), *e;

		if (!s)
			return -1;
		l->start = s;
		e = realloc(l->end, cap * sizeof(*e));
		if (!e)
			return -1;
		l->end = e;
		l->cap = cap;
	}
	l->start[l->n] = a;
	l->end[l->n++] = b;
	return 0;
}

/* ---- names ---- */

static uint64_t trace_id(const struct jf_pypylog_trace *t)
{
	return t->kind == JF_PYPY_LOOP ? t->number : t->guard;
}

static void trace_name(const struct jf_pypylog_trace *t, char *buf, size_t size)
{
	if (t->kind == JF_PYPY_LOOP)
		snprintf(buf, size, "Loop %" PRIu64 " (%s)", t->number, t->name);
	else
		snprintf(buf, size, "bridge out of Guard 0x%" PRIx64, t->guard);
}

/* Guard kinds are op names; OP_NAME records number them from 1. */
struct kinds {
	const char *name[4096];
	size_t len[4096];
	uint8_t code_object[4096]; /* a Python code object (CODE_OBJECT), not an op name */
	size_t n;
};

static uint16_t kind_of_n(struct kinds *k, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		if (k->len[i] == len && !memcmp(k->name[i], name, len))
			return (uint16_t)(i + 1);
	if (k->n == sizeof(k->name) / sizeof(k->name[0]))
		return 0;
	k->name[k->n] = name;
	k->len[k->n++] = len;
	return (uint16_t)k->n;
}

static uint16_t kind_of(struct kinds *k, const char *name)
{
	return kind_of_n(k, name, strlen(name));
}

/* A merge point names "FUNCTION;FILE:FIRSTLINE-LINE": the code object is all but "-LINE". */
static uint16_t code_object_of(struct kinds *k, const char *code)
{
	const char *colon = strrchr(code, ':');
	const char *dash = colon ? strchr(colon, '-') : NULL;
	uint16_t id = kind_of_n(k, code, dash ? (size_t)(dash - code) : strlen(code));

	if (id)
		k->code_object[id - 1] = 1;
	return id;
}

/* CODE_OBJECT for "FUNCTION;FILE:FIRSTLINE" (PyPy 3's merge point names); a name in
 * another shape is kept whole as the function's name, with no file or line. */
static void code_object_record(struct out *o, uint16_t id, const char *s, size_t len)
{
	const char *semi = memchr(s, ';', len), *colon = NULL, *p;
	unsigned long line = 0;

	for (p = semi ? semi : s; p < s + len; p++)
		if (*p == ':')
			colon = p;
	if (semi && colon)
		for (p = colon + 1; p < s + len && *p >= '0' && *p <= '9' && line < 0xffffffffu / 10; p++)
			line = line * 10 + (unsigned long)(*p - '0');
	if (!semi || !colon || p != s + len || colon == s + len - 1) {
		semi = s + len;
		colon = s + len;
		line = 0;
	}
	ext(o, JF_ZONE_CODE_OBJECT, JF_ZONE_CODE_OBJECT_FIXED + (size_t)(semi - s) + 1 +
	    (size_t)(colon > semi ? colon - semi - 1 : 0) + 1);
	u64(o, id);
	u32(o, (uint32_t)line);
	u32(o, 0);
	put(o, s, (size_t)(semi - s));
	put(o, "", 1);
	if (colon > semi)
		put(o, semi + 1, (size_t)(colon - semi - 1));
	put(o, "", 1);
}

/* ---- one trace's description: guards, points ---- */

static const struct jf_pypylog_guard_site *guard_site(const struct jf_pypylog_layout *lay,
						       uint64_t descr)
{
	size_t i;

	for (i = 0; i < lay->nguards; i++)
		if (lay->guards[i].descr == descr)
			return &lay->guards[i];
	return NULL;
}

/* The bytecode index of the merge point before op (the interpreter resumes there). */
static uint32_t resume_pc(const struct jf_pypylog *log, const struct jf_pypylog_op *op,
			  const struct jf_pypylog_trace *t)
{
	const struct jf_pypylog_op *first = &log->ops[t->first_op];

	while (op > first) {
		op--;
		if (op->kind == JF_PYPY_OP_MERGE_POINT && op->depth == 0)
			return op->bytecode;
	}
	return 0;
}

/* Inline depths told apart: a merge point deeper than this (past PyPy's inlining) counts
 * at the deepest. */
#define INLINE_MAX 16

/* A frame of a trace's code: a Python code object (CODE_OBJECT id) at a bytecode index. */
struct py_frame {
	uint32_t pc;
	uint16_t code;
};

/* A pc map entry and the frames it runs in: frames[depth] is the innermost (the map's
 * entry), frames[0 .. depth - 1] those it was inlined into, outermost first. */
struct pc_range {
	uint32_t offset, op;
	uint16_t depth;
	struct py_frame frames[INLINE_MAX];
};

/* The trace's pc map: from each op's code on ("+N" counts from the trace's first byte,
 * its gc table), the last merge point's bytecode index and, as the entry's kind, its
 * Python code object (CODE_OBJECT ids, JF_PC_MAP_CODE_OBJECTS): the frame running there,
 * an inlined function's own bytecode inside its caller's loop. A merge point's depth (its
 * first argument) is the entry's inline depth, and the last merge points of the depths
 * above it are the frames it was inlined into (INLINE_FRAMES: the CALL of `run` around
 * the `f` it inlines). */
static size_t pc_ranges(const struct jf_pypylog *log, const struct jf_pypylog_trace *t,
			struct kinds *kinds, struct pc_range *r)
{
	const struct jf_pypylog_op *ops = &log->ops[t->first_op];
	struct pc_range cur;
	size_t i, n = 0;

	memset(&cur, 0, sizeof(cur));
	for (i = 0; i < t->nops; i++) {
		const struct jf_pypylog_op *op = &ops[i];
		uint64_t addr = t->gc_table + op->offset;
		const struct pc_range *last = n ? &r[n - 1] : NULL;

		if (op->kind == JF_PYPY_OP_MERGE_POINT && op->bytecode_name) {
			cur.depth = (uint16_t)(op->depth < INLINE_MAX ? op->depth : INLINE_MAX - 1);
			cur.frames[cur.depth].pc = op->bytecode;
			cur.frames[cur.depth].code = code_object_of(kinds, op->code);
			continue;
		}
		if (!op->has_offset || addr < t->entry || addr >= t->code_end ||
		    (last && (addr - t->entry == last->offset ||
			      (last->depth == cur.depth &&
			       !memcmp(last->frames, cur.frames,
				       (cur.depth + 1) * sizeof(cur.frames[0]))))))
			continue;
		r[n] = cur;
		r[n].offset = (uint32_t)(addr - t->entry);
		r[n].op = (uint32_t)i;
		n++;
	}
	return n;
}

static void pc_map(const struct jf_pypylog *log, const struct jf_pypylog_trace *t,
		   struct out *o, struct kinds *kinds)
{
	struct pc_range *r;
	size_t n, i, outer = 0;
	uint16_t d;

	if (!t->nops || !t->gc_table || t->entry < t->gc_table)
		return;
	if (!(r = calloc(t->nops, sizeof(*r)))) {
		o->failed = 1;
		return;
	}
	n = pc_ranges(log, t, kinds, r);
	if (n) {
		ext(o, JF_ZONE_PC_MAP, JF_ZONE_PC_MAP_FIXED + n * JF_ZONE_PC_MAP_ENTRY_SIZE);
		u64(o, t->entry);
		u32(o, (uint32_t)n);
		u32(o, JF_PC_MAP_CODE_OBJECTS);
	}
	for (i = 0; i < n; i++) {
		u32(o, r[i].offset);
		u32(o, r[i].frames[r[i].depth].pc);
		u32(o, r[i].op);
		u16(o, r[i].depth);
		u16(o, r[i].frames[r[i].depth].code);
		outer += r[i].depth;
	}
	if (outer) {
		ext(o, JF_ZONE_INLINE_FRAMES, JF_ZONE_PC_MAP_FIXED +
		    outer * JF_ZONE_PC_MAP_ENTRY_SIZE);
		u64(o, t->entry);
		u32(o, (uint32_t)outer);
		u32(o, 0);
		for (i = 0; i < n; i++)
			for (d = 0; d < r[i].depth; d++) {
				u32(o, r[i].offset);
				u32(o, r[i].frames[d].pc);
				u32(o, 0);
				u16(o, d);
				u16(o, r[i].frames[d].code);
			}
	}
	free(r);
}

static void guard_record(struct out *o, const struct jf_pypylog_guard_site *g, uint64_t branch,
			 uint64_t trace, uint32_t resume, uint16_t kind)
{
	ext(o, JF_ZONE_GUARD, JF_ZONE_GUARD_FIXED);
	u64(o, g->descr);
	u64(o, trace);
	u64(o, branch);
	u64(o, g->stub);
	u32(o, resume);
	u16(o, kind);
	u16(o, 0);
}

static void describe(const struct jf_pypylog *log, const struct jf_pypylog_layout *lay,
		     size_t ti, struct out *o, struct kinds *kinds,
		     struct jf_pypylog_zone_stats *st)
{
	const struct jf_pypylog_trace *t = &log->traces[ti];
	uint64_t header = 0;
	size_t i;

	for (i = 0; i < lay->nguards; i++) {
		const struct jf_pypylog_guard_site *g = &lay->guards[i];

		if (g->trace != ti || !g->branch)
			continue;
		guard_record(o, g, g->branch, trace_id(t), resume_pc(log, g->op, t),
			     kind_of(kinds, g->op->name));
		if (g->extra_branch) /* one GUARD a branch, both with the guard's id */
			guard_record(o, g, g->extra_branch, trace_id(t), resume_pc(log, g->op, t),
				     kind_of(kinds, g->op->name));
		st->guards++;
	}
	for (i = 0; i < lay->npoints; i++) {
		const struct jf_pypylog_point *p = &lay->points[i];

		if (p->trace != ti)
			continue;
		ext(o, JF_ZONE_POINT, JF_ZONE_POINT_FIXED);
		u64(o, trace_id(t));
		u64(o, p->addr);
		u64(o, p->id);
		u32(o, p->kind == JF_PYPY_COUNT_ENTRY ? JF_POINT_ENTRY :
		       p->kind == JF_PYPY_COUNT_LABEL ? JF_POINT_LABEL : JF_POINT_BRIDGE);
		u32(o, 0);
		st->points++;
		if (p->kind == JF_PYPY_COUNT_LABEL)
			header = p->addr;
	}
	if (t->kind == JF_PYPY_LOOP && header) {
		/* the loop's iterations begin at its last label (the preamble runs once) */
		ext(o, JF_ZONE_EVENT, JF_ZONE_EVENT_FIXED);
		u32(o, JF_EVENT_LOOP_HEADER);
		u32(o, 0);
		u64(o, header);
	}
	pc_map(log, t, o, kinds);
}

/* The trace a dump loads (its whole [gc table, end)), or -1. */
static long loaded_trace(const struct jf_pypylog *log, size_t di)
{
	const struct jf_pypylog_dump *d = &log->dumps[di];
	size_t i;

	for (i = 0; i < log->ntraces; i++) {
		const struct jf_pypylog_trace *t = &log->traces[i];
		uint64_t lo = t->gc_table ? t->gc_table : t->entry;
		size_t j;

		/* The dump holds [lo, code_end) and the entry lies inside it (a damaged log can
		 * put the entry before its gc table or past its code's end). */
		if (!t->entry || d->addr != lo || d->addr + d->size != t->code_end ||
		    t->entry < lo || t->entry > t->code_end || d->tsc > t->tsc)
			continue;
		/* the newest such dump before the trace's addresses were logged */
		for (j = di + 1; j < log->ndumps; j++)
			if (log->dumps[j].addr == lo && log->dumps[j].size == d->size &&
			    log->dumps[j].tsc <= t->tsc)
				break;
		if (j == log->ndumps)
			return (long)i;
	}
	return -1;
}

/* Traces that no dump loaded (loaded[i]: build saw a dump load trace i); see
 * jf_pypylog_zone_stats. */
static void count_unloaded(const struct jf_pypylog *log, const uint8_t *loaded,
			   struct jf_pypylog_zone_stats *st)
{
	size_t ti;

	for (ti = 0; ti < log->ntraces; ti++) {
		if (loaded[ti])
			continue;
		if (!st->unloaded++)
			st->first_unloaded = log->traces[ti].line;
	}
}

static uint64_t owner_of_guard(const struct jf_pypylog *log, const struct jf_pypylog_layout *lay,
			       uint64_t descr)
{
	const struct jf_pypylog_guard_site *g = guard_site(lay, descr);

	return g ? trace_id(&log->traces[g->trace]) : 0;
}

static void stamp(struct out *o, const struct jf_pypylog_dump *d,
		  const struct jf_pypylog_placement *place, size_t di)
{
	if (!place) {
		o->stamp = o->conv ? jf_tsc_to_ns(o->conv, d->tsc) : d->tsc;
		return;
	}
	if (place->at[di].placed) {
		o->stamp = place->at[di].position;
		o->tid = (uint32_t)place->at[di].tid;
	} else {
		o->stamp = UINT64_MAX; /* never ran */
	}
}

/* Code the log never wrote but the recording saw run, up to (not including) block
 * `before`: loaded with the bytes it ran, named by its address. */
static int load_foreign(const struct jf_pypylog_placement *place, size_t *next,
			uint64_t before, struct out *o, struct live *live,
			struct jf_pypylog_zone_stats *st)
{
	char name[64];

	for (; *next < place->nforeigners && place->foreigners[*next].block < before; ++*next) {
		const struct jf_pypylog_foreign *f = &place->foreigners[*next];

		o->stamp = f->position;
		o->tid = (uint32_t)f->tid;
		if (live_load(live, o, f->pc, f->pc + f->size, st) < 0)
			return -1;
		snprintf(name, sizeof(name), "anonymous code 0x%" PRIx64, f->pc);
		load(o, f->pc, f->bytes, f->size, name, JF_REGION_OTHER, 0, 0, 0);
		st->foreign++;
	}
	return 0;
}

static void header(struct out *o, int arch_timestamp)
{
	u32(o, JF_JITDUMP_MAGIC);
	u32(o, JF_JITDUMP_VERSION);
	u32(o, JF_JITDUMP_HEADER_SIZE);
	u32(o, 62); /* EM_X86_64: PyPy's x86-64 backend */
	u32(o, 0);
	u32(o, o->tid);
	u64(o, 0);
	u64(o, arch_timestamp ? JF_JITDUMP_FLAG_ARCH_TIMESTAMP : 0);
}

static int build(const struct jf_pypylog *log, const struct jf_pypylog_layout *lay,
		 const struct jf_pypylog_placement *place, struct out *o,
		 struct jf_pypylog_zone_stats *st)
{
	struct kinds *kinds = calloc(1, sizeof(*kinds));
	uint8_t *loaded = calloc(log->ntraces ? log->ntraces : 1, 1);
	struct live live = { 0 };
	size_t i, di, fi = 0;
	char name[512];

	if (!kinds || !loaded) {
		free(kinds);
		free(loaded);
		return -1;
	}
	o->tid = place ? (uint32_t)place->first_tid : 0;
	header(o, !place && !o->conv);
	/* Guard kinds first (they apply before any code). */
	for (i = 0; i < lay->nguards; i++)
		kind_of(kinds, lay->guards[i].op->name);
	for (i = 0; i < log->nops; i++)
		if (log->ops[i].kind == JF_PYPY_OP_MERGE_POINT && log->ops[i].bytecode_name)
			code_object_of(kinds, log->ops[i].code);
	o->stamp = 0;
	if (place) {
		ext(o, JF_ZONE_MARKER, JF_ZONE_MARKER_FIXED);
		u64(o, 0);
		u32(o, JF_ZONE_MARKER_POSITION);
		u32(o, 0);
	}
	for (i = 0; i < kinds->n; i++) {
		if (kinds->code_object[i]) {
			code_object_record(o, (uint16_t)(i + 1), kinds->name[i], kinds->len[i]);
			st->code_objects++;
			continue;
		}
		ext(o, JF_ZONE_OP_NAME, JF_ZONE_OP_NAME_FIXED + kinds->len[i] + 1);
		u16(o, (uint16_t)(i + 1));
		u16(o, 0);
		u32(o, 0);
		put(o, kinds->name[i], kinds->len[i]);
		put(o, "", 1);
	}
	for (di = 0; di < log->ndumps; di++) {
		const struct jf_pypylog_dump *d = &log->dumps[di];
		long ti = loaded_trace(log, di);

		if (place && load_foreign(place, &fi, place->at[di].placed ? place->at[di].block :
					  UINT64_MAX, o, &live, st) < 0)
			goto fail;
		stamp(o, d, place, di);
		if (ti >= 0) {
			const struct jf_pypylog_trace *t = &log->traces[ti];
			int bridge = t->kind == JF_PYPY_BRIDGE;

			loaded[ti] = 1;
			if (live_load(&live, o, d->addr, d->addr + d->size, st) < 0)
				goto fail;
			trace_name(t, name, sizeof(name));
			if (t->entry > d->addr) {
				char gc[560];

				snprintf(gc, sizeof(gc), "gc table of %s", name);
				load(o, d->addr, d->bytes, t->entry - d->addr, gc, JF_REGION_OTHER,
				     0, 0, 0);
			}
			load(o, t->entry, d->bytes + (t->entry - d->addr), t->code_end - t->entry,
			     name, bridge ? JF_REGION_BRIDGE : JF_REGION_TRACE, trace_id(t),
			     bridge ? owner_of_guard(log, lay, t->guard) : 0, bridge ? t->guard : 0);
			describe(log, lay, (size_t)ti, o, kinds, st);
			st->loads++;
		} else if (live_inside(&live, d->addr, d->addr + d->size)) {
			ext(o, JF_ZONE_PATCH, JF_ZONE_PATCH_FIXED + d->size + sizeof("pypy"));
			u64(o, d->addr);
			u32(o, (uint32_t)d->size);
			u32(o, 0);
			put(o, d->bytes, d->size);
			str(o, "pypy");
			st->patches++;
		} else {
			if (live_load(&live, o, d->addr, d->addr + d->size, st) < 0)
				goto fail;
			snprintf(name, sizeof(name), "pypy helper 0x%" PRIx64, d->addr);
			load(o, d->addr, d->bytes, d->size, name, JF_REGION_TRAMPOLINE, 0, 0, 0);
			st->helpers++;
		}
	}
	if (place && load_foreign(place, &fi, UINT64_MAX, o, &live, st) < 0)
		goto fail;
	count_unloaded(log, loaded, st);
	free(live.start);
	free(live.end);
	free(kinds);
	free(loaded);
	return o->failed ? -1 : 0;
fail:
	free(live.start);
	free(live.end);
	free(kinds);
	free(loaded);
	return -1;
}

/* o's records into out_path; frees the buffer. */
static int write_out(struct out *o, const char *out_path, struct jf_error *err)
{
	FILE *f;
	int rc = 0;

	if (o->failed) {
		free(o->buf);
		return jf_fail(err, "out of memory writing %s", out_path);
	}
	f = fopen(out_path, "wb");
	if (!f || fwrite(o->buf, 1, o->len, f) != o->len)
		rc = jf_fail(err, "%s: cannot write: %m", out_path);
	if (f && fclose(f) && !rc)
		rc = jf_fail(err, "%s: cannot write: %m", out_path);
	free(o->buf);
	return rc;
}

int jf_pypylog_write_zone(const struct jf_pypylog *log, const struct jf_pypylog_layout *lay,
			  const struct jf_pypylog_placement *place,
			  const struct jf_tsc_conversion *conv, const char *out_path,
			  struct jf_pypylog_zone_stats *stats, struct jf_error *err)
{
	struct out o = { 0 };

	memset(stats, 0, sizeof(*stats));
	o.conv = place ? NULL : conv;
	if (build(log, lay, place, &o, stats) < 0)
		o.failed = 1;
	return write_out(&o, out_path, err);
}

static uint32_t event_of(const struct jf_pypylog_mark *m)
{
	switch (m->kind) {
	case JF_PYPY_MARK_PHASE_BEGIN: return JF_EVENT_PHASE_BEGIN;
	case JF_PYPY_MARK_PHASE_END: return JF_EVENT_PHASE_END;
	default: return JF_EVENT_ITERATION;
	}
}

/* The trace each tracing section made: the loop or bridge whose jit-backend-addr line
 * lies inside it on its thread (0: none, e.g. an aborted trace). made[i] is set at the
 * section's begin mark i; end_of[i] is its end mark (SIZE_MAX: cut short). */
static void traces_made(const struct jf_pypylog *log,
			const struct jf_pypylog_clock_placement *pl, uint64_t *made, size_t *end_of)
{
	size_t i, j, t = 0;

	for (i = 0; i < log->nmarks; i++) {
		int depth = 0;

		end_of[i] = SIZE_MAX;
		made[i] = 0;
		if (log->marks[i].kind != JF_PYPY_MARK_PHASE_BEGIN || !pl->at[i].placed)
			continue;
		for (j = i + 1; j < log->nmarks && end_of[i] == SIZE_MAX; j++) {
			if (!pl->at[j].placed || pl->at[j].tid != pl->at[i].tid)
				continue;
			if (log->marks[j].kind == JF_PYPY_MARK_PHASE_BEGIN)
				depth++;
			else if (log->marks[j].kind == JF_PYPY_MARK_PHASE_END && depth-- == 0)
				end_of[i] = j;
		}
	}
	/* Traces in log order, tracing sections in log order: the innermost tracing section
	 * open at a trace's line made it. */
	for (t = 0; t < log->ntraces; t++) {
		uint32_t line = log->traces[t].line;
		size_t best = SIZE_MAX;

		for (i = 0; i < log->nmarks && log->marks[i].line < line; i++)
			if (log->marks[i].kind == JF_PYPY_MARK_PHASE_BEGIN &&
			    log->marks[i].phase == JF_PHASE_TRACING &&
			    (end_of[i] == SIZE_MAX || log->marks[end_of[i]].line > line))
				best = i;
		if (best != SIZE_MAX && !made[best])
			made[best] = trace_id(&log->traces[t]);
	}
}

static void event(struct out *o, uint32_t kind, uint64_t arg)
{
	ext(o, JF_ZONE_EVENT, JF_ZONE_EVENT_FIXED);
	u32(o, kind);
	u32(o, 0);
	u64(o, arg);
}

int jf_pypylog_write_marks_zone(const struct jf_pypylog *log,
				const struct jf_pypylog_clock_placement *place, int32_t tid,
				const char *out_path, uint64_t *events, struct jf_error *err)
{
	struct out o = { 0 };
	size_t n = log->nmarks ? log->nmarks : 1, i;
	uint64_t *made = calloc(n, sizeof(*made)), *ending = calloc(n, sizeof(*ending));
	size_t *end_of = calloc(n, sizeof(*end_of));

	*events = 0;
	if (!made || !ending || !end_of) {
		free(made);
		free(ending);
		free(end_of);
		return jf_fail(err, "out of memory writing %s", out_path);
	}
	traces_made(log, place, made, end_of);
	for (i = 0; i < log->nmarks; i++)
		if (made[i] && end_of[i] != SIZE_MAX)
			ending[end_of[i]] = made[i];
	o.tid = (uint32_t)tid;
	header(&o, 0);
	ext(&o, JF_ZONE_MARKER, JF_ZONE_MARKER_FIXED);
	u64(&o, 0);
	u32(&o, JF_ZONE_MARKER_POSITION);
	u32(&o, 0);
	for (i = 0; i < log->nmarks; i++) {
		const struct jf_pypylog_mark *m = &log->marks[i];

		if (!place->at[i].placed || place->at[i].tid != tid)
			continue;
		o.stamp = place->at[i].position;
		event(&o, event_of(m), m->kind == JF_PYPY_MARK_ITERATION ? m->arg : m->phase);
		++*events;
		/* The trace this tracing section makes: what its tracing and the compiling
		 * inside cost (the analysis's trace-making table). */
		if (made[i]) {
			event(&o, JF_EVENT_TRACE_START, made[i]);
			++*events;
		}
		if (ending[i]) {
			event(&o, JF_EVENT_COMPILE_END, ending[i]);
			++*events;
		}
	}
	free(made);
	free(ending);
	free(end_of);
	return write_out(&o, out_path, err);
}
