/* One table of the result as CSV, for spreadsheets and scripts. */
#include <inttypes.h>
#include <string.h>

#include "jitflow/report.h"
#include "runtime.h"

const char jf_report_csv_tables[] = "traces, guards, split, bytecodes, ops, regions, iterations";

/* Names may hold commas or quotes: quote them the CSV way. */
static void field(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/* A column name of the runtime's words: spaces become underscores. */
static const char *column(char *buf, size_t size, const char *prefix, const char *word)
{
	char *p;

	snprintf(buf, size, "%s%s", prefix, word);
	for (p = buf; *p; p++)
		if (*p == ' ')
			*p = '_';
	return buf;
}

int jf_report_csv(FILE *out, const struct jf_analysis_result *r, const char *table)
{
	const struct jf_runtime_desc *rt = jf_runtime_of(r);
	char guard[48], bridge[48], before[64], to[64];
	size_t i;
	int c;

	column(guard, sizeof(guard), "", rt->guard);
	column(bridge, sizeof(bridge), "", rt->bridge);
	column(before, sizeof(before), "exits_before_", rt->bridge);
	column(to, sizeof(to), "to_", rt->bridge);
	if (!strcmp(table, "traces")) {
		fprintf(out, "id,kind,parent_trace,parent_%s,entries,iterations,instructions,time,"
			"exits,name\n", guard);
		for (i = 0; i < r->ntraces; i++) {
			const struct jf_trace_result *t = &r->traces[i];

			fprintf(out, "%" PRIu64 ",%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%"
				PRIu64 ",%" PRIu64 ",%" PRIu64 ",", t->trace_id, t->kind, t->parent_trace,
				t->parent_guard, t->entries, t->iterations, t->insns, t->time, t->exits);
			field(out, t->name);
			fputc('\n', out);
		}
	} else if (!strcmp(table, "guards")) {
		fprintf(out, "trace,%s,exits,passes,unresolved,branch,stub,resume_pc,%s,%s,"
			"to_interpreter,%s\n", guard, bridge, before, to);
		for (i = 0; i < r->nguards; i++) {
			const struct jf_guard_result *g = &r->guards[i];

			fprintf(out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",0x%" PRIx64
				",0x%" PRIx64 ",%u,", g->trace_id, g->guard_id, g->exits, g->passes,
				g->unresolved, g->branch_addr, g->stub_addr, g->resume_pc);
			if (g->has_bridge)
				fprintf(out, "%" PRIu64 ",%" PRIu64 ",", g->bridge_id, g->exits_before_bridge);
			else
				fprintf(out, ",,");
			fprintf(out, "%" PRIu64 ",%" PRIu64 "\n", g->exits - g->to_bridge, g->to_bridge);
		}
	} else if (!strcmp(table, "split")) {
		fprintf(out, "tid,class,instructions,time\n");
		for (i = 0; i <= r->nthreads; i++) {
			const struct jf_split_result *s = i ? &r->threads[i - 1] : &r->total;

			for (c = 0; c < JF_SPLIT_COUNT; c++)
				fprintf(out, "%d,%s,%" PRIu64 ",%" PRIu64 "\n", s->tid,
					jf_split_class_name(c), s->insns[c], s->time[c]);
		}
	} else if (!strcmp(table, "bytecodes")) {
		fprintf(out, "region,pc_from,pc_to,instructions\n");
		for (i = 0; i < r->nbytecodes; i++)
			fprintf(out, "%" PRIu64 ",%u,%u,%" PRIu64 "\n", r->bytecodes[i].region_key,
				r->bytecodes[i].pc_from, r->bytecodes[i].pc_to, r->bytecodes[i].insns);
	} else if (!strcmp(table, "ops")) {
		fprintf(out, "kind,name,instructions\n");
		for (i = 0; i < r->nops; i++) {
			fprintf(out, "%u,", r->ops[i].op_kind);
			field(out, r->ops[i].name);
			fprintf(out, ",%" PRIu64 "\n", r->ops[i].insns);
		}
	} else if (!strcmp(table, "regions")) {
		fprintf(out, "addr,size,kind,instructions,entries,name\n");
		for (i = 0; i < r->nregions; i++) {
			fprintf(out, "0x%" PRIx64 ",%" PRIu64 ",%u,%" PRIu64 ",%" PRIu64 ",",
				r->regions[i].addr, r->regions[i].size, r->regions[i].kind,
				r->regions[i].insns, r->regions[i].entries);
			field(out, r->regions[i].name);
			fputc('\n', out);
		}
	} else if (!strcmp(table, "iterations")) {
		fprintf(out, "index,instructions,time,jitted_instructions\n");
		for (i = 0; i < r->niterations; i++) {
			struct jf_iteration_result it;

			jf_analysis_iteration(r, i, &it);
			fprintf(out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", it.index,
				it.insns, it.time, it.insns_by_split[JF_SPLIT_JITTED]);
		}
	} else {
		return -1;
	}
	return 0;
}
