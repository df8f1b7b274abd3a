/* HotSpot's compiled methods with their bytecode ranges (seed: Cog's VMProfiler, which
 * tells for each native function in which bytecode range, and in which inlined method,
 * its time goes).
 *
 * The agent's pc maps name, per range of an nmethod's code, the innermost frame's method
 * (a CODE_OBJECT) and bci, counted per nmethod (JF_PC_MAP_PER_REGION): the bytecode rows
 * of one nmethod are keyed by its compile id and the method. Per nmethod this gives its
 * entries and instructions, then per method that ran in it (itself and the ones compiled
 * inline) the instructions and the bytecode ranges; what no frame covers (the stubs and
 * exception handlers after the last pc of the debug info) is the rest. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hotspot_methods.h"
#include "jitflow/emitter.h"
#include "jitflow/json_out.h"
#include "runtime_hotspot_entries.h"

#define RANGES_SHOWN 12

struct by_id {
	uint64_t trace_id;
	size_t index;
};

static int by_trace_id(const void *x, const void *y)
{
	const struct by_id *p = x, *q = y;

	return p->trace_id < q->trace_id ? -1 : p->trace_id > q->trace_id;
}

/* The nmethod of compile id, or NULL; order holds r's traces sorted by trace id. */
static const struct jf_trace_result *trace_of(const struct jf_analysis_result *r,
					      const struct by_id *order, uint64_t compile_id)
{
	struct by_id key = { compile_id, 0 };
	const struct by_id *o = bsearch(&key, order, r->ntraces, sizeof(*order), by_trace_id);

	return o && r->traces[o->index].kind == JF_REGION_FUNCTION ? &r->traces[o->index] : NULL;
}

static int is_nmethod_row(const struct jf_bytecode_result *b)
{
	return (b->region_key & JF_BYTECODE_CODE_OBJECT) && JF_BYTECODE_REGION_OF(b->region_key);
}

int jf_hotspot_methods(const struct jf_analysis_result *r, struct jf_hotspot_method **out,
		       size_t *n)
{
	struct by_id *order;
	size_t i = 0, cap = 0;
	struct jf_hotspot_method *m = NULL;

	*out = NULL;
	*n = 0;
	order = malloc((r->ntraces ? r->ntraces : 1) * sizeof(*order));
	if (!order)
		return -1;
	for (i = 0; i < r->ntraces; i++)
		order[i] = (struct by_id){ r->traces[i].trace_id, i };
	qsort(order, r->ntraces, sizeof(*order), by_trace_id);
	/* Rows are sorted by key: one nmethod's, then within it one method's, follow each
	 * other. */
	for (i = 0; i < r->nbytecodes;) {
		uint64_t key = r->bytecodes[i].region_key;
		const struct jf_trace_result *t;
		struct jf_hotspot_frame *f;
		size_t j;

		if (!is_nmethod_row(&r->bytecodes[i]) ||
		    !(t = trace_of(r, order, JF_BYTECODE_REGION_OF(key)))) {
			i++;
			continue;
		}
		if (!*n || m[*n - 1].trace != t) {
			if (*n == cap) {
				size_t c = cap ? 2 * cap : 64;
				struct jf_hotspot_method *g = realloc(m, c * sizeof(*g));

				if (!g)
					goto fail;
				m = g;
				cap = c;
			}
			memset(&m[*n], 0, sizeof(m[*n]));
			m[(*n)++].trace = t;
		}
		if (m[*n - 1].nframes == JF_HOTSPOT_MAX_FRAMES) {
			m[*n - 1].frames_left_out++;
			for (; i < r->nbytecodes && r->bytecodes[i].region_key == key; i++)
				;
			continue;
		}
		f = &m[*n - 1].frames[m[*n - 1].nframes++];
		f->first = i;
		f->inlined = JF_BYTECODE_CODE_OBJECT_ID(key) != t->code_object;
		f->insns = 0;
		for (j = i; j < r->nbytecodes && r->bytecodes[j].region_key == key; j++)
			f->insns += r->bytecodes[j].insns;
		f->count = j - i;
		m[*n - 1].mapped += f->insns;
		i = j;
	}
	free(order);
	*out = m;
	return 0;
fail:
	free(order);
	free(m);
	*n = 0;
	return -1;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static int by_insns(const void *x, const void *y)
{
	const struct jf_hotspot_method *p = x, *q = y;

	return p->trace->insns > q->trace->insns ? -1 : p->trace->insns < q->trace->insns;
}

void jf_hotspot_methods_text(FILE *out, const struct jf_analysis_result *r, size_t top,
			     const char *(*tier)(const struct jf_trace_result *))
{
	struct jf_hotspot_method *m;
	size_t n, i, k, shown;

	if (jf_hotspot_methods(r, &m, &n) < 0 || !n) {
		free(m);
		return;
	}
	qsort(m, n, sizeof(*m), by_insns);
	shown = n < top ? n : top;
	fprintf(out, "Compiled methods (top %zu of %zu nmethods by instructions): the methods "
		"that ran in each, inlined ones too, and their bytecode ranges\n", shown, n);
	for (i = 0; i < shown; i++) {
		const struct jf_trace_result *t = m[i].trace;

		fprintf(out, "  %s  [%s] entries %" PRIu64 ", instructions %" PRIu64 "\n", t->name,
			tier(t), jf_hotspot_nmethod_entries(r, t), t->insns);
		for (k = 0; k < m[i].nframes; k++) {
			const struct jf_hotspot_frame *f = &m[i].frames[k];
			const struct jf_bytecode_result *b = &r->bytecodes[f->first];
			size_t j;

			fprintf(out, "    %s%s  %s:%u  instructions %" PRIu64 " (%.1f%%)\n",
				b->code_name[0] ? b->code_name : "(unnamed method)",
				f->inlined ? " (inlined)" : "", b->code_file, b->code_line, f->insns,
				pct(f->insns, t->insns));
			for (j = 0; j < f->count && j < RANGES_SHOWN; j++)
				fprintf(out, "      bci %5u->%-5u %12" PRIu64 "\n", b[j].pc_from,
					b[j].pc_to, b[j].insns);
			if (f->count > RANGES_SHOWN)
				fprintf(out, "      ... %zu more ranges\n", f->count - RANGES_SHOWN);
		}
		if (m[i].frames_left_out)
			fprintf(out, "    ... %zu more methods\n", m[i].frames_left_out);
		fprintf(out, "    no method's: %" PRIu64 " instructions (the nmethod's stubs and "
			"exception handlers, code its debug info does not cover)\n",
			t->insns > m[i].mapped ? t->insns - m[i].mapped : 0);
	}
	free(m);
}

void jf_hotspot_methods_json(FILE *out, const struct jf_analysis_result *r,
			     const char *(*tier)(const struct jf_trace_result *))
{
	struct jf_hotspot_method *m;
	size_t n, i, k, j;

	fprintf(out, ",\"compiled_methods\":[");
	if (jf_hotspot_methods(r, &m, &n) < 0)
		n = 0;
	for (i = 0; i < n; i++) {
		const struct jf_trace_result *t = m[i].trace;

		fprintf(out, "%s{\"compile_id\":%" PRIu64 ",\"tier\":", i ? "," : "", t->trace_id);
		jf_json_string(out, tier(t));
		fprintf(out, ",\"nmethod\":");
		jf_json_string(out, t->name);
		fprintf(out, ",\"entries\":%" PRIu64 ",\"instructions\":%" PRIu64
			",\"unmapped_instructions\":%" PRIu64 ",\"frames_left_out\":%zu,\"methods\":[",
			jf_hotspot_nmethod_entries(r, t), t->insns, t->insns > m[i].mapped ? t->insns - m[i].mapped : 0,
			m[i].frames_left_out);
		for (k = 0; k < m[i].nframes; k++) {
			const struct jf_hotspot_frame *f = &m[i].frames[k];
			const struct jf_bytecode_result *b = &r->bytecodes[f->first];

			fprintf(out, "%s{\"method\":", k ? "," : "");
			jf_json_string(out, b->code_name);
			fprintf(out, ",\"file\":");
			jf_json_string(out, b->code_file);
			fprintf(out, ",\"line\":%u,\"inlined\":%s,\"instructions\":%" PRIu64
				",\"ranges\":[", b->code_line, f->inlined ? "true" : "false", f->insns);
			for (j = 0; j < f->count; j++)
				fprintf(out, "%s{\"bci_from\":%u,\"bci_to\":%u,\"instructions\":%" PRIu64
					"}", j ? "," : "", b[j].pc_from, b[j].pc_to, b[j].insns);
			fprintf(out, "]}");
		}
		fprintf(out, "]}");
	}
	fputc(']', out);
	free(m);
}
