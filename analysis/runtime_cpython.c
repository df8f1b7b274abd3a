/* CPython's description (runtime.h), for results whose zone records declare
 * JF_RUNTIME_CPYTHON, as the module in tools/runtimes/cpython does: executors named by
 * code object, file:line and the bytecode offset they start at; the module's POINTs
 * counted as entries into each uop's stencil (id uop << 32 | index) and as exits of each
 * guard uop (id 2^63 | uop << 32 | index << 8 | n, one per jump to its exit stub); cold
 * exits, which are trampolines named "cold exit N"; and _EXIT_TRACE, the uop that leaves
 * an executor for the next one or the interpreter. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/emitter.h"
#include "jitflow/json_out.h"
#include "runtime.h"

#define EXIT_BIT (1ull << 63)
#define UOP_IDS 1024           /* CPython 3.13 has under 400 uops */
#define COLD_EXIT_PREFIX "cold exit "

static unsigned uop_of(uint64_t point_id) { return (unsigned)((point_id >> 32) & 0x7fffffff); }
static unsigned index_of(uint64_t point_id)
{
	return (unsigned)(point_id & EXIT_BIT ? (point_id >> 8) & 0xffffff : point_id & 0xffffffff);
}

/* The uop's name from the OP_NAME records; the result names only uops that ran. */
static const char *uop_name(const struct jf_analysis_result *r, unsigned uop, char *buf, size_t size)
{
	size_t i;

	for (i = 0; i < r->nops; i++)
		if (r->ops[i].op_kind == uop && r->ops[i].name[0])
			return r->ops[i].name;
	snprintf(buf, size, "uop %u", uop);
	return buf;
}

struct uop_sum {
	uint64_t entries, exits;
	int stencil, guard;
};

/* Stencil entries and guard exits of every uop, over all executors. */
static struct uop_sum *sum_uops(const struct jf_analysis_result *r)
{
	struct uop_sum *sum = calloc(UOP_IDS, sizeof(*sum));
	size_t i;

	for (i = 0; sum && i < r->npoints; i++) {
		const struct jf_point_result *p = &r->points[i];
		unsigned uop = uop_of(p->point_id);

		if (p->kind != JF_POINT_LABEL || uop >= UOP_IDS)
			continue;
		if (p->point_id & EXIT_BIT) {
			sum[uop].guard = 1;
			sum[uop].exits += p->passes;
		} else {
			sum[uop].stencil = 1;
			sum[uop].entries += p->passes;
		}
	}
	return sum;
}

static void sum_cold_exits(const struct jf_analysis_result *r, uint64_t *count, uint64_t *entries)
{
	size_t i;

	*count = *entries = 0;
	for (i = 0; i < r->nregions; i++)
		if (!strncmp(r->regions[i].name, COLD_EXIT_PREFIX, strlen(COLD_EXIT_PREFIX))) {
			(*count)++;
			*entries += r->regions[i].entries;
		}
}

static uint64_t entries_of_uop(const struct jf_analysis_result *r, const struct uop_sum *sum,
			       const char *name)
{
	char buf[32];
	unsigned u;

	for (u = 0; u < UOP_IDS; u++)
		if (sum[u].stencil && !strcmp(uop_name(r, u, buf, sizeof(buf)), name))
			return sum[u].entries;
	return 0;
}

/* What a guard uop checks, from its name (CPython 3.13's uops with an exit or deopt
 * flag, Include/internal/pycore_uop_metadata.h); the first match names it. */
static const struct {
	const char *part, *kind;
} guard_kinds[] = {
	{ "_NOT_EXHAUSTED", "iterator not exhausted" },
	{ "_GUARD_IS_", "truth (is true, false, none)" },
	{ "_TYPE_VERSION", "type version" },
	{ "_KEYS_VERSION", "type version" },
	{ "_CHECK_ATTR_CLASS", "type version" },
	{ "_CHECK_METHOD_VERSION", "type version" },
	{ "_CHECK_ATTR_METHOD_LAZY_DICT", "type version" },
	{ "_GLOBALS_VERSION", "dict version (globals, builtins, module)" },
	{ "_BUILTINS_VERSION", "dict version (globals, builtins, module)" },
	{ "_LOAD_GLOBAL_", "dict version (globals, builtins, module)" },
	{ "_ATTR_MODULE", "dict version (globals, builtins, module)" },
	{ "_CHECK_FUNCTION", "callee (function version, arguments, stack)" },
	{ "_CHECK_CALL_BOUND_METHOD", "callee (function version, arguments, stack)" },
	{ "_CHECK_PEP_523", "callee (function version, arguments, stack)" },
	{ "_CHECK_IS_NOT_PY_CALLABLE", "callee (function version, arguments, stack)" },
	{ "_CHECK_STACK_SPACE", "callee (function version, arguments, stack)" },
	{ "_GUARD_BOTH_", "operand type" },
	{ "_GUARD_NOS_", "operand type" },
	{ "_GUARD_TOS_", "operand type" },
	{ "_ITER_CHECK_", "operand type" },
	{ "_TO_BOOL_", "operand type" },
	{ "_CHECK_VALIDITY", "executor valid (invalidated, eval breaker)" },
	{ "RESUME_CHECK", "executor valid (invalidated, eval breaker)" },
	{ "_START_EXECUTOR", "executor valid (invalidated, eval breaker)" },
	{ "_CHECK_MANAGED_OBJECT", "attribute layout" },
	{ "_CHECK_ATTR_", "attribute layout" },
	{ "_LOAD_ATTR_", "attribute layout" },
	{ "_GUARD_DORV_", "attribute layout" },
};
#define OTHER_GUARD_KIND "specialized op (call, subscript, compare)"
#define NGUARD_KINDS 9       /* the distinct kinds above, and the other one */

static const char *guard_kind(const char *uop)
{
	size_t i;

	for (i = 0; i < sizeof(guard_kinds) / sizeof(guard_kinds[0]); i++)
		if (strstr(uop, guard_kinds[i].part))
			return guard_kinds[i].kind;
	return OTHER_GUARD_KIND;
}

/* The distinct kinds in table order, the other one last; returns how many. */
static size_t kind_list(const char **kinds)
{
	size_t i, k, n = 0;

	for (i = 0; i < sizeof(guard_kinds) / sizeof(guard_kinds[0]); i++) {
		for (k = 0; k < n && strcmp(kinds[k], guard_kinds[i].kind); k++)
			;
		if (k == n)
			kinds[n++] = guard_kinds[i].kind;
	}
	kinds[n++] = OTHER_GUARD_KIND;
	return n;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const char *not_told_apart(const struct jf_analysis_result *r)
{
	(void)r;
	return "the eval loop's helpers and the rest of libpython that JIT code and the "
	       "interpreter call: counted as native; uops of a function an executor inlined "
	       "(_PUSH_FRAME): counted in the executor (their bytecode ranges are the "
	       "function's own: jitflow bytecodes)";
}

static void cpython_executors(FILE *out, const struct jf_analysis_result *r, size_t top)
{
	size_t *idx, i, n = r->ntraces < top ? r->ntraces : top;

	if (!r->ntraces) {
		fprintf(out, "Executors: none\n");
		return;
	}
	idx = jf_runtime_rank_traces(r);
	if (!idx)
		return;
	fprintf(out, "Executors (top %zu of %zu by instructions; named by code object, "
		     "file:line and bytecode offset)\n", n, r->ntraces);
	fprintf(out, "  %6s %10s %12s %14s %7s  %s\n", "id", "entries", "guard exits",
		"instructions", "%", "name");
	for (i = 0; i < n; i++) {
		const struct jf_trace_result *t = &r->traces[idx[i]];

		fprintf(out, "  %6" PRIu64 " %10" PRIu64 " %12" PRIu64 " %14" PRIu64 " %6.1f%%  %s\n",
			t->trace_id, t->entries, t->exits, t->insns, pct(t->insns, r->insns), t->name);
	}
	free(idx);
}

/* The uop a guard decides: the module's guard ids are uop index x 2 (+ 1 for branches
 * that exit when they fall through), and its exit POINTs name the uop at that index. */
static const char *guard_uop(const struct jf_analysis_result *r, const struct jf_guard_result *g,
			     char *buf, size_t size)
{
	size_t i;

	for (i = 0; i < r->npoints; i++) {
		const struct jf_point_result *p = &r->points[i];

		if (p->trace_id == g->trace_id && p->kind == JF_POINT_LABEL &&
		    (p->point_id & EXIT_BIT) && index_of(p->point_id) == g->guard_id / 2)
			return uop_name(r, uop_of(p->point_id), buf, size);
	}
	return "-";
}

/* Branches of guard uops, by exits. Those that never ran (no exit, no pass: their uop's
 * stencil never reached them) are left out and counted: the uop may not have run at all,
 * and a table of them would be most of the rows. */
static void cpython_guards(FILE *out, const struct jf_analysis_result *r, size_t top)
{
	size_t *idx, i, ran = 0, shown = 0;

	if (!r->nguards) {
		fprintf(out, "Guard uops: none described\n");
		return;
	}
	for (i = 0; i < r->nguards; i++)
		ran += r->guards[i].exits + r->guards[i].passes > 0;
	idx = jf_runtime_rank_guards(r);
	if (!idx)
		return;
	fprintf(out, "Guard uops (top %zu of %zu branches that ran, by exits; %zu that never ran "
		     "left out; guard G is a branch of the executor's uop G/2)\n",
		ran < top ? ran : top, ran, r->nguards - ran);
	fprintf(out, "  %14s %-28s %10s %12s %9s %9s  %s\n", "executor/guard", "uop", "exits",
		"passes", "fail %", "resume @", "kind");
	for (i = 0; i < r->nguards && shown < top; i++) {
		const struct jf_guard_result *g = &r->guards[idx[i]];
		char id[48], buf[32];
		const char *uop;

		if (!(g->exits + g->passes))
			continue;
		uop = guard_uop(r, g, buf, sizeof(buf));
		snprintf(id, sizeof(id), "%" PRIu64 "/%" PRIu64, g->trace_id, g->guard_id);
		fprintf(out, "  %14s %-28s %10" PRIu64 " %12" PRIu64 " %8.2f%% %9u  %s\n", id, uop,
			g->exits, g->passes, pct(g->exits, g->exits + g->passes), g->resume_pc,
			strcmp(uop, "-") ? guard_kind(uop) : "-");
		shown++;
	}
	free(idx);
}

/* Uop u's name when it is a guard uop of that kind that ran, else NULL. */
static const char *guard_of_kind(const struct jf_analysis_result *r, const struct uop_sum *sum,
				 unsigned u, const char *kind, char *buf, size_t size)
{
	const char *name;

	if (!sum[u].guard || !(sum[u].entries || sum[u].exits))
		return NULL;
	name = uop_name(r, u, buf, size);
	return strcmp(guard_kind(name), kind) ? NULL : name;
}

/* The exits of a kind's guard uops (their exit POINTs); 0 uops: none of that kind ran. */
static uint64_t kind_exits(const struct jf_analysis_result *r, const struct uop_sum *sum,
			   const char *kind, unsigned *uops)
{
	uint64_t exits = 0;
	char buf[32];
	unsigned u;

	*uops = 0;
	for (u = 0; u < UOP_IDS; u++)
		if (guard_of_kind(r, sum, u, kind, buf, sizeof(buf))) {
			exits += sum[u].exits;
			(*uops)++;
		}
	return exits;
}

/* Guard exits by kind, and which uops those were. */
static void text_guard_kinds(FILE *out, const struct jf_analysis_result *r,
			     const struct uop_sum *sum)
{
	const char *kinds[NGUARD_KINDS], *name;
	size_t k, n = kind_list(kinds);
	char buf[32];
	unsigned u, uops;

	fprintf(out, "\nGuard kinds (exits of every guard uop, by what it checks)\n");
	fprintf(out, "  %-44s %10s  %s\n", "kind", "exits", "guard uops that ran");
	for (k = 0; k < n; k++) {
		uint64_t exits = kind_exits(r, sum, kinds[k], &uops);
		const char *sep = "";

		if (!uops)
			continue;
		fprintf(out, "  %-44s %10" PRIu64 "  ", kinds[k], exits);
		for (u = 0; u < UOP_IDS; u++)
			if ((name = guard_of_kind(r, sum, u, kinds[k], buf, sizeof(buf)))) {
				fprintf(out, "%s%s", sep, name);
				sep = " ";
			}
		fputc('\n', out);
	}
}

static const char *executor_name(const struct jf_analysis_result *r, uint64_t id)
{
	size_t i;

	for (i = 0; i < r->ntraces; i++)
		if (r->traces[i].trace_id == id)
			return r->traces[i].name;
	return "?";
}

static uint64_t chained(const struct jf_analysis_result *r)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < r->ntrace_links; i++)
		n += r->trace_links[i].count;
	return n;
}

/* Executor -> executor: control that left one executor's code straight into another's
 * (an exit whose _EXIT_TRACE runs the next executor, or _DYNAMIC_EXIT finding one);
 * through a cold exit or the interpreter it is not a chain. */
static void text_chains(FILE *out, const struct jf_analysis_result *r, size_t top)
{
	size_t i, n = r->ntrace_links < top ? r->ntrace_links : top;

	if (!r->ntrace_links) {
		fprintf(out, "\nExecutor chains: none (no executor ran straight into another)\n");
		return;
	}
	fprintf(out, "\nExecutor chains (top %zu of %zu pairs; an exit of one executor straight "
		     "into the next, %" PRIu64 " times in all)\n", n, r->ntrace_links, chained(r));
	fprintf(out, "  %6s %6s %10s  %s\n", "from", "to", "times", "into");
	for (i = 0; i < n; i++) {
		const struct jf_trace_link_result *l = &r->trace_links[i];

		fprintf(out, "  %6" PRIu64 " %6" PRIu64 " %10" PRIu64 "  %s\n", l->from_trace,
			l->to_trace, l->count, executor_name(r, l->to_trace));
	}
}

static int cpython_text(FILE *out, const struct jf_analysis_result *r)
{
	struct uop_sum *sum = sum_uops(r);
	uint64_t cold, cold_entries;
	char buf[32];
	unsigned u;

	if (!sum)
		return 0;
	fprintf(out, "Uop stencils (entries into each uop's stencil, all executors)\n");
	fprintf(out, "  %-36s %12s %12s\n", "uop", "entries", "guard exits");
	for (u = 0; u < UOP_IDS; u++) {
		if (!sum[u].stencil || (!sum[u].entries && !sum[u].exits))
			continue;
		fprintf(out, "  %-36s %12" PRIu64, uop_name(r, u, buf, sizeof(buf)), sum[u].entries);
		if (sum[u].guard)
			fprintf(out, " %12" PRIu64 "\n", sum[u].exits);
		else
			fprintf(out, " %12s\n", "-");
	}
	sum_cold_exits(r, &cold, &cold_entries);
	fprintf(out, "  cold exits: %" PRIu64 " described, entered %" PRIu64 " times\n", cold,
		cold_entries);
	fprintf(out, "  _EXIT_TRACE (leaving an executor for the next one or the interpreter): "
		     "%" PRIu64 " times\n", entries_of_uop(r, sum, "_EXIT_TRACE"));
	fprintf(out, "  Not told apart: %s\n", not_told_apart(r));
	text_guard_kinds(out, r, sum);
	text_chains(out, r, 10);
	free(sum);
	return 1;
}

static void json_points(FILE *out, const struct jf_analysis_result *r, uint64_t trace, int exits)
{
	size_t i;
	int first = 1;
	char buf[32];

	fprintf(out, ",\"%s\":[", exits ? "guard_exits" : "stencils");
	for (i = 0; i < r->npoints; i++) {
		const struct jf_point_result *p = &r->points[i];

		if (p->trace_id != trace || p->kind != JF_POINT_LABEL ||
		    !(p->point_id & EXIT_BIT) != !exits)
			continue;
		fprintf(out, "%s{\"point\":\"%" PRIu64 "\",\"uop\":", first ? "" : ",", p->point_id);
		jf_json_string(out, uop_name(r, uop_of(p->point_id), buf, sizeof(buf)));
		fprintf(out, ",\"uop_id\":%u,\"index\":%u,\"%s\":%" PRIu64, uop_of(p->point_id),
			index_of(p->point_id), exits ? "exits" : "entries", p->passes);
		if (exits) {
			fprintf(out, ",\"kind\":");
			jf_json_string(out, guard_kind(uop_name(r, uop_of(p->point_id), buf,
								 sizeof(buf))));
		}
		fputc('}', out);
		first = 0;
	}
	fputc(']', out);
}

/* ,"guard_kinds":[{"kind":K,"uops":[names],"exits":N}]: every kind with a guard uop that
 * ran, its uops' exits summed. */
static void json_guard_kinds(FILE *out, const struct jf_analysis_result *r,
			     const struct uop_sum *sum)
{
	const char *kinds[NGUARD_KINDS], *name, *sep = "";
	size_t k, n = kind_list(kinds);
	char buf[32];
	unsigned u, uops;

	fprintf(out, ",\"guard_kinds\":[");
	for (k = 0; k < n; k++) {
		uint64_t exits = kind_exits(r, sum, kinds[k], &uops);
		const char *comma = "";

		if (!uops)
			continue;
		fprintf(out, "%s{\"kind\":", sep);
		jf_json_string(out, kinds[k]);
		fprintf(out, ",\"uops\":[");
		for (u = 0; u < UOP_IDS; u++)
			if ((name = guard_of_kind(r, sum, u, kinds[k], buf, sizeof(buf)))) {
				fputs(comma, out);
				jf_json_string(out, name);
				comma = ",";
			}
		fprintf(out, "],\"exits\":%" PRIu64 "}", exits);
		sep = ",";
	}
	fputc(']', out);
}

static void cpython_json(FILE *out, const struct jf_analysis_result *r)
{
	struct uop_sum *sum = sum_uops(r);
	uint64_t cold, cold_entries;
	size_t i;

	fprintf(out, ",\"cpython\":{\"executors\":[");
	for (i = 0; i < r->ntraces; i++) {
		const struct jf_trace_result *t = &r->traces[i];

		fprintf(out, "%s{\"id\":%" PRIu64 ",\"name\":", i ? "," : "", t->trace_id);
		jf_json_string(out, t->name);
		fprintf(out, ",\"entries\":%" PRIu64 ",\"instructions\":%" PRIu64, t->entries, t->insns);
		json_points(out, r, t->trace_id, 0);
		json_points(out, r, t->trace_id, 1);
		fputc('}', out);
	}
	sum_cold_exits(r, &cold, &cold_entries);
	fprintf(out, "],\"cold_exits\":{\"count\":%" PRIu64 ",\"entries\":%" PRIu64 "}", cold,
		cold_entries);
	fprintf(out, ",\"exit_trace\":%" PRIu64, sum ? entries_of_uop(r, sum, "_EXIT_TRACE") : 0);
	if (sum)
		json_guard_kinds(out, r, sum);
	fprintf(out, ",\"chained\":%" PRIu64 ",\"chains\":[", chained(r));
	for (i = 0; i < r->ntrace_links; i++)
		fprintf(out, "%s{\"from\":%" PRIu64 ",\"to\":%" PRIu64 ",\"count\":%" PRIu64 "}",
			i ? "," : "", r->trace_links[i].from_trace, r->trace_links[i].to_trace,
			r->trace_links[i].count);
	fputc(']', out);
	fprintf(out, ",\"not_told_apart\":");
	jf_json_string(out, not_told_apart(r));
	fputc('}', out);
	free(sum);
}

const struct jf_runtime_desc jf_runtime_cpython = {
	.name = "CPython",
	.kind_names = {
		[JF_REGION_TRACE] = "executor",
	},
	.class_names = {
		[JF_CLASS_TRACE] = "executor",
	},
	.trace = "executor",
	.bridge = "side executor",
	.bridges = "side executors",
	.guard = "guard",
	.guards = "guard uops",
	.guard_exit = "guard exit",
	.not_told_apart = not_told_apart,
	.text_traces = cpython_executors,
	.text_guards = cpython_guards,
	.text_section = cpython_text,
	.json_section = cpython_json,
};
