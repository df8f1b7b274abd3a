/* Instructions per bytecode range, op and code line in pc-mapped regions.
 *
 * A block in a pc-mapped region is walked instruction by instruction (its instruction
 * lengths come from the code bytes) and each instruction is looked up in the region's pc
 * map. A JIT's hot blocks run millions of times with the same code and the same map, so
 * the first walk of a block is remembered as what it counted: runs of instructions per
 * (bytecode row, op row), the code line row of every instruction, and whether the walk
 * failed. Later executions add those counts without walking. The first walk creates the
 * table rows in the order the full walk always did, and later ones only add to rows that
 * exist, so every table and view is the same as without the memo.
 *
 * The memo is valid for one state of the code: it is emptied when a zone record changes
 * the code model (jf_analysis_replay_record bumps model_generation), when the code map
 * changes (its generation), and when analyses are merged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

/* Beyond this many remembered instructions the memo starts again (bounded memory). */
#define MEMO_MAX_INSNS (1u << 21)

struct memo_run {
	int32_t bytecode, op;         /* table rows, -1 for none */
	uint32_t inline_chain;        /* the frames around the bytecode's (0: none) */
	uint32_t count;               /* instructions */
};

struct memo_block {
	uint64_t start, last;
	uint32_t ninsn;
	uint8_t isa, failed;
	uint32_t first_run, nruns;    /* in memo->runs */
	uint32_t first_line, nlines;  /* in memo->lines */
};

struct jf_block_memo {
	struct jf_index_map by_key;
	struct memo_block *blocks;  size_t nblocks, blocks_cap;
	struct memo_run *runs;      size_t nruns, runs_cap;
	uint32_t *lines;            size_t nlines, lines_cap;
	uint64_t model_generation, map_generation;
};

void jf_block_memo_free(struct jf_block_memo *m)
{
	if (!m)
		return;
	jf_index_map_free(&m->by_key);
	free(m->blocks);
	free(m->runs);
	free(m->lines);
	free(m);
}

void jf_block_memo_reset(struct jf_block_memo *m)
{
	if (!m)
		return;
	jf_index_map_clear(&m->by_key);
	m->nblocks = m->nruns = m->nlines = 0;
}

struct walk_ctx {
	struct jf_analysis *a;
	const struct live_region *r;
	size_t op_hint, code_object_hint;
	enum jf_isa isa;
	/* The pc entries of the last instruction and their table rows: the instructions of
	 * one bytecode follow each other, and the rows stay valid for the whole walk. */
	const struct pc_entry *last_op_entry, *last_code_object_entry;
	int32_t last_b, last_op;
	uint32_t last_chain;
	struct pc_entry line_entry;   /* what the code line of the last instruction shows */
	struct jf_block_memo *memo;   /* recording what the walk counts (NULL: not) */
	int memo_ok;                  /* every append succeeded */
};

/* The bytecode range of a pc map entry that names its code object: one row per code
 * object and range, across every trace that runs it (inlined or not), or in this region
 * alone when its map says so. */
static int32_t code_object_bytecode(struct jf_analysis *a, const struct live_region *r,
				    const struct pc_entry *e)
{
	int32_t b;
	uint64_t key = JF_BYTECODE_CODE_OBJECT | e->op_kind;
	const struct jf_code_object_name *co;

	if (!e->op_kind)
		return -1; /* code before the trace's first merge point: no function says */
	if (r->pc_per_region)
		key |= (r->region_key << 16) & ~JF_BYTECODE_CODE_OBJECT;
	b = jf_bytecode_index(a, key, e->bytecode_pc, e->bytecode_next);
	if (b >= 0 && !a->bytecodes[b].code_name[0] &&
	    (co = jf_zone_model_code_object(&a->zm, e->op_kind))) {
		snprintf(a->bytecodes[b].code_name, sizeof(a->bytecodes[b].code_name), "%s",
			 co->name);
		snprintf(a->bytecodes[b].code_file, sizeof(a->bytecodes[b].code_file), "%s",
			 co->file);
		a->bytecodes[b].code_line = co->line;
	}
	return b;
}

static void remember(struct walk_ctx *w, int32_t b, int32_t op, uint32_t chain, int32_t line)
{
	struct jf_block_memo *m = w->memo;
	struct memo_block *mb;

	if (!m || !w->memo_ok)
		return;
	mb = &m->blocks[m->nblocks];
	if (mb->nruns && m->runs[m->nruns - 1].bytecode == b && m->runs[m->nruns - 1].op == op &&
	    m->runs[m->nruns - 1].inline_chain == chain) {
		m->runs[m->nruns - 1].count++;
	} else {
		if (jf_grow((void **)&m->runs, &m->runs_cap, m->nruns, sizeof(*m->runs)) < 0) {
			w->memo_ok = 0;
			return;
		}
		m->runs[m->nruns].bytecode = b;
		m->runs[m->nruns].op = op;
		m->runs[m->nruns].inline_chain = chain;
		m->runs[m->nruns].count = 1;
		m->nruns++;
		mb->nruns++;
	}
	if (line >= 0) {
		if (jf_grow((void **)&m->lines, &m->lines_cap, m->nlines, sizeof(*m->lines)) < 0) {
			w->memo_ok = 0;
			return;
		}
		m->lines[m->nlines++] = (uint32_t)line;
		mb->nlines++;
	}
}

/* The entry of map m that applies at code offset off, or NULL before its first one.
 * Instructions come in order: the entry that matched last (*hint) is tried first. */
static const struct pc_entry *entry_at(const struct pc_map *m, uint64_t off, size_t *hint)
{
	size_t lo = 0, hi = m->n;

	if (*hint < m->n && m->entries[*hint].code_offset <= off &&
	    (*hint + 1 == m->n || m->entries[*hint + 1].code_offset > off)) {
		lo = *hint + 1;
	} else {
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (m->entries[mid].code_offset <= off)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	if (lo == 0)
		return NULL;
	*hint = lo - 1;
	return &m->entries[lo - 1];
}

/* The table rows of the entries that apply to an instruction: the bytecode range from
 * the code-object map where the region has one, else from the op map; the op from the
 * op map. The code line shows that range and the op (or, with no op map, the code
 * object). */
static void rows_of(struct walk_ctx *w, const struct pc_entry *op_e, const struct pc_entry *co_e)
{
	const struct live_region *r = w->r;
	const struct pc_entry *range = r->code_object_map.n ? co_e : op_e;

	w->last_op_entry = op_e;
	w->last_code_object_entry = co_e;
	if (!range)
		w->last_b = -1; /* before the code-object map's first entry: no function says */
	else if (range == co_e)
		w->last_b = code_object_bytecode(w->a, r, co_e);
	else
		w->last_b = jf_bytecode_index(w->a, r->region_key, op_e->bytecode_pc,
					      op_e->bytecode_next);
	w->last_op = op_e ? jf_op_index(w->a, op_e->op_kind) : -1;
	w->last_chain = range == co_e && co_e ? co_e->inline_chain : 0;
	w->line_entry = range ? *range : *op_e;
	if (op_e)
		w->line_entry.op_kind = op_e->op_kind;
}

/* Count one instruction of a pc-mapped region against its bytecode range and op. */
static void count_insn(void *ctx, uint64_t ip)
{
	struct walk_ctx *w = ctx;
	const struct live_region *r = w->r;
	uint64_t off = ip - r->start;
	const struct pc_entry *op_e = entry_at(&r->op_map, off, &w->op_hint);
	const struct pc_entry *co_e = entry_at(&r->code_object_map, off, &w->code_object_hint);
	int32_t b, op, line;

	if (!op_e && !co_e)
		return; /* before the first entry: no bytecode says */
	if (op_e != w->last_op_entry || co_e != w->last_code_object_entry)
		rows_of(w, op_e, co_e);
	b = w->last_b;
	op = w->last_op;
	if (b >= 0) {
		w->a->bytecodes[b].insns++;
		jf_emit_bytecode_insns(w->a, &w->a->listeners, b, w->last_chain, 1);
	}
	if (op >= 0)
		w->a->ops[op].insns++;
	line = jf_emit_code_line(w->a, &w->a->listeners, r, &w->line_entry, ip, w->isa);
	remember(w, b, op, w->last_chain, line);
}

static uint64_t block_key(const struct jf_block *b)
{
	return (b->start * 0x9e3779b97f4a7c15ull) ^ (b->last * 0x100000001b3ull) ^
	       ((uint64_t)b->ninsn << 8 | b->isa);
}

static int is_row_of(const struct memo_block *mb, const struct jf_block *b)
{
	return mb->start == b->start && mb->last == b->last && mb->ninsn == b->ninsn &&
	       mb->isa == b->isa;
}

/* The memo row of block b, or NULL; *key is where a new row would go. */
static struct memo_block *find(struct jf_block_memo *m, const struct jf_block *b, uint64_t *key)
{
	uint32_t idx;

	for (*key = block_key(b);; (*key)++) {
		if (!jf_index_map_get(&m->by_key, *key, &idx))
			return NULL;
		if (is_row_of(&m->blocks[idx], b))
			return &m->blocks[idx];
	}
}

/* Add what a remembered walk counted. */
static void replay(struct jf_analysis *a, const struct jf_block_memo *m, const struct memo_block *mb)
{
	const struct memo_run *run = &m->runs[mb->first_run];
	const uint32_t *line = &m->lines[mb->first_line];
	uint32_t i;

	for (i = 0; i < mb->nruns; i++, run++) {
		if (run->bytecode >= 0) {
			a->bytecodes[run->bytecode].insns += run->count;
			jf_emit_bytecode_insns(a, &a->listeners, run->bytecode, run->inline_chain,
					       run->count);
		}
		if (run->op >= 0)
			a->ops[run->op].insns += run->count;
	}
	jf_emit_code_lines_again(&a->listeners, line, mb->nlines);
	if (mb->failed)
		a->image_misses++;
}

/* A fresh memo row for b at the end of the tables (NULL: no memory, walk unremembered). */
static struct jf_block_memo *begin_row(struct jf_block_memo *m, const struct jf_block *b)
{
	struct memo_block *mb;

	if (m->nruns + b->ninsn > MEMO_MAX_INSNS || m->nlines + b->ninsn > MEMO_MAX_INSNS)
		jf_block_memo_reset(m);
	if (jf_grow((void **)&m->blocks, &m->blocks_cap, m->nblocks, sizeof(*m->blocks)) < 0)
		return NULL;
	mb = &m->blocks[m->nblocks];
	memset(mb, 0, sizeof(*mb));
	mb->start = b->start;
	mb->last = b->last;
	mb->ninsn = b->ninsn;
	mb->isa = b->isa;
	mb->first_run = (uint32_t)m->nruns;
	mb->first_line = (uint32_t)m->nlines;
	return m;
}

/* A block not found in the memo by its hint: looked up by its key, or walked. */
static void count_unhinted(struct jf_analysis *a, const struct live_region *r, uint32_t *row_hint,
			   const struct jf_block *b)
{
	struct walk_ctx w;
	struct jf_block_memo *m;
	struct memo_block *mb;
	uint64_t key = 0, map_gen;
	int failed;

	memset(&w, 0, sizeof(w));
	w.a = a;
	w.r = r;
	w.isa = (enum jf_isa)b->isa;
	w.last_b = w.last_op = -1;
	w.memo_ok = 1;
	if (!a->memo)
		a->memo = calloc(1, sizeof(*a->memo));
	m = a->memo;
	if (m) {
		map_gen = a->cfg.map ? jf_codemap_generation(a->cfg.map) : 0;
		if (m->model_generation != a->model_generation || m->map_generation != map_gen) {
			jf_block_memo_reset(m);
			m->model_generation = a->model_generation;
			m->map_generation = map_gen;
		}
		mb = find(m, b, &key);
		if (mb) {
			*row_hint = (uint32_t)(mb - m->blocks);
			replay(a, m, mb);
			return;
		}
		w.memo = begin_row(m, b);
	}
	failed = jf_block_walk(a->walker, b, count_insn, &w, NULL) < 0;
	if (failed)
		a->image_misses++;
	if (w.memo && w.memo_ok && jf_index_map_put(&m->by_key, key, (uint32_t)m->nblocks) == 0) {
		m->blocks[m->nblocks].failed = (uint8_t)failed;
		*row_hint = (uint32_t)m->nblocks++;
	} else if (w.memo) {
		/* The row is incomplete: forget the runs and lines it appended. */
		m->nruns = m->blocks[m->nblocks].first_run;
		m->nlines = m->blocks[m->nblocks].first_line;
	}
}

void jf_count_bytecodes(struct jf_analysis *a, const struct live_region *r, uint32_t *row_hint,
			const struct jf_block *b)
{
	const struct jf_block_memo *m = a->memo;

	if (!a->walker || !(r->op_map.n || r->code_object_map.n))
		return;
	/* The common case, a block seen before in this state of the code: its row, named by
	 * the hint, is the one the key would find (a row is made once per block and memo).
	 * The class memo checked the generations for this block (count_block), so the memo
	 * is current when it was started at the same ones. */
	if (m && *row_hint < m->nblocks && m->model_generation == a->model_generation &&
	    m->map_generation == a->class_memo.map_generation &&
	    is_row_of(&m->blocks[*row_hint], b)) {
		replay(a, m, &m->blocks[*row_hint]);
		return;
	}
	count_unhinted(a, r, row_hint, b);
}
