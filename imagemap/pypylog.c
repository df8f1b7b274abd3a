/* PYPYLOG reader (jitflow/pypylog.h): one pass over the lines, interpreting each by the
 * innermost open section; problems are noted with their line and reading goes on. */
#include "jitflow/pypylog.h"

#include <stddef.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/flow.h"
#include "jitflow/mapped_file.h"
#include "jitflow/pypylog_phases.h"

/* ---- storage: arena blocks (pointers into them stay valid) and growable arrays ---- */

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	uint8_t data[];
};

static void *arena_alloc(struct jf_pypylog *log, size_t size)
{
	struct arena_block *b = log->pool;

	if (!b || b->cap - b->used < size) {
		size_t cap = size > (1u << 16) ? size : (1u << 16);

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = log->pool;
		b->used = 0;
		b->cap = cap;
		log->pool = b;
	}
	b->used += size;
	return b->data + b->used - size;
}

static const char *arena_str(struct jf_pypylog *log, const char *s, size_t n)
{
	char *p = arena_alloc(log, n + 1);

	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

/* A new element at the end of *array (n of them, capacity doubling from 16), or NULL. */
static void *push(void **array, size_t *n, size_t elem)
{
	if (*n >= 16 && (*n & (*n - 1)) == 0) {
		void *bigger = realloc(*array, *n * 2 * elem);

		if (!bigger)
			return NULL;
		*array = bigger;
	} else if (!*array) {
		*array = malloc(16 * elem);
		if (!*array)
			return NULL;
	}
	return (char *)*array + (*n)++ * elem;
}

#define PUSH(log, field, count) push((void **)&(field), &(count), sizeof(*(field)))

/* ---- parser state ---- */

enum section {
	SEC_OTHER = 0,
	SEC_DUMP,
	SEC_ADDR,
	SEC_OPT,
	SEC_COUNTS,
	SEC_ITERATION,         /* jitflow's iteration mark: its body is the index */
};

enum { MAX_DEPTH = 64 };

struct parser {
	struct jf_pypylog *log;
	const char *name;
	uint32_t line;
	enum section stack[MAX_DEPTH];
	uint64_t stack_tsc[MAX_DEPTH];
	uint8_t stack_phase[MAX_DEPTH]; /* the phase the section is, 0 if none */
	size_t depth;          /* open sections (deeper ones than MAX_DEPTH are not kept) */
	size_t dropped;        /* sections opened beyond MAX_DEPTH */
	long addr_trace;       /* the trace the current jit-backend-addr section named */
	long opt_trace;        /* the trace whose ops are being read (-1: none) */
	int dump_open;         /* the last dump can take contiguous bytes */
	long iteration;        /* the mark of the open iteration section (-1: none) */
	int backend_seen;      /* a BACKEND line set log->isa */
};

static void problem(struct parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void problem(struct parser *p, const char *fmt, ...)
{
	struct jf_pypylog *log = p->log;
	va_list ap;

	if (log->problems < JF_PYPYLOG_PROBLEMS_KEPT) {
		char *msg = log->problem[log->problems];
		int n = snprintf(msg, sizeof(log->problem[0]), "%s:%" PRIu32 ": ", p->name, p->line);

		va_start(ap, fmt);
		if (n > 0 && (size_t)n < sizeof(log->problem[0]))
			vsnprintf(msg + n, sizeof(log->problem[0]) - (size_t)n, fmt, ap);
		va_end(ap);
	}
	log->problems++;
}

static enum section section_of(const char *name, size_t n)
{
#define IS(prefix) (n >= sizeof(prefix) - 1 && !memcmp(name, prefix, sizeof(prefix) - 1))
	if (IS("jit-backend-dump"))
		return SEC_DUMP;
	if (IS("jit-backend-addr"))
		return SEC_ADDR;
	if (IS("jit-log-opt-loop") || IS("jit-log-opt-bridge"))
		return SEC_OPT;
	if (IS("jit-backend-counts"))
		return SEC_COUNTS;
	if (n == sizeof(JF_PYPYLOG_ITERATION_SECTION) - 1 && IS(JF_PYPYLOG_ITERATION_SECTION))
		return SEC_ITERATION;
	return SEC_OTHER;
#undef IS
}

static enum section current(const struct parser *p)
{
	return p->depth && !p->dropped ? p->stack[p->depth - 1] : SEC_OTHER;
}

/* ---- small lexing helpers over [s, e) ---- */

static const char *skip_spaces(const char *s, const char *e)
{
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

static int starts(const char *s, const char *e, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(e - s) >= n && !memcmp(s, lit, n);
}

/* Unsigned number in base 10 or 16 (with or without 0x when base 16). */
static const char *number(const char *s, const char *e, int base, uint64_t *out)
{
	uint64_t v = 0;
	const char *start;

	if (base == 16 && e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	start = s;
	for (; s < e; s++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return NULL; /* overflow */
		v = v * (uint64_t)base + (uint64_t)d;
	}
	if (s == start)
		return NULL;
	*out = v;
	return s;
}

/* The last occurrence of lit in [s, e). */
static const char *find_last(const char *s, const char *e, const char *lit)
{
	size_t n = strlen(lit);
	const char *q;

	if ((size_t)(e - s) < n)
		return NULL;
	for (q = e - n; q >= s; q--) {
		if (!memcmp(q, lit, n))
			return q;
		if (q == s)
			break;
	}
	return NULL;
}

static const char *find(const char *s, const char *e, const char *lit)
{
	size_t n = strlen(lit);

	for (; (size_t)(e - s) >= n; s++)
		if (!memcmp(s, lit, n))
			return s;
	return NULL;
}

/* ---- jit-backend-dump ---- */

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* "BACKEND NAME": the instruction set of the code dumped; one per log. */
static int backend_line(struct parser *p, const char *s, const char *e)
{
	struct jf_pypylog *log = p->log;
	uint8_t isa;

	if ((size_t)(e - s) == 6 && !memcmp(s, "x86_64", 6))
		isa = JF_ISA_X86_64;
	else if ((size_t)(e - s) == 3 && !memcmp(s, "arm", 3))
		isa = JF_ISA_A64;
	else {
		problem(p, "BACKEND: expected x86_64 or arm (AArch64)");
		return 0;
	}
	if (p->backend_seen && log->isa != isa)
		problem(p, "BACKEND: another instruction set than the log's earlier dumps");
	else
		log->isa = isa;
	p->backend_seen = 1;
	return 0;
}

static int dump_line(struct parser *p, const char *s, const char *e)
{
	struct jf_pypylog *log = p->log;
	struct jf_pypylog_dump *d;
	uint64_t addr, off;
	const char *hex;
	size_t nhex, i;
	uint8_t *bytes;

	if (starts(s, e, "BACKEND "))
		return backend_line(p, s + 8, e);
	if (starts(s, e, "SYS_EXECUTABLE "))
		return 0;
	if (!starts(s, e, "CODE_DUMP @")) {
		problem(p, "expected CODE_DUMP @ADDR +OFFSET HEX in jit-backend-dump");
		return 0;
	}
	s = number(s + 11, e, 16, &addr);
	if (s)
		s = skip_spaces(s, e);
	if (!s || s == e || *s != '+' || !(s = number(s + 1, e, 10, &off))) {
		problem(p, "CODE_DUMP: expected @ADDR +OFFSET");
		return 0;
	}
	hex = skip_spaces(s, e);
	nhex = (size_t)(e - hex);
	while (nhex && (hex[nhex - 1] == ' ' || hex[nhex - 1] == '\r'))
		nhex--;
	if (addr + off < addr || (nhex & 1)) {
		problem(p, "CODE_DUMP: %s", nhex & 1 ? "odd number of hex digits" :
			"address overflows");
		return 0;
	}
	for (i = 0; i < nhex; i++) {
		if (hex_value(hex[i]) < 0) {
			problem(p, "CODE_DUMP: hex digit %zu ('%c') is not a hex digit", i + 1,
				hex[i]);
			return 0;
		}
	}
	if (!nhex)
		return 0;
	/* Contiguous with the section's previous line: one dump (PyPy splits long ones). */
	if (p->dump_open && log->ndumps) {
		d = &log->dumps[log->ndumps - 1];
		if (d->addr + d->size == addr + off) {
			uint8_t *joined = arena_alloc(log, d->size + nhex / 2);

			if (!joined)
				return -1;
			memcpy(joined, d->bytes, d->size);
			for (i = 0; i < nhex / 2; i++)
				joined[d->size + i] = (uint8_t)(hex_value(hex[2 * i]) << 4 |
								 hex_value(hex[2 * i + 1]));
			d->bytes = joined;
			d->size += nhex / 2;
			return 0;
		}
	}
	bytes = arena_alloc(log, nhex / 2);
	if (!bytes || !PUSH(log, log->dumps, log->ndumps))
		return -1;
	for (i = 0; i < nhex / 2; i++)
		bytes[i] = (uint8_t)(hex_value(hex[2 * i]) << 4 | hex_value(hex[2 * i + 1]));
	d = &log->dumps[log->ndumps - 1];
	d->tsc = p->depth ? p->stack_tsc[p->depth - 1] : 0;
	d->line = p->line;
	d->addr = addr + off;
	d->size = nhex / 2;
	d->bytes = bytes;
	p->dump_open = 1;
	return 0;
}

/* ---- jit-backend-addr ---- */

/* A new loop (key: its number) or bridge (key: the guard descr it hangs off). */
static struct jf_pypylog_trace *new_trace(struct parser *p, int loop, uint64_t key)
{
	struct jf_pypylog *log = p->log;
	struct jf_pypylog_trace *t = PUSH(log, log->traces, log->ntraces);

	if (!t)
		return NULL;
	memset(t, 0, sizeof(*t));
	t->tsc = p->depth ? p->stack_tsc[p->depth - 1] : 0;
	t->line = p->line;
	t->name = "";
	t->kind = loop ? JF_PYPY_LOOP : JF_PYPY_BRIDGE;
	if (loop)
		t->number = key;
	else
		t->guard = key;
	return t;
}

/* "... has address 0xA to 0xB" + optional " (bootstrap 0xC)" */
static int address_range(const char *s, const char *e, uint64_t *start, uint64_t *end)
{
	s = number(s, e, 16, start);
	if (!s || !starts(s, e, " to "))
		return -1;
	s = number(s + 4, e, 16, end);
	return s ? 0 : -1;
}

static int addr_line(struct parser *p, const char *s, const char *e)
{
	struct jf_pypylog *log = p->log;
	struct jf_pypylog_trace *t;
	const char *has = find_last(s, e, " has address ");
	uint64_t v;

	if (has && (starts(s, e, "Loop ") || starts(s, e, "bridge out of Guard "))) {
		uint64_t start, end, key;
		int loop = starts(s, e, "Loop ");
		const char *q = number(s + (loop ? 5 : 20), e, loop ? 10 : 16, &key);

		if (!q || address_range(has + 13, e, &start, &end) < 0) {
			problem(p, "expected \"Loop N (NAME) has address A to B\" or \"bridge out of "
				"Guard 0xD has address A to B\"");
			p->addr_trace = -1;
			return 0;
		}
		t = new_trace(p, loop, key);
		if (!t)
			return -1;
		t->start = start;
		t->end = end;
		if (loop && q + 2 < has && q[0] == ' ' && q[1] == '(' && has[-1] == ')') {
			t->name = arena_str(log, q + 2, (size_t)(has - 1 - (q + 2)));
			if (!t->name)
				return -1;
		}
		p->addr_trace = (long)log->ntraces - 1;
		return 0;
	}
	s = skip_spaces(s, e);
	if (p->addr_trace >= 0) {
		static const struct { const char *key; size_t off; } keys[] = {
			{ "gc table: ", offsetof(struct jf_pypylog_trace, gc_table) },
			{ "function: ", offsetof(struct jf_pypylog_trace, entry) },
			{ "jump target: ", offsetof(struct jf_pypylog_trace, entry) },
			{ "resops: ", offsetof(struct jf_pypylog_trace, resops) },
			{ "failures: ", offsetof(struct jf_pypylog_trace, failures) },
			{ "end: ", offsetof(struct jf_pypylog_trace, code_end) },
		};
		size_t i;

		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			if (!starts(s, e, keys[i].key))
				continue;
			if (!number(s + strlen(keys[i].key), e, 16, &v)) {
				problem(p, "%sexpected an address", keys[i].key);
				return 0;
			}
			memcpy((char *)&log->traces[p->addr_trace] + keys[i].off, &v, sizeof(v));
			return 0;
		}
	}
	problem(p, "unexpected line in jit-backend-addr");
	return 0;
}

/* ---- jit-log-opt-loop / -bridge ---- */

static long find_trace(const struct jf_pypylog *log, enum jf_pypylog_trace_kind kind,
		       uint64_t key)
{
	size_t i = log->ntraces;

	/* the newest: memory and numbers are reused only after a free */
	while (i--) {
		const struct jf_pypylog_trace *t = &log->traces[i];

		if (t->kind == kind && (kind == JF_PYPY_LOOP ? t->number : t->guard) == key)
			return (long)i;
	}
	return -1;
}

static int opt_header(struct parser *p, const char *s, const char *e)
{
	struct jf_pypylog *log = p->log;
	uint64_t key;
	int loop = starts(s, e, "# Loop ");
	const char *q;

	p->opt_trace = -1;
	if (!loop && !starts(s, e, "# bridge out of Guard ")) {
		problem(p, "expected \"# Loop N (NAME) : ...\" or \"# bridge out of Guard 0xD ...\"");
		return 0;
	}
	q = number(s + (loop ? 7 : 22), e, loop ? 10 : 16, &key);
	if (!q) {
		problem(p, "expected the %s after \"%s\"", loop ? "loop number" : "guard descr",
			loop ? "# Loop" : "Guard");
		return 0;
	}
	p->opt_trace = find_trace(log, loop ? JF_PYPY_LOOP : JF_PYPY_BRIDGE, key);
	if (p->opt_trace < 0) {
		/* logged without its addresses (jit-backend-addr not enabled or cut): keep the
		 * ops, they still name guards and labels */
		if (!new_trace(p, loop, key))
			return -1;
		p->opt_trace = (long)log->ntraces - 1;
	}
	log->traces[p->opt_trace].first_op = log->nops;
	log->traces[p->opt_trace].nops = 0;
	return 0;
}

/* "descr=<Guard0x7f...>" or "descr=TargetToken(123)" inside the op's arguments. */
static void op_descr(const char *s, const char *e, struct jf_pypylog_op *op)
{
	const char *d = find(s, e, "descr=<Guard0x");

	if (d) {
		number(d + 14, e, 16, &op->descr);
		return;
	}
	d = find(s, e, "descr=TargetToken(");
	if (d)
		number(d + 18, e, 10, &op->descr);
}

/* "debug_merge_point(0, 0, 'run;/x.py:5-8~#24 FOR_ITER')" */
static int merge_point(struct parser *p, const char *s, const char *e, struct jf_pypylog_op *op)
{
	uint64_t depth, index;
	const char *q = number(s, e, 10, &depth), *quote, *hash, *close, *sp;

	quote = q ? find(q, e, "'") : NULL;
	close = quote ? find_last(quote + 1, e, "'") : NULL;
	hash = close ? find_last(quote + 1, close, "~#") : NULL;
	if (!hash || depth > UINT32_MAX || !(sp = number(hash + 2, close, 10, &index)) ||
	    index > UINT32_MAX) {
		/* merge points of non-Python drivers (regex engines...) name no bytecode */
		op->code = quote && close ? arena_str(p->log, quote + 1, (size_t)(close - quote - 1)) :
			"";
		return op->code ? 0 : -1;
	}
	op->depth = (uint32_t)depth;
	op->bytecode = (uint32_t)index;
	op->code = arena_str(p->log, quote + 1, (size_t)(hash - quote - 1));
	sp = skip_spaces(sp, close);
	op->bytecode_name = arena_str(p->log, sp, (size_t)(close - sp));
	return op->code && op->bytecode_name ? 0 : -1;
}

static int opt_line(struct parser *p, const char *s, const char *e)
{
	struct jf_pypylog *log = p->log;
	struct jf_pypylog_op *op;
	const char *name, *paren;
	uint64_t off = 0;
	int has_offset = 0;

	if (starts(s, e, "# "))
		return opt_header(p, s, e);
	if (p->opt_trace < 0)
		return 0; /* its header could not be read: reported there */
	if (s < e && *s == '[')
		return 0; /* input arguments */
	if (s < e && *s == '+') {
		const char *q = number(s + 1, e, 10, &off);

		if (!q || !starts(q, e, ": ") || off > UINT32_MAX) {
			problem(p, "expected +OFFSET: before the op");
			return 0;
		}
		has_offset = 1;
		s = q + 2;
	}
	op = PUSH(log, log->ops, log->nops);
	if (!op)
		return -1;
	memset(op, 0, sizeof(*op));
	op->line = p->line;
	op->has_offset = has_offset;
	op->offset = (uint32_t)off;
	log->traces[p->opt_trace].nops++;
	if (starts(s, e, "--end of the loop--")) {
		op->kind = JF_PYPY_OP_END;
		op->name = "--end of the loop--";
		return 0;
	}
	/* "i3 = int_add(...)": the name follows " = " when the op has a result */
	name = s;
	paren = find(s, e, "(");
	if (paren) {
		const char *eq = find(s, paren, " = ");

		if (eq)
			name = eq + 3;
	}
	if (!paren || paren == name) {
		problem(p, "expected an op: NAME(ARGS)");
		log->nops--;
		log->traces[p->opt_trace].nops--;
		return 0;
	}
	op->name = arena_str(log, name, (size_t)(paren - name));
	if (!op->name)
		return -1;
	if (!strncmp(op->name, "guard_", 6))
		op->kind = JF_PYPY_OP_GUARD;
	else if (!strcmp(op->name, "label"))
		op->kind = JF_PYPY_OP_LABEL;
	else if (!strcmp(op->name, "jump"))
		op->kind = JF_PYPY_OP_JUMP;
	else if (!strcmp(op->name, "debug_merge_point")) {
		op->kind = JF_PYPY_OP_MERGE_POINT;
		return merge_point(p, paren + 1, e, op);
	}
	op_descr(paren, e, op);
	if (op->kind == JF_PYPY_OP_GUARD && !op->descr)
		problem(p, "%s without descr=<Guard0x...>", op->name);
	return 0;
}

/* ---- jit-backend-counts ---- */

static int counts_line(struct parser *p, const char *s, const char *e)
{
	struct jf_pypylog *log = p->log;
	struct jf_pypylog_count *c;
	uint64_t id, count;
	const char *q = NULL;
	uint8_t kind = 0;

	if (starts(s, e, "entry ")) {
		kind = JF_PYPY_COUNT_ENTRY;
		q = number(s + 6, e, 10, &id);
	} else if (starts(s, e, "TargetToken(")) {
		kind = JF_PYPY_COUNT_LABEL;
		q = number(s + 12, e, 10, &id);
		if (q && q < e && *q == ')')
			q++;
		else
			q = NULL;
	} else if (starts(s, e, "bridge ")) {
		kind = JF_PYPY_COUNT_BRIDGE;
		q = number(s + 7, e, 10, &id);
	}
	if (!q || q == e || *q != ':' || !number(q + 1, e, 10, &count)) {
		problem(p, "expected \"entry N:COUNT\", \"TargetToken(T):COUNT\" or \"bridge B:COUNT\"");
		return 0;
	}
	c = PUSH(log, log->counts, log->ncounts);
	if (!c)
		return -1;
	c->kind = kind;
	c->id = id;
	c->count = count;
	c->line = p->line;
	return 0;
}

/* ---- phase and iteration marks ---- */

static struct jf_pypylog_mark *new_mark(struct parser *p, uint64_t tsc, uint8_t kind,
					uint8_t phase)
{
	struct jf_pypylog_mark *m = PUSH(p->log, p->log->marks, p->log->nmarks);

	if (!m)
		return NULL;
	memset(m, 0, sizeof(*m));
	m->tsc = tsc;
	m->line = p->line;
	m->kind = kind;
	m->phase = phase;
	return m;
}

/* The body of an iteration mark: its index, alone on the line. */
static int iteration_line(struct parser *p, const char *s, const char *e)
{
	uint64_t index;
	const char *q = number(s, e, 10, &index);

	if (p->iteration < 0)
		return 0;
	if (!q || skip_spaces(q, e) != e) {
		problem(p, "expected an iteration index (a decimal number) in %s",
			JF_PYPYLOG_ITERATION_SECTION);
		return 0;
	}
	p->log->marks[p->iteration].arg = index;
	p->iteration = -1; /* one index per mark */
	return 0;
}

/* ---- lines and sections ---- */

/* "[2e067ed83b834] {jit-backend-dump" / "[2e067ed862e49] jit-backend-dump}": 1 if it
 * is a section line (handled), 0 if not, -1 when out of memory. */
static int section_line(struct parser *p, const char *s, const char *e)
{
	uint64_t tsc;
	const char *q;
	int open;
	const char *name, *name_end;

	if (s == e || *s != '[')
		return 0;
	q = number(s + 1, e, 16, &tsc);
	if (!q || !starts(q, e, "] "))
		return 0;
	q += 2;
	open = q < e && *q == '{';
	name = q + open;
	name_end = e;
	while (name_end > name && (name_end[-1] == '\r' || name_end[-1] == ' '))
		name_end--;
	if (!open && (name_end == name || name_end[-1] != '}'))
		return 0;
	if (!open)
		name_end--;
	if (open) {
		enum section sec = section_of(name, (size_t)(name_end - name));

		p->log->sections++;
		if (sec == SEC_OTHER)
			p->log->unknown_sections++;
		if (p->depth >= MAX_DEPTH || p->dropped) {
			p->dropped++;
			p->dump_open = 0;
			return 1;
		}
		p->stack[p->depth] = sec;
		p->stack_tsc[p->depth] = tsc;
		p->stack_phase[p->depth] = (uint8_t)jf_pypylog_phase_of(name,
									 (size_t)(name_end - name));
		if (p->stack_phase[p->depth] &&
		    !new_mark(p, tsc, JF_PYPY_MARK_PHASE_BEGIN, p->stack_phase[p->depth]))
			return -1;
		p->depth++;
		if (sec == SEC_ITERATION) {
			if (!new_mark(p, tsc, JF_PYPY_MARK_ITERATION, 0))
				return -1;
			p->iteration = (long)p->log->nmarks - 1;
		}
		if (sec == SEC_ADDR)
			p->addr_trace = -1;
		if (sec == SEC_OPT)
			p->opt_trace = -1;
		if (sec == SEC_COUNTS)
			p->log->has_counts = 1;
		p->dump_open = 0;
		return 1;
	}
	if (p->dropped) {
		p->dropped--;
	} else if (p->depth) {
		enum section sec = section_of(name, (size_t)(name_end - name));

		if (sec != p->stack[p->depth - 1] ||
		    jf_pypylog_phase_of(name, (size_t)(name_end - name)) !=
			    p->stack_phase[p->depth - 1])
			problem(p, "section end \"%.*s}\" does not close the open section",
				(int)(name_end - name), name);
		p->depth--;
		/* The phase the opening began ends here, whatever the closing line names:
		 * begins and ends stay paired. */
		if (p->stack_phase[p->depth] &&
		    !new_mark(p, tsc, JF_PYPY_MARK_PHASE_END, p->stack_phase[p->depth]))
			return -1;
		if (p->stack[p->depth] == SEC_ITERATION)
			p->iteration = -1;
	} else {
		problem(p, "section end \"%.*s}\" with no section open", (int)(name_end - name), name);
	}
	p->dump_open = 0;
	return 1;
}

static int one_line(struct parser *p, const char *s, const char *e)
{
	int sec;

	while (e > s && e[-1] == '\r')
		e--;
	sec = section_line(p, s, e);
	if (sec)
		return sec < 0 ? -1 : 0;
	switch (current(p)) {
	case SEC_DUMP: return dump_line(p, s, e);
	case SEC_ADDR: return addr_line(p, s, e);
	case SEC_OPT: return opt_line(p, s, e);
	case SEC_COUNTS: return counts_line(p, s, e);
	case SEC_ITERATION: return iteration_line(p, s, e);
	default: return 0;
	}
}

int jf_pypylog_parse(struct jf_pypylog **out, const char *data, size_t size, const char *name,
		     struct jf_error *err)
{
	struct jf_pypylog *log = calloc(1, sizeof(*log));
	struct parser p;
	const char *s = data, *end = data + size;

	*out = NULL;
	if (!log || !(log->path = strdup(name))) {
		free(log);
		return jf_fail(err, "out of memory");
	}
	log->isa = JF_ISA_X86_64;
	memset(&p, 0, sizeof(p));
	p.log = log;
	p.name = log->path;
	p.addr_trace = p.opt_trace = p.iteration = -1;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *e = nl ? nl : end;

		p.line++;
		if (one_line(&p, s, e) < 0) {
			jf_pypylog_free(log);
			return jf_fail(err, "%s:%" PRIu32 ": out of memory", name, p.line);
		}
		s = nl ? nl + 1 : end;
	}
	log->lines = p.line;
	log->unclosed = p.depth + p.dropped;
	if (log->unclosed)
		problem(&p, "the log ends inside %" PRIu64 " open section(s) (cut short?)",
			log->unclosed);
	*out = log;
	return 0;
}

int jf_pypylog_read(struct jf_pypylog **out, const char *path, struct jf_error *err)
{
	struct jf_mapped_file f;
	int rc;

	*out = NULL;
	if (jf_map_file(&f, path, err))
		return -1;
	jf_mapped_file_sequential(&f);
	rc = jf_pypylog_parse(out, (const char *)f.data, f.size, path, err);
	jf_unmap_file(&f);
	return rc;
}

void jf_pypylog_free(struct jf_pypylog *log)
{
	struct arena_block *b, *next;

	if (!log)
		return;
	for (b = log->pool; b; b = next) {
		next = b->next;
		free(b);
	}
	free(log->dumps);
	free(log->traces);
	free(log->ops);
	free(log->counts);
	free(log->marks);
	free(log->path);
	free(log);
}

const struct jf_pypylog_trace *jf_pypylog_loop(const struct jf_pypylog *log, uint64_t number)
{
	long i = find_trace(log, JF_PYPY_LOOP, number);

	return i < 0 ? NULL : &log->traces[i];
}

const struct jf_pypylog_trace *jf_pypylog_bridge(const struct jf_pypylog *log, uint64_t guard)
{
	long i = find_trace(log, JF_PYPY_BRIDGE, guard);

	return i < 0 ? NULL : &log->traces[i];
}
