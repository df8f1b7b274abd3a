/* Where control enters an nmethod other than at its start, from the POINT records the
 * JVMTI agent writes per compile id (enum jf_hotspot_point, tools/runtimes/hotspot/
 * nmethod_points.c), counted from the flow:
 *
 *  - OSR entries: passes of an OSR nmethod's OSR entry, one per transition from the
 *    interpreter's loop;
 *  - deoptimizations: passes of an nmethod's deopt handlers, where a deoptimized frame of
 *    it returns before going on to DeoptimizationBlob's start; entries at that start that
 *    no handler led to are counted apart, not tied to an nmethod (an exception unwinding
 *    into a deoptimized frame goes to the blob's unpack_with_exception, inside it: that is
 *    no entry into the blob and is not counted);
 *  - made not entrant: runs of the verified entry that did not pass the byte inside its
 *    first instruction, i.e. ran the 5-byte jump HotSpot writes there. Only a call through
 *    the verified entry after the patch shows it: an nmethod made not entrant and never
 *    called so again, and every OSR nmethod (never patched), cannot be seen.
 * Points count only once their record applied: an entry made before the agent described
 * the nmethod (its CompiledMethodLoad comes later, from the Service Thread) is not counted. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/emitter.h"
#include "jitflow/json_out.h"
#include "jitflow/zone_format.h"
#include "runtime_hotspot_entries.h"

struct nmethod_entries {
	uint64_t compile_id;
	int osr_bci;           /* -1: not an OSR nmethod */
	uint64_t osr_entries, deopts, verified_runs, body_runs;
	const char *name;
};

static const char *nmethod_name(const struct jf_analysis_result *r, uint64_t compile_id)
{
	size_t i;

	for (i = 0; i < r->ntraces; i++)
		if (r->traces[i].trace_id == compile_id && r->traces[i].kind == JF_REGION_FUNCTION)
			return r->traces[i].name;
	return "";
}

static int osr_bci_of(const char *name)
{
	const char *at = strstr(name, " osr@");

	return at ? atoi(at + 5) : -1;
}

/* One row per compile id with points, in compile id order; *n rows. */
static struct nmethod_entries *collect(const struct jf_analysis_result *r, size_t *n)
{
	struct nmethod_entries *rows = calloc(r->npoints ? r->npoints : 1, sizeof(*rows));
	size_t i, j;

	*n = 0;
	if (!rows)
		return NULL;
	for (i = 0; i < r->npoints; i++) {
		const struct jf_point_result *p = &r->points[i];
		struct nmethod_entries *e;

		if (p->kind != JF_POINT_ENTRY)
			continue;
		for (j = 0; j < *n && rows[j].compile_id != p->trace_id; j++)
			;
		e = &rows[j];
		if (j == *n) {
			(*n)++;
			e->compile_id = p->trace_id;
			e->name = nmethod_name(r, p->trace_id);
			e->osr_bci = osr_bci_of(e->name);
		}
		switch (p->point_id) {
		case JF_HOTSPOT_OSR_ENTRY: e->osr_entries += p->passes; break;
		case JF_HOTSPOT_DEOPT_HANDLER:
		case JF_HOTSPOT_DEOPT_MH_HANDLER: e->deopts += p->passes; break;
		case JF_HOTSPOT_VERIFIED_ENTRY: e->verified_runs += p->passes; break;
		case JF_HOTSPOT_ENTRY_BODY: e->body_runs += p->passes; break;
		default: break;
		}
	}
	for (i = 1; i < *n; i++) /* few rows: insertion sort by compile id */
		for (j = i; j > 0 && rows[j - 1].compile_id > rows[j].compile_id; j--) {
			struct nmethod_entries t = rows[j];

			rows[j] = rows[j - 1];
			rows[j - 1] = t;
		}
	return rows;
}

/* Calls enter a normal nmethod at its verified entry: a caller with an inline cache
 * arrives at the start (the unverified entry), which checks the receiver's class and
 * falls through to the verified entry or leaves for the IC-miss stub, and a call resolved
 * statically or optimized arrives at the verified entry directly; a recursive call of the
 * nmethod itself does too. So the runs of the verified entry that went on into the body
 * are the calls that entered, each once; an arrival at the start whose class check failed
 * entered nothing, and a call the not-entrant jump turned away neither. An OSR nmethod is
 * entered at its OSR entry. Without the agent's verified-entry point (a nmethod described
 * some other way) entries are the arrivals at its first byte. */
uint64_t jf_hotspot_nmethod_entries(const struct jf_analysis_result *r,
				    const struct jf_trace_result *t)
{
	uint64_t osr = 0, body = 0;
	int verified_point = 0;
	size_t i;

	for (i = 0; i < r->npoints; i++) {
		const struct jf_point_result *p = &r->points[i];

		if (p->trace_id != t->trace_id || p->kind != JF_POINT_ENTRY)
			continue;
		if (p->point_id == JF_HOTSPOT_OSR_ENTRY)
			osr += p->passes;
		else if (p->point_id == JF_HOTSPOT_ENTRY_BODY)
			body += p->passes;
		else if (p->point_id == JF_HOTSPOT_VERIFIED_ENTRY)
			verified_point = 1;
	}
	return verified_point ? body + osr : t->entries + osr;
}

/* Calls the not-entrant jump turned away (the verified entry ran, its body did not). */
static uint64_t turned_away(const struct nmethod_entries *e)
{
	return e->verified_runs > e->body_runs ? e->verified_runs - e->body_runs : 0;
}

static uint64_t blob_entries(const struct jf_analysis_result *r, const char *name)
{
	uint64_t entries = 0;
	size_t i;

	for (i = 0; i < r->nregions; i++)
		if (!strcmp(r->regions[i].name, name))
			entries += r->regions[i].entries;
	return entries;
}

static uint64_t tied_deopts(const struct nmethod_entries *rows, size_t n)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum += rows[i].deopts;
	return sum;
}

void jf_hotspot_entries_text(FILE *out, const struct jf_analysis_result *r)
{
	size_t n, i, shown;
	struct nmethod_entries *rows = collect(r, &n);
	uint64_t blob, tied;

	if (!rows)
		return;
	for (i = shown = 0; i < n; i++) {
		if (rows[i].osr_bci < 0)
			continue;
		if (!shown++)
			fprintf(out, "OSR nmethods (entries from the interpreter's loop at the OSR "
				"entry)\n  %7s %7s %10s  %s\n", "compile", "bci", "entries", "nmethod");
		fprintf(out, "  %7" PRIu64 " %7d %10" PRIu64 "  %s\n", rows[i].compile_id,
			rows[i].osr_bci, rows[i].osr_entries, rows[i].name);
	}
	blob = blob_entries(r, "DeoptimizationBlob");
	tied = tied_deopts(rows, n);
	fprintf(out, "Deoptimizations (%" PRIu64 " entries into DeoptimizationBlob: %" PRIu64
		" from a deoptimized frame's return into its nmethod's deopt handler, %" PRIu64
		" another way, not tied to an nmethod)\n", blob, tied, blob > tied ? blob - tied : 0);
	if (tied)
		fprintf(out, "  %7s %10s  %s\n", "compile", "frames", "nmethod");
	for (i = 0; i < n; i++)
		if (rows[i].deopts)
			fprintf(out, "  %7" PRIu64 " %10" PRIu64 "  %s\n", rows[i].compile_id,
				rows[i].deopts, rows[i].name);
	for (i = shown = 0; i < n; i++) {
		if (!turned_away(&rows[i]))
			continue;
		if (!shown++)
			fprintf(out, "Nmethods seen made not entrant (calls the jump at the verified "
				"entry turned away)\n  %7s %10s  %s\n", "compile", "calls", "nmethod");
		fprintf(out, "  %7" PRIu64 " %10" PRIu64 "  %s\n", rows[i].compile_id,
			turned_away(&rows[i]), rows[i].name);
	}
	fprintf(out, "  Not seen: an nmethod made not entrant that was not called through its "
		"verified entry again, every OSR nmethod made not entrant (never patched), and an "
		"OSR entry or deoptimization before the nmethod's record applied\n");
	free(rows);
}

static void json_name(FILE *out, const char *name)
{
	fprintf(out, ",\"nmethod\":");
	jf_json_string(out, name);
	fputc('}', out);
}

void jf_hotspot_entries_json(FILE *out, const struct jf_analysis_result *r)
{
	size_t n, i, k;
	struct nmethod_entries *rows = collect(r, &n);
	uint64_t blob = blob_entries(r, "DeoptimizationBlob"), tied = rows ? tied_deopts(rows, n) : 0;

	fprintf(out, ",\"osr_entries\":[");
	for (i = k = 0; rows && i < n; i++)
		if (rows[i].osr_bci >= 0) {
			fprintf(out, "%s{\"compile_id\":%" PRIu64 ",\"osr_bci\":%d,\"entries\":%" PRIu64,
				k++ ? "," : "", rows[i].compile_id, rows[i].osr_bci, rows[i].osr_entries);
			json_name(out, rows[i].name);
		}
	fprintf(out, "],\"deoptimized\":[");
	for (i = k = 0; rows && i < n; i++)
		if (rows[i].deopts) {
			fprintf(out, "%s{\"compile_id\":%" PRIu64 ",\"count\":%" PRIu64, k++ ? "," : "",
				rows[i].compile_id, rows[i].deopts);
			json_name(out, rows[i].name);
		}
	fprintf(out, "],\"deoptimizations_not_tied\":%" PRIu64 ",\"not_entrant_seen\":[",
		blob > tied ? blob - tied : 0);
	for (i = k = 0; rows && i < n; i++)
		if (turned_away(&rows[i])) {
			fprintf(out, "%s{\"compile_id\":%" PRIu64 ",\"calls_turned_away\":%" PRIu64,
				k++ ? "," : "", rows[i].compile_id, turned_away(&rows[i]));
			json_name(out, rows[i].name);
		}
	fputc(']', out);
	free(rows);
}
