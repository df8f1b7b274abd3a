/* HotSpot's description (runtime.h), for results whose zone records declare
 * JF_RUNTIME_HOTSPOT, as the JVMTI agent (tools/runtimes/hotspot) does: nmethods by
 * compile id, named by tier from the level and OSR bci the agent puts in their names
 * ("nmethod 52 L1 osr@4 HotLoops.sum(I)J": level 0 a native wrapper, 1-3 C1, 4 C2), the
 * interpreter's codelets by bytecode ("Interpreter: iadd"), adapters and stubs, and the
 * calls into UncommonTrapBlob and DeoptimizationBlob, which are where compiled code
 * leaves for the interpreter: each call into UncommonTrapBlob is a guard the agent
 * describes (trap_sites.c), by compile id, offset, bci, reason and frames; entries other
 * than at an nmethod's start are in runtime_hotspot_entries.c. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hotspot_methods.h"
#include "hotspot_threads.h"
#include "jitflow/emitter.h"
#include "jitflow/json_out.h"
#include "runtime.h"
#include "runtime_hotspot_entries.h"

#define CODELET_PREFIX "Interpreter: "
#define TOP_CODELETS 10
#define TOP_METHODS 5

enum tier { TIER_NATIVE, TIER_C1, TIER_C2, TIER_UNKNOWN, TIER_COUNT };

static const char *const tier_names[TIER_COUNT] = { "native wrapper", "C1", "C2", "nmethod" };
static const char *const tier_osr_names[TIER_COUNT] = { "native wrapper", "C1 OSR", "C2 OSR",
							"nmethod" };
static const char *const tier_keys[TIER_COUNT] = { "native_wrapper", "c1", "c2",
						   "unknown_level" };

/* The tier and OSR kind an nmethod's name gives; TIER_UNKNOWN when the agent could not
 * read the level (a JVM whose tables lack it names the nmethod without one). */
static enum tier tier_of(const char *name, int *osr)
{
	int id, level;

	*osr = strstr(name, " osr@") != NULL;
	if (sscanf(name, "nmethod %d L%d", &id, &level) != 2)
		return TIER_UNKNOWN;
	if (level == 0)
		return TIER_NATIVE;
	return level >= 4 ? TIER_C2 : TIER_C1;
}

/* The tier of an nmethod (a trace of kind function). */
static const char *nmethod_tier(const struct jf_trace_result *t)
{
	int osr;
	enum tier tier = tier_of(t->name, &osr);

	return osr ? tier_osr_names[tier] : tier_names[tier];
}

static const char *trace_kind(const struct jf_trace_result *t)
{
	return t->kind == JF_REGION_FUNCTION ? nmethod_tier(t) : NULL;
}

/* nmethods are counted per thread by tier (hotspot_threads.c). */
static uint8_t region_group(uint32_t kind, const char *name)
{
	static const uint8_t group_of_tier[TIER_COUNT] = {
		[TIER_NATIVE] = JF_HOTSPOT_GROUP_NATIVE_WRAPPER, [TIER_C1] = JF_HOTSPOT_GROUP_C1,
		[TIER_C2] = JF_HOTSPOT_GROUP_C2, [TIER_UNKNOWN] = JF_HOTSPOT_GROUP_UNKNOWN_LEVEL,
	};
	int osr;

	return kind == JF_REGION_FUNCTION ? group_of_tier[tier_of(name, &osr)] : 0;
}

struct tier_sum {
	uint64_t nmethods, osr, entries, insns;
};

/* nmethods described in the flow, by tier. */
static void sum_tiers(const struct jf_analysis_result *r, struct tier_sum *sum)
{
	size_t i;

	memset(sum, 0, TIER_COUNT * sizeof(*sum));
	for (i = 0; i < r->ntraces; i++) {
		const struct jf_trace_result *t = &r->traces[i];
		int osr;
		enum tier tier;

		if (t->kind != JF_REGION_FUNCTION)
			continue;
		tier = tier_of(t->name, &osr);
		sum[tier].nmethods++;
		sum[tier].osr += (uint64_t)osr;
		sum[tier].entries += jf_hotspot_nmethod_entries(r, t);
		sum[tier].insns += t->insns;
	}
}

/* Instructions and entries in regions of one kind, or named name exactly. */
static void sum_regions(const struct jf_analysis_result *r, int kind, const char *name,
			uint64_t *insns, uint64_t *entries)
{
	size_t i;

	*insns = *entries = 0;
	for (i = 0; i < r->nregions; i++) {
		const struct jf_region_result *g = &r->regions[i];

		if (name ? strcmp(g->name, name) != 0 : (int)g->kind != kind)
			continue;
		*insns += g->insns;
		*entries += g->entries;
	}
}

static int is_codelet(const struct jf_region_result *g)
{
	return g->kind == JF_REGION_INTERPRETER &&
	       !strncmp(g->name, CODELET_PREFIX, strlen(CODELET_PREFIX));
}

/* Indexes of the codelet regions that ran, most entries first; *n of them. */
static size_t *rank_codelets(const struct jf_analysis_result *r, size_t *n)
{
	uint64_t *key = malloc((r->nregions ? r->nregions : 1) * sizeof(*key));
	size_t *idx, i;

	*n = 0;
	if (!key)
		return NULL;
	for (i = 0; i < r->nregions; i++) {
		key[i] = is_codelet(&r->regions[i]) ? r->regions[i].entries : 0;
		*n += key[i] != 0;
	}
	idx = jf_runtime_order_by(r->nregions, key);
	free(key);
	return idx;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void hotspot_nmethods(FILE *out, const struct jf_analysis_result *r, size_t top)
{
	size_t *idx, i, n = r->ntraces < top ? r->ntraces : top;

	if (!r->ntraces) {
		fprintf(out, "Nmethods: none\n");
		return;
	}
	idx = jf_runtime_rank_traces(r);
	if (!idx)
		return;
	fprintf(out, "Nmethods (top %zu of %zu by instructions; tier from the nmethod's level; an "
		"nmethod's entries at its verified entry, an OSR nmethod's at its OSR entry)\n", n, r->ntraces);
	fprintf(out, "  %7s %-14s %10s %14s %7s  %s\n", "compile", "tier", "entries",
		"instructions", "%", "name");
	for (i = 0; i < n; i++) {
		const struct jf_trace_result *t = &r->traces[idx[i]];
		const char *tier = trace_kind(t);
		uint64_t entries = jf_hotspot_nmethod_entries(r, t);

		fprintf(out, "  %7" PRIu64 " %-14s %10" PRIu64 " %14" PRIu64 " %6.1f%%  %s\n",
			t->trace_id, tier ? tier : "-", entries, t->insns, pct(t->insns, r->insns),
			t->name);
	}
	free(idx);
}

/* The nmethod (trace) a guard belongs to, or NULL. */
static const struct jf_trace_result *nmethod_of(const struct jf_analysis_result *r,
						const struct jf_guard_result *g)
{
	size_t i;

	for (i = 0; i < r->ntraces; i++)
		if (r->traces[i].trace_id == g->trace_id &&
		    (size_t)(g - r->guards) - r->traces[i].guard_first < r->traces[i].guard_count)
			return &r->traces[i];
	return NULL;
}

/* A trap call's kind is "REASON: M.a@1 <- M.b@7" (the reason empty when the agent could
 * not tell it; the frames at the call, innermost first), or the reason alone. The reason
 * into buf (empty: not told); returns the frames, or NULL. */
static const char *trap_reason(const struct jf_guard_result *g, char *buf, size_t size)
{
	const char *colon = strchr(g->kind, ':');
	size_t n = colon ? (size_t)(colon - g->kind) : strlen(g->kind);

	if (n >= size)
		n = size - 1;
	memcpy(buf, g->kind, n);
	buf[n] = '\0';
	if (!colon)
		return NULL;
	return colon[1] == ' ' ? colon + 2 : colon + 1;
}

/* The frames "M.a@1 <- M.b@7" as a JSON array of {"method","bci"}. */
static void json_frames(FILE *out, const char *frames)
{
	char method[192];
	int first = 1;

	fputc('[', out);
	while (frames && *frames) {
		const char *end = strstr(frames, " <- "), *at;
		size_t len = end ? (size_t)(end - frames) : strlen(frames);

		at = memchr(frames, '@', len);
		/* a frame names a method and a bci; a damaged one is left out */
		if (at && at > frames && (size_t)(at - frames) < sizeof(method) &&
		    at + 1 < frames + len && (isdigit((unsigned char)at[1]) || at[1] == '-')) {
			memcpy(method, frames, (size_t)(at - frames));
			method[at - frames] = '\0';
			fprintf(out, "%s{\"method\":", first ? "" : ",");
			jf_json_string(out, method);
			fprintf(out, ",\"bci\":%d}", atoi(at + 1));
			first = 0;
		}
		frames = end ? end + 4 : NULL;
	}
	fputc(']', out);
}

static uint64_t trap_exits(const struct jf_analysis_result *r, size_t *taken)
{
	uint64_t exits = 0;
	size_t i;

	*taken = 0;
	for (i = 0; i < r->nguards; i++) {
		exits += r->guards[i].exits;
		*taken += r->guards[i].exits != 0;
	}
	return exits;
}

/* The agent writes a guard per call from an nmethod into UncommonTrapBlob: its trace is
 * the compile id, its id the call's offset, its resume pc the innermost frame's bci, its
 * kind the trap reason; every run of the call is one exit. */
static void hotspot_traps(FILE *out, const struct jf_analysis_result *r, size_t top)
{
	size_t *idx, i, taken;
	uint64_t exits = trap_exits(r, &taken);

	if (!r->nguards) {
		fprintf(out, "Uncommon traps: no nmethod calls UncommonTrapBlob\n");
		return;
	}
	fprintf(out, "Uncommon traps (%" PRIu64 " taken at %zu of %zu trap calls in nmethods; "
		"bci of the innermost frame; the frames at the call, innermost first)\n", exits,
		taken, r->nguards);
	idx = jf_runtime_rank_guards(r);
	if (!idx)
		return;
	fprintf(out, "  %7s %8s %5s %-22s %8s  %s\n", "compile", "offset", "bci", "reason",
		"exits", "nmethod");
	for (i = 0; i < taken && i < top; i++) {
		const struct jf_guard_result *g = &r->guards[idx[i]];
		const struct jf_trace_result *t = nmethod_of(r, g);
		char reason[64];
		const char *frames = trap_reason(g, reason, sizeof(reason));

		fprintf(out, "  %7" PRIu64 " %#8" PRIx64 " %5u %-22s %8" PRIu64 "  %s\n", g->trace_id,
			g->guard_id, g->resume_pc, reason[0] ? reason : "(not told)", g->exits,
			t ? t->name : "-");
		if (frames)
			fprintf(out, "  %7s at %s\n", "", frames);
	}
	free(idx);
}

static void json_traps(FILE *out, const struct jf_analysis_result *r)
{
	size_t *idx = jf_runtime_rank_guards(r), i, taken;
	uint64_t exits = trap_exits(r, &taken);

	fprintf(out, ",\"trap_calls\":%zu,\"trap_exits\":%" PRIu64 ",\"traps\":[", r->nguards,
		exits);
	for (i = 0; idx && i < taken; i++) {
		const struct jf_guard_result *g = &r->guards[idx[i]];
		const struct jf_trace_result *t = nmethod_of(r, g);
		char reason[64];
		const char *frames = trap_reason(g, reason, sizeof(reason));

		fprintf(out, "%s{\"compile_id\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"bci\":%u,"
			"\"reason\":", i ? "," : "", g->trace_id, g->guard_id, g->resume_pc);
		if (reason[0])
			jf_json_string(out, reason);
		else
			fputs("null", out);
		fprintf(out, ",\"frames\":");
		json_frames(out, frames);
		fprintf(out, ",\"exits\":%" PRIu64 ",\"nmethod\":", g->exits);
		jf_json_string(out, t ? t->name : "");
		fputc('}', out);
	}
	fputc(']', out);
	free(idx);
}

static const char *not_told_apart(const struct jf_analysis_result *r)
{
	(void)r;
	return "the VM's own C++ in libjvm outside collections (compilers, class loading, "
	       "the runtime calls compiled code makes, GC worker threads' loops): counted as "
	       "VM (runtime native); an nmethod that "
	       "ran before its CompiledMethodLoad record applied: counted as unknown in a trace "
	       "made without jitflow's recorder (whose observed code describes it); an "
	       "entry into DeoptimizationBlob other than through a deopt handler is not tied to "
	       "an nmethod, and an exception unwinding into a deoptimized frame (which goes "
	       "into the blob past its start) is no entry; an nmethod made not entrant shows "
	       "only when called through its verified entry again";
}

static void text_tiers(FILE *out, const struct jf_analysis_result *r)
{
	struct tier_sum sum[TIER_COUNT];
	int t, any = 0;

	sum_tiers(r, sum);
	for (t = 0; t < TIER_COUNT; t++) {
		if (!sum[t].nmethods)
			continue;
		if (!any++)
			fprintf(out, "  %-15s %8s %5s %10s %14s\n", "nmethod tier", "nmethods", "OSR",
				"entries", "instructions");
		fprintf(out, "  %-15s %8" PRIu64 " %5" PRIu64 " %10" PRIu64 " %14" PRIu64 "\n",
			tier_names[t], sum[t].nmethods, sum[t].osr, sum[t].entries, sum[t].insns);
	}
	if (!any)
		fprintf(out, "  nmethods: none\n");
}

static void text_codelets(FILE *out, const struct jf_analysis_result *r)
{
	size_t *idx, n, i;

	idx = rank_codelets(r, &n);
	if (idx && n) {
		fprintf(out, "Interpreted bytecodes (top %zu of %zu codelets by entries)\n",
			n < TOP_CODELETS ? n : TOP_CODELETS, n);
		for (i = 0; i < n && i < TOP_CODELETS; i++) {
			const struct jf_region_result *g = &r->regions[idx[i]];

			fprintf(out, "  %-40s entries %10" PRIu64 ", instructions %12" PRIu64 "\n",
				g->name + strlen(CODELET_PREFIX), g->entries, g->insns);
		}
	}
	free(idx);
}

static int hotspot_text(FILE *out, const struct jf_analysis_result *r)
{
	uint64_t insns, entries;

	fprintf(out, "HotSpot code\n");
	text_tiers(out, r);
	sum_regions(r, JF_REGION_INTERPRETER, NULL, &insns, &entries);
	fprintf(out, "  interpreter codelets: %" PRIu64 " instructions\n", insns);
	sum_regions(r, JF_REGION_TRAMPOLINE, NULL, &insns, &entries);
	fprintf(out, "  I2C/C2I adapters: %" PRIu64 " instructions, %" PRIu64 " entries\n", insns,
		entries);
	sum_regions(r, JF_REGION_OTHER, NULL, &insns, &entries);
	fprintf(out, "  other stubs: %" PRIu64 " instructions\n", insns);
	sum_regions(r, -1, "UncommonTrapBlob", &insns, &entries);
	fprintf(out, "  uncommon traps (entries into UncommonTrapBlob): %" PRIu64 "\n", entries);
	sum_regions(r, -1, "DeoptimizationBlob", &insns, &entries);
	fprintf(out, "  deoptimizations (entries into DeoptimizationBlob): %" PRIu64 "\n", entries);
	jf_hotspot_entries_text(out, r);
	jf_hotspot_threads_text(out, r);
	text_codelets(out, r);
	fprintf(out, "  Not told apart: %s\n", not_told_apart(r));
	jf_hotspot_methods_text(out, r, TOP_METHODS, nmethod_tier);
	return 1;
}

static void json_blob(FILE *out, const struct jf_analysis_result *r, const char *key,
		      const char *name)
{
	uint64_t insns, entries;

	sum_regions(r, -1, name, &insns, &entries);
	fprintf(out, ",\"%s\":{\"entries\":%" PRIu64 ",\"instructions\":%" PRIu64 "}", key,
		entries, insns);
}

static void hotspot_json(FILE *out, const struct jf_analysis_result *r)
{
	struct tier_sum sum[TIER_COUNT];
	uint64_t insns, entries;
	size_t *idx, n, i;
	int t;

	sum_tiers(r, sum);
	fprintf(out, ",\"hotspot\":{\"nmethods\":{");
	for (t = 0; t < TIER_COUNT; t++)
		fprintf(out, "%s\"%s\":{\"count\":%" PRIu64 ",\"osr\":%" PRIu64 ",\"entries\":%" PRIu64
			",\"instructions\":%" PRIu64 "}", t ? "," : "", tier_keys[t], sum[t].nmethods,
			sum[t].osr, sum[t].entries, sum[t].insns);
	sum_regions(r, JF_REGION_INTERPRETER, NULL, &insns, &entries);
	fprintf(out, "},\"interpreter_instructions\":%" PRIu64, insns);
	sum_regions(r, JF_REGION_TRAMPOLINE, NULL, &insns, &entries);
	fprintf(out, ",\"adapters\":{\"entries\":%" PRIu64 ",\"instructions\":%" PRIu64 "}", entries,
		insns);
	json_blob(out, r, "uncommon_traps", "UncommonTrapBlob");
	json_blob(out, r, "deoptimizations", "DeoptimizationBlob");
	json_traps(out, r);
	jf_hotspot_entries_json(out, r);
	jf_hotspot_threads_json(out, r);
	fprintf(out, ",\"bytecodes\":[");
	idx = rank_codelets(r, &n);
	for (i = 0; idx && i < n; i++) {
		const struct jf_region_result *g = &r->regions[idx[i]];

		fprintf(out, "%s{\"codelet\":", i ? "," : "");
		jf_json_string(out, g->name + strlen(CODELET_PREFIX));
		fprintf(out, ",\"entries\":%" PRIu64 ",\"instructions\":%" PRIu64 "}", g->entries,
			g->insns);
	}
	free(idx);
	fputc(']', out);
	jf_hotspot_methods_json(out, r, nmethod_tier);
	fprintf(out, ",\"not_told_apart\":");
	jf_json_string(out, not_told_apart(r));
	fputc('}', out);
}

const struct jf_runtime_desc jf_runtime_hotspot = {
	.name = "HotSpot",
	.kind_names = {
		[JF_REGION_FUNCTION] = "nmethod",
	},
	.trace_kind = trace_kind,
	.class_names = {
		[JF_CLASS_TRACE] = "nmethod",
		[JF_CLASS_TRAMPOLINE] = "adapter",
		[JF_CLASS_EXIT_STUB] = "trap stub",
	},
	.trace = "nmethod",
	.bridge = "bridge",
	.bridges = "bridges",
	.guard = "uncommon trap",
	.guards = "uncommon traps",
	.guard_exit = "uncommon trap",
	.not_told_apart = not_told_apart,
	.text_traces = hotspot_nmethods,
	.text_guards = hotspot_traps,
	.text_section = hotspot_text,
	.json_section = hotspot_json,
	.region_group = region_group,
};
