/* Guards and counters of PyPy's loops and bridges, from their machine code
 * (jitflow/pypylog_layout.h). */
#include "jitflow/pypylog_layout.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/codemap.h"
#include "jitflow/insn.h"

struct walk {
	const struct jf_pypylog *log;
	struct jf_pypylog_layout *out;
	size_t guards_cap, points_cap;
};

static void problem(struct jf_pypylog_layout *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void problem(struct jf_pypylog_layout *out, const char *fmt, ...)
{
	va_list ap;

	if (out->problems < sizeof(out->problem) / sizeof(out->problem[0])) {
		va_start(ap, fmt);
		vsnprintf(out->problem[out->problems], sizeof(out->problem[0]), fmt, ap);
		va_end(ap);
	}
	out->problems++;
}

static void trace_label(const struct jf_pypylog_trace *t, char *buf, size_t size)
{
	if (t->kind == JF_PYPY_LOOP)
		snprintf(buf, size, "Loop %" PRIu64, t->number);
	else
		snprintf(buf, size, "bridge out of Guard 0x%" PRIx64, t->guard);
}

/* The trace's bytes in map as the assembler left them: the dump that loaded its first byte,
 * then the dumps inside it written before its ops (logged once the assembler is done) or the
 * next trace's addresses were logged (the jump fix-ups). Later dumps are not the layout:
 * invalidating a guard_not_invalidated writes a jump to its stub over the code that follows
 * the guard, and the code before that jump is what ran until then. */
static int load_bytes(const struct jf_pypylog *log, size_t ti, struct jf_codemap *map,
		      struct jf_error *err)
{
	const struct jf_pypylog_trace *t = &log->traces[ti];
	uint64_t lo = t->gc_table ? t->gc_table : t->entry, hi = t->code_end;
	/* In the log's order, which is the order PyPy wrote (stamps can tie where a log is
	 * restamped onto a coarser clock). */
	uint32_t until = ti + 1 < log->ntraces ? log->traces[ti + 1].line : UINT32_MAX;
	uint32_t ops_line = t->nops ? log->ops[t->first_op].line : UINT32_MAX;
	size_t i, loaded = 0;

	for (i = 0; i < log->ndumps; i++) {
		const struct jf_pypylog_dump *d = &log->dumps[i];

		if (d->addr < lo || d->addr + d->size > hi)
			continue;
		if (d->line < t->line && d->addr == lo && d->addr + d->size == hi)
			loaded = i + 1; /* the newest full load before the addresses were logged */
	}
	if (!loaded)
		return 0;
	if (ops_line > log->dumps[loaded - 1].line && ops_line < until)
		until = ops_line;
	for (i = loaded - 1; i < log->ndumps; i++) {
		const struct jf_pypylog_dump *d = &log->dumps[i];

		if (d->line >= until)
			break;
		if (d->addr < lo || d->addr + d->size > hi)
			continue;
		if (jf_codemap_add_bytes(map, d->bytes, d->size, d->addr, "pypy", err))
			return -1;
	}
	return 1;
}

static int push_guard(struct walk *w, const struct jf_pypylog_guard_site *g)
{
	struct jf_pypylog_layout *o = w->out;

	if (o->nguards == w->guards_cap) {
		size_t cap = w->guards_cap ? w->guards_cap * 2 : 64;
		void *n = realloc(o->guards, cap * sizeof(*o->guards));

		if (!n)
			return -1;
		o->guards = n;
		w->guards_cap = cap;
	}
	o->guards[o->nguards++] = *g;
	return 0;
}

static int push_point(struct walk *w, const struct jf_pypylog_point *p)
{
	struct jf_pypylog_layout *o = w->out;

	if (o->npoints == w->points_cap) {
		size_t cap = w->points_cap ? w->points_cap * 2 : 64;
		void *n = realloc(o->points, cap * sizeof(*o->points));

		if (!n)
			return -1;
		o->points = n;
		w->points_cap = cap;
	}
	o->points[o->npoints++] = *p;
	return 0;
}

/* Bounded lists of addresses found by one linear walk. */
enum { MAX_SITES = 4096 };

struct sites {
	uint64_t branch[MAX_SITES], target[MAX_SITES];
	size_t nbranches;
	uint64_t counter[MAX_SITES];
	size_t ncounters;
	uint64_t stub[MAX_SITES], slot[MAX_SITES], by_slot[MAX_SITES];
	size_t nstubs;
};

/* x86-64: a stub is "push qword [rip + X]" (its guard's descr from the gc table slot);
 * a counter "movabs r11, COUNTER; inc qword [r11]". */
static void x86_site(struct jf_codemap *map, uint64_t ip, const struct jf_insn_info *info,
		     int stubs, struct sites *s)
{
	uint8_t b[13];

	memset(b, 0, sizeof(b));
	jf_codemap_read(map, ip, b, sizeof(b));
	if (stubs && b[0] == 0xff && b[1] == 0x35 && info->size == 6 && s->nstubs < MAX_SITES) {
		int32_t disp = (int32_t)((uint32_t)b[2] | (uint32_t)b[3] << 8 |
					 (uint32_t)b[4] << 16 | (uint32_t)b[5] << 24);

		s->slot[s->nstubs] = ip + 6 + (uint64_t)(int64_t)disp;
		s->stub[s->nstubs++] = ip;
	} else if (!stubs && b[0] == 0x49 && b[1] == 0xbb && info->size == 10 &&
		   s->ncounters < MAX_SITES) {
		uint8_t n[3] = { 0 };

		jf_codemap_read(map, ip + 10, n, sizeof(n));
		if (n[0] == 0x49 && n[1] == 0xff && n[2] == 0x03)
			s->counter[s->ncounters++] = ip;
	}
}

static uint32_t a64_word(struct jf_codemap *map, uint64_t ip)
{
	uint8_t b[4] = { 0 };

	jf_codemap_read(map, ip, b, sizeof(b));
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* AArch64 encodings the patterns below are made of. */
#define A64_LDR_LIT_X16(w)   (((w) & 0xff00001fu) == 0x58000010u) /* ldr x16, LABEL */
#define A64_STR_X16_FP16     0xf9000bb0u                          /* str x16, [x29, #16] */
#define A64_LDR_X0(t, n)     (0xf9400000u | (n) << 5 | (t))       /* ldr xt, [xn] */
#define A64_ADD_1(d)         (0x91000400u | (d) << 5 | (d))       /* add xd, xd, #1 */
#define A64_STR_X0(t, n)     (0xf9000000u | (n) << 5 | (t))       /* str xt, [xn] */
#define A64_MOVZ_X(w, d)     (((w) & 0xff80001fu) == (0xd2800000u | (d)))
#define A64_MOVK_X(w, d)     (((w) & 0xff80001fu) == (0xf2800000u | (d)))

/* AArch64: a stub is "ldr x16, SLOT; str x16, [x29, #16]" (the guard's descr from its gc
 * table slot into the frame's jf_descr); a counter is "movz/movk xn, COUNTER (up to four);
 * ldr xm, [xn]; add xm, xm, #1; str xm, [xn]", found at its ldr and placed at its movz. */
static void a64_site(struct jf_codemap *map, uint64_t ip, uint64_t from, int stubs,
		     struct sites *s)
{
	uint32_t w = a64_word(map, ip), t = w & 31, n = (w >> 5) & 31;
	uint64_t at;

	if (stubs && A64_LDR_LIT_X16(w) && a64_word(map, ip + 4) == A64_STR_X16_FP16 &&
	    s->nstubs < MAX_SITES) {
		int64_t imm19 = (int64_t)(((w >> 5) & 0x7ffff) ^ 0x40000) - 0x40000;

		s->slot[s->nstubs] = ip + (uint64_t)(imm19 * 4);
		s->stub[s->nstubs++] = ip;
	} else if (!stubs && w == A64_LDR_X0(t, n) && t != n &&
		   a64_word(map, ip + 4) == A64_ADD_1(t) &&
		   a64_word(map, ip + 8) == A64_STR_X0(t, n) && s->ncounters < MAX_SITES) {
		for (at = ip; at >= from + 4 && A64_MOVK_X(a64_word(map, at - 4), n); at -= 4)
			;
		if (at >= from + 4 && A64_MOVZ_X(a64_word(map, at - 4), n))
			s->counter[s->ncounters++] = at - 4;
	}
}

/* Walk [from, to) instruction by instruction; 0, or -1 where nothing decodes. */
static int walk_code(struct jf_insn_cache *ic, struct jf_codemap *map, enum jf_isa isa,
		     uint64_t from, uint64_t to, int stubs, struct sites *s, uint64_t *stop)
{
	uint64_t ip = from;

	while (ip < to) {
		struct jf_insn_info info;

		if (jf_insn_at(ic, isa, ip, &info) < 0) {
			*stop = ip;
			return -1;
		}
		if (info.cls == JF_INSN_COND && s->nbranches < MAX_SITES) {
			s->branch[s->nbranches] = ip;
			s->target[s->nbranches++] = info.target;
		} else if (isa == JF_ISA_A64) {
			a64_site(map, ip, from, stubs, s);
		} else {
			x86_site(map, ip, &info, stubs, s);
		}
		ip += info.size;
	}
	return 0;
}

/* guard_not_forced_2 (before a finish that leaves a forcible frame) gets no stub: its
 * descr is stored in the frame, and forcing the frame later resumes from it. */
static int has_stub(const struct jf_pypylog_op *op)
{
	return strcmp(op->name, "guard_not_forced_2") != 0;
}

/* AArch64's guard_nonnull_class branches to its stub twice: null, then not the class. */
static int two_branches(const struct jf_pypylog *log, const struct jf_pypylog_op *op)
{
	return log->isa == JF_ISA_A64 && strcmp(op->name, "guard_nonnull_class") == 0;
}

static int by_slot(const void *x, const void *y, void *ctx)
{
	const struct sites *s = ctx;
	uint64_t a = s->slot[*(const uint64_t *)x], b = s->slot[*(const uint64_t *)y];

	return a < b ? -1 : a > b;
}

static int layout_trace(struct walk *w, size_t ti, struct sites *s, struct jf_error *err)
{
	const struct jf_pypylog *log = w->log;
	const struct jf_pypylog_trace *t = &log->traces[ti];
	struct jf_codemap *map;
	struct jf_insn_cache *ic;
	char name[64];
	size_t i, k, nguard_ops = 0, nstubless = 0, nlabels = 0;
	uint64_t stop = 0;
	int rc;

	trace_label(t, name, sizeof(name));
	if (!t->entry || !t->failures || !t->code_end || !t->nops)
		return 0; /* not enough logged: nothing to find */
	map = jf_codemap_new();
	if (!map)
		return jf_fail(err, "out of memory");
	ic = jf_insn_cache_new(map);
	if (!ic) {
		jf_codemap_free(map);
		return jf_fail(err, "out of memory");
	}
	rc = load_bytes(log, ti, map, err);
	if (rc <= 0) {
		if (rc == 0)
			problem(w->out, "%s: no dump of its code in the log", name);
		goto done;
	}
	memset(s, 0, sizeof(*s));
	if (walk_code(ic, map, log->isa, t->entry, t->failures, 0, s, &stop) < 0 ||
	    walk_code(ic, map, log->isa, t->failures, t->code_end, 1, s, &stop) < 0) {
		problem(w->out, "%s: no instruction decodes at 0x%" PRIx64, name, stop);
		goto done;
	}
	for (i = 0; i < t->nops; i++) {
		const struct jf_pypylog_op *op = &log->ops[t->first_op + i];

		nguard_ops += op->kind == JF_PYPY_OP_GUARD;
		nstubless += op->kind == JF_PYPY_OP_GUARD && !has_stub(op);
		nlabels += op->kind == JF_PYPY_OP_LABEL;
	}
	if (s->nstubs != nguard_ops - nstubless) {
		problem(w->out, "%s: %zu guard ops (%zu without a stub) but %zu failure stubs",
			name, nguard_ops, nstubless, s->nstubs);
		goto done;
	}
	if (s->ncounters && s->ncounters != 1 + nlabels) {
		problem(w->out, "%s: %zu counters for %zu labels (expected one more)", name,
			s->ncounters, nlabels);
		goto done;
	}
	/* Guard descrs enter the gc table in guard order (other constants between them), so
	 * the stubs ordered by the slot they push are in guard order; the stubs themselves
	 * are not always (those reached from out-of-line paths come last). */
	for (k = 0; k < s->nstubs; k++) {
		if (s->slot[k] < t->gc_table || s->slot[k] >= t->entry) {
			problem(w->out, "%s: the stub at 0x%" PRIx64 " pushes from 0x%" PRIx64
				", outside the gc table", name, s->stub[k], s->slot[k]);
			goto done;
		}
		s->by_slot[k] = k;
	}
	qsort_r(s->by_slot, s->nstubs, sizeof(s->by_slot[0]), by_slot, s);
	for (k = 1; k < s->nstubs; k++) {
		if (s->slot[s->by_slot[k]] == s->slot[s->by_slot[k - 1]]) {
			problem(w->out, "%s: two stubs push the same gc table slot 0x%" PRIx64, name,
				s->slot[s->by_slot[k]]);
			goto done;
		}
	}
	for (i = 0, k = 0; i < t->nops; i++) {
		const struct jf_pypylog_op *op = &log->ops[t->first_op + i];
		struct jf_pypylog_guard_site g = { ti, op, op->descr, 0, 0, 0 };
		size_t j;

		if (op->kind != JF_PYPY_OP_GUARD)
			continue;
		if (has_stub(op))
			g.stub = s->stub[s->by_slot[k++]];
		for (j = 0; g.stub && j < s->nbranches; j++) {
			if (s->target[j] != g.stub)
				continue;
			if (g.extra_branch || (g.branch && !two_branches(log, op))) {
				problem(w->out, "%s: more branches into the stub of guard 0x%" PRIx64
					" than its op has", name, g.descr);
				break;
			}
			g.extra_branch = g.branch;
			g.branch = s->branch[j];
		}
		if (push_guard(w, &g) < 0) {
			rc = jf_fail(err, "out of memory");
			goto done;
		}
	}
	for (i = 0, k = 0; i < s->ncounters; i++) {
		struct jf_pypylog_point p = { ti, 0, 0, s->counter[i] };

		if (i == 0) {
			p.kind = t->kind == JF_PYPY_LOOP ? JF_PYPY_COUNT_ENTRY : JF_PYPY_COUNT_BRIDGE;
			p.id = t->kind == JF_PYPY_LOOP ? t->number : t->guard;
		} else {
			while (log->ops[t->first_op + k].kind != JF_PYPY_OP_LABEL)
				k++;
			p.kind = JF_PYPY_COUNT_LABEL;
			p.id = log->ops[t->first_op + k++].descr;
		}
		if (push_point(w, &p) < 0) {
			rc = jf_fail(err, "out of memory");
			goto done;
		}
	}
	w->out->traces_done++;
done:
	jf_insn_cache_free(ic);
	jf_codemap_free(map);
	return rc < 0 ? -1 : 0;
}

int jf_pypylog_layout(const struct jf_pypylog *log, struct jf_pypylog_layout **out,
		      struct jf_error *err)
{
	struct walk w = { log, calloc(1, sizeof(**out)), 0, 0 };
	struct sites *s = malloc(sizeof(*s));
	size_t i;

	*out = NULL;
	if (!w.out || !s) {
		free(w.out);
		free(s);
		return jf_fail(err, "out of memory");
	}
	for (i = 0; i < log->ntraces; i++) {
		if (layout_trace(&w, i, s, err) < 0) {
			free(s);
			jf_pypylog_layout_free(w.out);
			return -1;
		}
	}
	free(s);
	*out = w.out;
	return 0;
}

void jf_pypylog_layout_free(struct jf_pypylog_layout *layout)
{
	if (!layout)
		return;
	free(layout->guards);
	free(layout->points);
	free(layout);
}
