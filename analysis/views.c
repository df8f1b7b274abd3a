/* Data for the views (jitflow/views.h): folded stacks, timeline buckets per thread and the
 * events of the code's life, collected as the flow is analysed. A listener of the analysis
 * events (listeners.h): jf_views_listener at the end of this file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "jitflow/emitter.h"

/* ---- per-thread view state ---------------------------------------------------------- */

struct view_thread {
	int32_t tid;
	struct jf_timeline_series by_time, by_insns;
	uint32_t act;                 /* activity of the last block (time goes to it) */
	int has_act;
	uint32_t first_act;           /* activity of the part's first block (for merging) */
	int first_act_valid;
	/* The last block's frame, reused while the code and the zone state are the same. */
	int frame_valid;
	uint64_t frame_gen, frame_map_gen;
	int64_t frame_region;
	enum jf_code_class frame_cls;
	const char *frame_name;
	uint32_t frame_stack, frame_act;
	int bc_valid;
	int32_t bc_index;
	uint32_t bc_stack;
};

/* The views' own state: a listener of the analysis events (listeners.h). */
struct jf_views_state {
	struct jf_stack_result *stacks;   size_t nstacks, stacks_cap;
	struct jf_index_map stack_by_key;
	struct jf_code_line *lines;       size_t nlines, lines_cap;
	struct jf_index_map line_by_key;
	struct jf_activity *acts;         size_t nacts, acts_cap;
	struct jf_index_map act_by_key;
	struct view_thread *threads;      size_t nthreads, threads_cap, last_thread;
	struct jf_timeline_event *events; size_t nevents, events_cap;
	uint64_t events_dropped;
	uint64_t generation;              /* zone records applied: frames may have changed */
	int has_time;
	uint64_t last_time;               /* the latest timestamp of any thread */
	/* The block being counted. */
	struct view_thread *cur;
	uint64_t block_pos, attributed;
};


static struct view_thread *view_thread(struct jf_views_state *v, int32_t tid)
{
	size_t i = v->last_thread;

	if (i < v->nthreads && v->threads[i].tid == tid)
		return &v->threads[i];
	for (i = 0; i < v->nthreads; i++) {
		if (v->threads[i].tid == tid) {
			v->last_thread = i;
			return &v->threads[i];
		}
	}
	if (jf_grow((void **)&v->threads, &v->threads_cap, v->nthreads, sizeof(*v->threads)) < 0)
		return NULL;
	memset(&v->threads[i], 0, sizeof(v->threads[i]));
	v->threads[i].tid = tid;
	v->last_thread = i;
	v->nthreads++;
	return &v->threads[i];
}

/* ---- tables keyed by their content -------------------------------------------------- */

static int same_stack(const struct jf_stack_result *s, int32_t tid, uint8_t cls, const char *name,
		      int has_range, uint32_t from, uint32_t to)
{
	return s->tid == tid && s->cls == cls && s->has_range == has_range &&
	       s->pc_from == from && s->pc_to == to &&
	       !strncmp(s->region, name, sizeof(s->region) - 1);
}

static int32_t stack_index(struct jf_views_state *v, int32_t tid, uint8_t cls, const char *name,
			   int has_range, uint32_t from, uint32_t to)
{
	uint64_t key = jf_hash_string(name, ((uint64_t)(uint32_t)tid << 8 | cls) * 0x9e3779b97f4a7c15ull ^
				      ((uint64_t)from << 33 | (uint64_t)to << 1 | (has_range != 0)));
	uint32_t idx;

	for (;; key++) {
		if (!jf_index_map_get(&v->stack_by_key, key, &idx))
			break;
		if (same_stack(&v->stacks[idx], tid, cls, name, has_range, from, to))
			return (int32_t)idx;
	}
	if (jf_grow((void **)&v->stacks, &v->stacks_cap, v->nstacks, sizeof(*v->stacks)) < 0 ||
	    jf_index_map_put(&v->stack_by_key, key, (uint32_t)v->nstacks) < 0)
		return -1;
	v->stacks[v->nstacks].tid = tid;
	v->stacks[v->nstacks].cls = cls;
	v->stacks[v->nstacks].has_range = (uint8_t)(has_range != 0);
	v->stacks[v->nstacks].pc_from = from;
	v->stacks[v->nstacks].pc_to = to;
	snprintf(v->stacks[v->nstacks].region, sizeof(v->stacks[0].region), "%s", name);
	return (int32_t)v->nstacks++;
}

static int32_t activity_index(struct jf_views_state *v, uint8_t cls, uint64_t trace_id,
			      const char *name)
{
	uint64_t key = jf_hash_string(name, (trace_id * 0x100000001b3ull) ^ cls);
	uint32_t idx;

	for (;; key++) {
		const struct jf_activity *x;

		if (!jf_index_map_get(&v->act_by_key, key, &idx))
			break;
		x = &v->acts[idx];
		if (x->cls == cls && x->trace_id == trace_id &&
		    !strncmp(x->name, name, sizeof(x->name) - 1))
			return (int32_t)idx;
	}
	if (jf_grow((void **)&v->acts, &v->acts_cap, v->nacts, sizeof(*v->acts)) < 0 ||
	    jf_index_map_put(&v->act_by_key, key, (uint32_t)v->nacts) < 0)
		return -1;
	v->acts[v->nacts].cls = cls;
	v->acts[v->nacts].trace_id = trace_id;
	snprintf(v->acts[v->nacts].name, sizeof(v->acts[0].name), "%s", name);
	return (int32_t)v->nacts++;
}

/* ---- bucket series -------------------------------------------------------------------- */

/* Width doubles; entries of neighbouring buckets merge, keeping first-appearance order. */
static void coarsen(struct jf_timeline_series *s)
{
	size_t i, out = 0, bucket_start = 0;

	s->width *= 2;
	for (i = 0; i < s->nentries; i++) {
		struct jf_bucket_entry e = s->entries[i];
		size_t j;

		e.bucket /= 2;
		if (!out || s->entries[out - 1].bucket != e.bucket)
			bucket_start = out;
		for (j = bucket_start; j < out && s->entries[j].what != e.what; j++)
			;
		if (j < out)
			s->entries[j].amount += e.amount;
		else
			s->entries[out++] = e;
	}
	s->nentries = out;
}

/* Make room for bucket numbers up to position last (in clock units). */
static void fit(struct jf_timeline_series *s, uint64_t first_pos, uint64_t last_pos,
		uint64_t max_buckets)
{
	if (!s->width)
		s->width = 1;
	for (;;) {
		uint64_t first = s->nentries ? s->entries[0].bucket : first_pos / s->width;
		uint64_t lo = first_pos / s->width < first ? first_pos / s->width : first;
		uint64_t hi = last_pos / s->width;

		if (s->nentries && s->entries[s->nentries - 1].bucket > hi)
			hi = s->entries[s->nentries - 1].bucket;
		if (hi - lo < max_buckets)
			return;
		coarsen(s);
	}
}

static int put(struct jf_timeline_series *s, uint64_t bucket, uint32_t what, uint64_t amount)
{
	size_t i = s->nentries;

	if (!amount)
		return 0;
	while (i > 0 && s->entries[i - 1].bucket > bucket)
		i--;
	/* i: one past the last entry at or before bucket */
	{
		size_t j = i;

		while (j > 0 && s->entries[j - 1].bucket == bucket) {
			if (s->entries[j - 1].what == what) {
				s->entries[j - 1].amount += amount;
				return 0;
			}
			j--;
		}
	}
	if (jf_grow((void **)&s->entries, &s->cap, s->nentries, sizeof(*s->entries)) < 0)
		return -1;
	memmove(&s->entries[i + 1], &s->entries[i], (s->nentries - i) * sizeof(*s->entries));
	s->entries[i].bucket = bucket;
	s->entries[i].what = what;
	s->entries[i].amount = amount;
	s->nentries++;
	return 0;
}

/* amount spread over [from, to) in proportion to each bucket's share of it (exact when
 * amount is the length, as for time and instructions). to == from: all at from. */
static int add_span(const struct jf_analysis *a, struct jf_timeline_series *s, uint64_t from,
		    uint64_t to, uint32_t what, uint64_t amount)
{
	uint64_t pos, given = 0, len = to > from ? to - from : 0;

	if (!amount)
		return 0;
	fit(s, from, len ? to - 1 : from, a->cfg.timeline_buckets);
	if (!len)
		return put(s, from / s->width, what, amount);
	for (pos = from; pos < to;) {
		uint64_t b = pos / s->width, end = (b + 1) * s->width;
		uint64_t share;

		if (end > to || end <= pos)
			end = to;
		share = end == to ? amount - given :
			(uint64_t)((long double)amount * (long double)(end - from) / (long double)len) - given;
		if (put(s, b, what, share) < 0)
			return -1;
		given += share;
		pos = end;
	}
	return 0;
}

/* ---- hooks from the flow ----------------------------------------------------------- */

/* The frame (stack and activity) of the block about to be counted. */
static int block_counted(struct jf_analysis *a, void *self, const struct jf_block_event *e)
{
	struct jf_views_state *v = self;
	const struct live_region *r = e->r;
	const struct jf_block *b = e->b;
	enum jf_code_class cls = e->cls;
	int32_t tid = e->tid, trace = e->trace;
	struct view_thread *vt;
	const char *name = "";
	uint64_t gen;
	int64_t region = r ? (int64_t)r->region : -1;

	gen = a->cfg.map ? jf_codemap_generation(a->cfg.map) : 0;
	vt = view_thread(v, tid);
	if (!vt)
		return -1;
	v->cur = vt;
	v->block_pos = a->insns;
	v->attributed = 0;
	if (!r && a->cfg.map)
		name = jf_codemap_lookup(a->cfg.map, b->start, NULL);
	if (!name)
		name = "";
	if (!vt->frame_valid || vt->frame_gen != v->generation || vt->frame_map_gen != gen ||
	    vt->frame_region != region || vt->frame_cls != cls ||
	    (!r && vt->frame_name != name)) {
		int32_t st, act;

		if (r)
			name = a->regions[r->region].name;
		st = stack_index(v, tid, (uint8_t)cls, name, 0, 0, 0);
		if (trace >= 0 && (cls == JF_CLASS_TRACE || cls == JF_CLASS_BRIDGE))
			act = activity_index(v, (uint8_t)cls, a->traces[trace].trace_id, "");
		else if (r && jf_split_of(cls) == JF_SPLIT_JITTED)
			act = activity_index(v, (uint8_t)cls, 0, a->regions[r->region].name);
		else
			act = activity_index(v, (uint8_t)cls, 0, "");
		if (st < 0 || act < 0)
			return -1;
		vt->frame_valid = 1;
		vt->frame_gen = v->generation;
		vt->frame_map_gen = gen;
		vt->frame_region = region;
		vt->frame_cls = cls;
		vt->frame_name = r ? NULL : name;
		vt->frame_stack = (uint32_t)st;
		vt->frame_act = (uint32_t)act;
		vt->bc_valid = 0;
	}
	vt->act = vt->frame_act;
	vt->has_act = 1;
	if (!vt->first_act_valid) {
		vt->first_act = vt->frame_act;
		vt->first_act_valid = 1;
	}
	return add_span(a, &vt->by_insns, v->block_pos, v->block_pos + b->ninsn, vt->frame_act, b->ninsn);
}

/* n instructions of the block attributed to bytecode range b. */
static int bytecode_insns(struct jf_analysis *a, void *self, int32_t b, uint32_t inline_chain,
			  uint32_t n)
{
	struct jf_views_state *v = self;
	struct view_thread *vt = v->cur;

	(void)inline_chain; /* the views count bytecode ranges, not frames */
	if (!vt || b < 0)
		return 0;
	if (!vt->bc_valid || vt->bc_index != b) {
		/* A copy: adding the stack may move the table. */
		struct jf_stack_result base = v->stacks[vt->frame_stack];
		int32_t st = stack_index(v, vt->tid, base.cls, base.region, 1,
					 a->bytecodes[b].pc_from, a->bytecodes[b].pc_to);

		if (st < 0)
			return -1;
		vt->bc_valid = 1;
		vt->bc_index = b;
		vt->bc_stack = (uint32_t)st;
	}
	v->stacks[vt->bc_stack].insns += n;
	v->attributed += n;
	return 0;
}

static int32_t line_index(struct jf_views_state *v, uint64_t region_key, uint32_t offset,
			  int *created)
{
	uint64_t key = (region_key * 0x9e3779b97f4a7c15ull) ^ offset;
	uint32_t idx;

	*created = 0;
	for (;; key++) {
		if (!jf_index_map_get(&v->line_by_key, key, &idx))
			break;
		if (v->lines[idx].region_key == region_key && v->lines[idx].offset == offset)
			return (int32_t)idx;
	}
	if (jf_grow((void **)&v->lines, &v->lines_cap, v->nlines, sizeof(*v->lines)) < 0 ||
	    jf_index_map_put(&v->line_by_key, key, (uint32_t)v->nlines) < 0)
		return -1;
	v->lines[v->nlines].region_key = region_key;
	v->lines[v->nlines].offset = offset;
	*created = 1;
	return (int32_t)v->nlines++;
}

static int32_t code_line(struct jf_analysis *a, void *self, const struct live_region *r,
			 const struct pc_entry *e, uint64_t ip, enum jf_isa isa)
{
	struct jf_views_state *v = self;
	int created;
	int32_t i;
	struct jf_code_line *l;

	i = line_index(v, r->region_key, (uint32_t)(ip - r->start), &created);
	if (i < 0)
		return -1;
	l = &v->lines[i];
	if (created) {
		l->addr = ip;
		l->pc_from = e->bytecode_pc;
		l->pc_to = e->bytecode_next;
		l->op_kind = e->op_kind;
		if (a->walker)
			jf_insn_disasm(a->walker, isa, ip, l->text, sizeof(l->text));
	}
	l->insns++;
	return i;
}

static void code_lines_again(void *self, const uint32_t *rows, uint32_t n)
{
	struct jf_views_state *v = self;
	uint32_t i;

	for (i = 0; i < n; i++)
		v->lines[rows[i]].insns++;
}

static void block_done(struct jf_analysis *a, void *self, const struct jf_block *b)
{
	struct jf_views_state *v = self;

	(void)a;

	if (v->cur && b->ninsn > v->attributed)
		v->stacks[v->cur->frame_stack].insns += b->ninsn - v->attributed;
	v->attributed = 0;
}

static int time_attributed(struct jf_analysis *a, void *self, int32_t tid, int has_from,
			   uint64_t from, uint64_t to)
{
	struct jf_views_state *v = self;
	struct view_thread *vt;

	vt = view_thread(v, tid);
	if (!vt)
		return -1;
	if (!v->has_time || to > v->last_time) {
		v->has_time = 1;
		v->last_time = to;
	}
	if (!has_from || to <= from || !vt->has_act)
		return 0;
	return add_span(a, &vt->by_time, from, to, vt->act, to - from);
}

static int guard_exited(struct jf_analysis *a, void *self, int32_t tid, int has_time,
			uint64_t time, uint32_t guard)
{
	struct jf_views_state *v = self;
	struct view_thread *vt;

	vt = view_thread(v, tid);
	if (!vt)
		return -1;
	if (has_time && add_span(a, &vt->by_time, time, time, guard | JF_BUCKET_GUARD, 1) < 0)
		return -1;
	return add_span(a, &vt->by_insns, v->block_pos, v->block_pos, guard | JF_BUCKET_GUARD, 1);
}

static struct jf_timeline_event *new_event(const struct jf_analysis *a,
					   struct jf_views_state *v, uint8_t kind)
{
	struct jf_timeline_event *e;

	if (v->nevents >= JF_TIMELINE_MAX_EVENTS) {
		v->events_dropped++;
		return NULL;
	}
	if (jf_grow((void **)&v->events, &v->events_cap, v->nevents, sizeof(*v->events)) < 0)
		return NULL;
	e = &v->events[v->nevents++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->has_time = (uint8_t)v->has_time;
	e->time = v->last_time;
	e->insn_pos = a->insns;
	return e;
}

/* A zone record takes effect at this point of the flow. */
static void code_changed(struct jf_analysis *a, void *self, const struct jf_zone_record *rec)
{
	struct jf_views_state *v = self;
	struct jf_timeline_event *e;

	/* Frames depend on the code model; an iteration mark leaves it as it is. */
	if (rec->id != JF_ZONE_EVENT || rec->u.event.kind != JF_EVENT_ITERATION)
		v->generation++;
	switch (rec->id) {
	case JF_JITDUMP_CODE_LOAD:
		e = new_event(a, v, JF_TL_COMPILE);
		if (e) {
			e->id = 0;
			e->arg = rec->u.code_load.addr;
			snprintf(e->name, sizeof(e->name), "%s",
				 rec->u.code_load.name ? rec->u.code_load.name : "");
		}
		break;
	case JF_ZONE_REGION_LOAD:
		/* Says more about the code its CODE_LOAD just brought. */
		e = v->nevents ? &v->events[v->nevents - 1] : NULL;
		if (!e || e->kind != JF_TL_COMPILE || e->arg != rec->u.region_load.addr || e->id) {
			e = new_event(a, v, JF_TL_COMPILE);
			if (e)
				e->describes_only = 1;
		}
		if (e) {
			e->id = rec->u.region_load.trace_id;
			e->arg = rec->u.region_load.addr;
			e->region_kind = rec->u.region_load.kind;
			if (rec->u.region_load.name)
				snprintf(e->name, sizeof(e->name), "%s", rec->u.region_load.name);
		}
		if (rec->u.region_load.kind == JF_REGION_BRIDGE && rec->u.region_load.parent_trace) {
			e = new_event(a, v, JF_TL_BRIDGE);
			if (e) {
				e->id = rec->u.region_load.trace_id;
				e->parent_trace = rec->u.region_load.parent_trace;
				e->parent_guard = rec->u.region_load.parent_guard;
			}
		}
		break;
	case JF_ZONE_REGION_FREE:
		e = new_event(a, v, JF_TL_FREE);
		if (e)
			e->id = rec->u.region_free.addr;
		break;
	case JF_ZONE_EVENT:
		if (rec->u.event.kind == JF_EVENT_ITERATION) {
			e = new_event(a, v, JF_TL_ITERATION);
			if (e)
				e->arg = rec->u.event.arg;
		}
		break;
	default:
		break;
	}
}

static void destroy(void *self)
{
	struct jf_views_state *v = self;
	size_t i;

	if (!v)
		return;

	for (i = 0; i < v->nthreads; i++) {
		free(v->threads[i].by_time.entries);
		free(v->threads[i].by_insns.entries);
	}
	free(v->threads);
	free(v->stacks);
	free(v->lines);
	jf_index_map_free(&v->line_by_key);
	free(v->acts);
	free(v->events);
	jf_index_map_free(&v->stack_by_key);
	jf_index_map_free(&v->act_by_key);
	free(v);
}

/* ---- merging ------------------------------------------------------------------------ */

/* Exits of guard g (a's index) settled at the seam, on thread tid at a's last timestamp. */
static int seam_guard_exited(struct jf_analysis *a, void *self, int32_t tid, int has_time,
			     uint64_t time, uint32_t g)
{
	((struct jf_views_state *)self)->block_pos = a->insns;
	return guard_exited(a, self, tid, has_time, time, g);
}

/* The time between a's last timestamp and the later part's first, spent in the later
 * part's first activity on that thread. */
static int seam_time(struct jf_analysis *a, void *self, const struct jf_analysis *later,
		     const void *later_self, int32_t tid, uint64_t from, uint64_t to)
{
	struct jf_views_state *v = self;
	struct view_thread *vt = view_thread(v, tid);
	const struct jf_views_state *lv = later_self;
	size_t i;
	int32_t act = -1;

	(void)later; /* its views' state is later_self */
	if (!vt)
		return -1;
	for (i = 0; i < lv->nthreads; i++) {
		if (lv->threads[i].tid == tid && lv->threads[i].first_act_valid) {
			const struct jf_activity *x = &lv->acts[lv->threads[i].first_act];

			act = activity_index(v, x->cls, x->trace_id, x->name);
		}
	}
	if (act < 0)
		return 0;
	return add_span(a, &vt->by_time, from, to, (uint32_t)act, to - from);
}

static int map_what(struct jf_analysis *a, struct jf_views_state *v,
		    const struct jf_analysis *later, const struct jf_views_state *lv, uint32_t what,
		    uint32_t *out)
{
	if (what & JF_BUCKET_GUARD) {
		const struct jf_guard_result *g = &later->guards[what & ~JF_BUCKET_GUARD];
		int32_t i = jf_guard_index(a, g->trace_id, g->guard_id);

		*out = (uint32_t)i | JF_BUCKET_GUARD;
		return i;
	} else {
		const struct jf_activity *x = &lv->acts[what];
		int32_t i = activity_index(v, x->cls, x->trace_id, x->name);

		*out = (uint32_t)i;
		return i;
	}
}

/* On the trace's clock buckets are absolute: a's and the later part's line up once they
 * have the same width. On the instruction count, the later part's positions start at a's
 * total; its buckets are spread over a's grid in proportion (exact in sums, and in
 * position to within one bucket). */
static int merge_series(struct jf_analysis *a, struct jf_views_state *v,
			const struct jf_analysis *later, const struct jf_views_state *lv,
			struct jf_timeline_series *to, const struct jf_timeline_series *from,
			int on_clock, uint64_t shift)
{
	size_t i;

	if (!from->nentries)
		return 0;
	if (on_clock) {
		if (!to->width)
			to->width = from->width;
		while (to->width < from->width)
			coarsen(to);
	}
	for (i = 0; i < from->nentries; i++) {
		const struct jf_bucket_entry *e = &from->entries[i];
		uint64_t start = e->bucket * from->width, what_pos;
		uint32_t what;

		if (map_what(a, v, later, lv, e->what, &what) < 0)
			return -1;
		if (on_clock) {
			/* Same grid: a bucket of `from` lies inside one of `to`'s (after fitting). */
			uint64_t f = from->width;

			while (to->width < f)
				coarsen(to);
			fit(to, start, start, a->cfg.timeline_buckets);
			if (put(to, start / to->width, what, e->amount) < 0)
				return -1;
			continue;
		}
		what_pos = shift + start;
		if ((what & JF_BUCKET_GUARD) ?
		    add_span(a, to, what_pos, what_pos, what, e->amount) < 0 :
		    add_span(a, to, what_pos, what_pos + from->width, what, e->amount) < 0)
			return -1;
	}
	return 0;
}

static int merge(struct jf_analysis *a, void *self, const struct jf_analysis *later,
		 const void *later_self, uint64_t insn_shift)
{
	struct jf_views_state *v = self;
	const struct jf_views_state *lv = later_self;
	size_t i;

	for (i = 0; i < lv->nstacks; i++) {
		const struct jf_stack_result *s = &lv->stacks[i];
		int32_t st = stack_index(v, s->tid, s->cls, s->region, s->has_range, s->pc_from,
					 s->pc_to);

		if (st < 0)
			return -1;
		v->stacks[st].insns += s->insns;
	}
	for (i = 0; i < lv->nlines; i++) {
		const struct jf_code_line *l = &lv->lines[i];
		int created;
		int32_t li = line_index(v, l->region_key, l->offset, &created);

		if (li < 0)
			return -1;
		if (created)
			v->lines[li] = *l;
		else
			v->lines[li].insns += l->insns;
	}
	for (i = 0; i < lv->nthreads; i++) {
		const struct view_thread *lt = &lv->threads[i];
		struct view_thread *vt = view_thread(v, lt->tid);

		if (!vt || merge_series(a, v, later, lv, &vt->by_time, &lt->by_time, 1, 0) < 0 ||
		    merge_series(a, v, later, lv, &vt->by_insns, &lt->by_insns, 0, insn_shift) < 0)
			return -1;
		if (lt->has_act) {
			const struct jf_activity *x = &lv->acts[lt->act];
			int32_t act = activity_index(v, x->cls, x->trace_id, x->name);

			if (act < 0)
				return -1;
			vt->act = (uint32_t)act;
			vt->has_act = 1;
		}
		if (!vt->first_act_valid && lt->first_act_valid) {
			const struct jf_activity *x = &lv->acts[lt->first_act];
			int32_t act = activity_index(v, x->cls, x->trace_id, x->name);

			if (act < 0)
				return -1;
			vt->first_act = (uint32_t)act;
			vt->first_act_valid = 1;
		}
		vt->frame_valid = 0;
	}
	for (i = 0; i < lv->nevents; i++) {
		struct jf_timeline_event e = lv->events[i];
		struct jf_timeline_event *last = v->nevents ? &v->events[v->nevents - 1] : NULL;

		if (!i && e.describes_only && last && last->kind == JF_TL_COMPILE &&
		    last->arg == e.arg && !last->id) {
			last->id = e.id;
			last->region_kind = e.region_kind;
			memcpy(last->name, e.name, sizeof(last->name));
			continue;
		}

		if (v->nevents >= JF_TIMELINE_MAX_EVENTS) {
			v->events_dropped++;
			continue;
		}
		if (!e.has_time && v->has_time) {
			e.has_time = 1;
			e.time = v->last_time;
		}
		e.insn_pos += insn_shift;
		if (jf_grow((void **)&v->events, &v->events_cap, v->nevents, sizeof(*v->events)) < 0)
			return -1;
		v->events[v->nevents++] = e;
	}
	v->events_dropped += lv->events_dropped;
	v->cur = NULL; /* the thread table may have moved; the next block sets it */
	if (lv->has_time && (!v->has_time || lv->last_time > v->last_time)) {
		v->has_time = 1;
		v->last_time = lv->last_time;
	}
	return 0;
}

/* ---- the result --------------------------------------------------------------------- */

static int copy_series(struct jf_timeline_series *dst, const struct jf_timeline_series *src,
		       const struct jf_analysis *a, const struct jf_analysis_result *r)
{
	size_t i;

	*dst = *src;
	dst->entries = NULL;
	dst->cap = dst->nentries = 0;
	if (!src->nentries)
		return 0;
	dst->entries = malloc(src->nentries * sizeof(*dst->entries));
	if (!dst->entries)
		return -1;
	memcpy(dst->entries, src->entries, src->nentries * sizeof(*dst->entries));
	dst->nentries = dst->cap = src->nentries;
	/* Guards are numbered as in the result's sorted table. */
	for (i = 0; i < dst->nentries; i++) {
		struct jf_bucket_entry *e = &dst->entries[i];
		const struct jf_guard_result *g;
		size_t lo = 0, hi = r->nguards;

		if (!(e->what & JF_BUCKET_GUARD))
			continue;
		g = &a->guards[e->what & ~JF_BUCKET_GUARD];
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const struct jf_guard_result *m = &r->guards[mid];

			if (m->trace_id < g->trace_id ||
			    (m->trace_id == g->trace_id && m->guard_id < g->guard_id))
				lo = mid + 1;
			else
				hi = mid;
		}
		e->what = (uint32_t)lo | JF_BUCKET_GUARD;
	}
	return 0;
}

#define DUP_ARRAY(dst, src, n) \
	((n) ? ((dst) = malloc((n) * sizeof(*(dst)))) && memcpy((dst), (src), (n) * sizeof(*(dst))) : 1)

static int by_line(const void *x, const void *y)
{
	const struct jf_code_line *p = x, *q = y;

	if (p->region_key != q->region_key)
		return p->region_key < q->region_key ? -1 : 1;
	return p->offset < q->offset ? -1 : p->offset > q->offset;
}

static int result(const struct jf_analysis *a, const void *self, struct jf_analysis_result *r)
{
	const struct jf_views_state *v = self;
	struct jf_timeline_result *tl = &r->timeline;
	size_t i;

	if (!DUP_ARRAY(r->stacks, v->stacks, v->nstacks) ||
	    !DUP_ARRAY(tl->activities, v->acts, v->nacts) ||
	    !DUP_ARRAY(tl->events, v->events, v->nevents))
		return -1;
	r->nstacks = v->nstacks;
	if (!DUP_ARRAY(r->code_lines, v->lines, v->nlines))
		return -1;
	r->ncode_lines = v->nlines;
	jf_sort_rows(r->code_lines, r->ncode_lines, sizeof(*r->code_lines), by_line);
	tl->nactivities = v->nacts;
	tl->nevents = v->nevents;
	tl->events_dropped = v->events_dropped;
	tl->threads = calloc(v->nthreads ? v->nthreads : 1, sizeof(*tl->threads));
	if (!tl->threads)
		return -1;
	for (i = 0; i < v->nthreads; i++) {
		tl->threads[i].tid = v->threads[i].tid;
		tl->nthreads = i + 1;
		if (copy_series(&tl->threads[i].by_time, &v->threads[i].by_time, a, r) < 0 ||
		    copy_series(&tl->threads[i].by_insns, &v->threads[i].by_insns, a, r) < 0)
			return -1;
	}
	return 0;
}

void jf_views_result_free(struct jf_analysis_result *r)
{
	size_t i;

	for (i = 0; i < r->timeline.nthreads; i++) {
		free(r->timeline.threads[i].by_time.entries);
		free(r->timeline.threads[i].by_insns.entries);
	}
	free(r->timeline.threads);
	free(r->timeline.activities);
	free(r->timeline.events);
	free(r->stacks);
	free(r->code_lines);
}

void *jf_views_new(void)
{
	return calloc(1, sizeof(struct jf_views_state));
}

const struct jf_listener jf_views_listener = {
	.destroy = destroy,
	.block_counted = block_counted,
	.bytecode_insns = bytecode_insns,
	.code_line = code_line,
	.code_lines_again = code_lines_again,
	.block_done = block_done,
	.time_attributed = time_attributed,
	.guard_exited = guard_exited,
	.code_changed = code_changed,
	.seam_guard_exited = seam_guard_exited,
	.seam_time = seam_time,
	.merge = merge,
	.result = result,
};
