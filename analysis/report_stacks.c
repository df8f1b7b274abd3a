/* Call stacks of a result (jitflow/call_stacks.h) as text, folded stacks, a flame graph
 * and JSON. Frames
 * are named here, after the trace is read: jitted ones by the result's regions, native
 * ones through the caller's names (ELF symbols). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/json_out.h"
#include "jitflow/report.h"
#include "report_views.h"

enum { NAME_MAX_LEN = 160 };

/* A guest function's frame: the code object's name and where it starts, from a bytecode
 * range of the result counted in it (every code object a frame names has one). */
static void guest_name(char *buf, size_t size, const struct jf_analysis_result *r, uint64_t id)
{
	char text[NAME_MAX_LEN];
	size_t i;

	for (i = 0; i < r->nbytecodes; i++) {
		const struct jf_bytecode_result *b = &r->bytecodes[i];

		if (!(b->region_key & JF_BYTECODE_CODE_OBJECT) ||
		    JF_BYTECODE_CODE_OBJECT_ID(b->region_key) != id || !b->code_name[0])
			continue;
		if (b->code_file[0])
			snprintf(text, sizeof(text), "%.60s (%.80s:%u)", b->code_name, b->code_file,
				 b->code_line);
		else
			snprintf(text, sizeof(text), "%s", b->code_name);
		jf_views_frame_text(buf, size, text);
		return;
	}
	snprintf(buf, size, "[code object %" PRIu64 "]", id);
}

void jf_views_call_stack_frame(char *buf, size_t size, const struct jf_analysis_result *r,
			       const struct jf_call_stack *s, const struct jf_stack_names *names)
{
	const char *name = NULL;

	switch (s->kind) {
	case JF_FRAME_UNKNOWN:
		snprintf(buf, size, "[unknown]");
		return;
	case JF_FRAME_SIGNAL:
		snprintf(buf, size, "[signal]");
		return;
	case JF_FRAME_GUEST:
		guest_name(buf, size, r, s->addr);
		return;
	default:
		break;
	}
	if (s->region >= 0 && (size_t)s->region < r->nregions)
		name = r->regions[s->region].name;
	else if (s->kind == JF_FRAME_CODE && names && names->native_name)
		name = names->native_name(names->ctx, s->addr);
	if (name && *name)
		jf_views_frame_text(buf, size, name);
	else if (s->kind == JF_FRAME_REGION)
		snprintf(buf, size, "[region %d]", s->region);
	else
		snprintf(buf, size, "0x%" PRIx64, s->addr);
}

const char *jf_views_call_stack_colour(const struct jf_call_stack *f)
{
	switch (f->kind) {
	case JF_FRAME_GUEST: return "#fdd0a2";
	case JF_FRAME_REGION: return "#fd8d3c";
	case JF_FRAME_CODE: return f->region >= 0 ? "#fd8d3c" : "#a1d99b";
	default: return "#bdbdbd";
	}
}

uint32_t jf_views_call_stack_rows(const struct jf_call_stacks_result *cs, uint32_t row,
				  uint32_t rows[JF_CALL_STACKS_DEPTH_MAX + 2])
{
	uint32_t n = cs->stacks[row].depth, i = n;

	if (n > JF_CALL_STACKS_DEPTH_MAX + 2)
		return 0;
	while (i && row != JF_NO_STACK) {
		rows[--i] = row;
		row = cs->stacks[row].parent;
	}
	return n;
}

/* The stack's frames joined by ';' after its thread, into buf (cut at size). */
static void stack_text(char *buf, size_t size, const struct jf_analysis_result *r, uint32_t row,
		       const struct jf_stack_names *names)
{
	uint32_t rows[JF_CALL_STACKS_DEPTH_MAX + 2], n, i;
	char name[NAME_MAX_LEN];
	size_t len;

	jf_views_thread_label(buf, size, r->call_stacks.stacks[row].tid);
	n = jf_views_call_stack_rows(&r->call_stacks, row, rows);
	for (i = 0; i < n; i++) {
		jf_views_call_stack_frame(name, sizeof(name), r, &r->call_stacks.stacks[rows[i]], names);
		len = strlen(buf);
		if (len + 1 >= size)
			break;
		snprintf(buf + len, size - len, ";%s", name);
	}
}

static const struct jf_call_stacks_result *sorted_by_insns_src;

static int by_insns(const void *x, const void *y)
{
	const struct jf_call_stack *p = &sorted_by_insns_src->stacks[*(const uint32_t *)x];
	const struct jf_call_stack *q = &sorted_by_insns_src->stacks[*(const uint32_t *)y];

	if (p->insns != q->insns)
		return p->insns > q->insns ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

/* Rows by instructions, most first (NULL when out of memory). */
static uint32_t *hottest(const struct jf_call_stacks_result *cs)
{
	uint32_t *v = malloc((cs->nstacks ? cs->nstacks : 1) * sizeof(*v));
	size_t i;

	if (!v)
		return NULL;
	for (i = 0; i < cs->nstacks; i++)
		v[i] = (uint32_t)i;
	sorted_by_insns_src = cs;
	qsort(v, cs->nstacks, sizeof(*v), by_insns);
	return v;
}

void jf_report_call_stacks(FILE *out, const struct jf_analysis_result *r,
			   const struct jf_report_meta *m, const struct jf_stack_names *names)
{
	const struct jf_call_stacks_result *cs = &r->call_stacks;
	size_t top = m && m->top ? m->top : 10, i;
	uint32_t *v = hottest(cs);
	static char text[JF_CALL_STACKS_DEPTH_MAX * 24];

	fprintf(out, "Call stacks of %s: %zu distinct, %" PRIu64 " instructions (time: %s)\n",
		m && m->source ? m->source : "the trace", cs->nstacks, cs->insns,
		jf_report_time_unit(r));
	fprintf(out, "  calls %" PRIu64 ", returns %" PRIu64 ", signals %" PRIu64 "\n", cs->calls,
		cs->returns, cs->signals);
	fprintf(out, "  not followed: %" PRIu64 " returns past frames (longjmp, exceptions), %"
		PRIu64 " returns matching no frame, %" PRIu64 " restarts after lost track, %"
		PRIu64 " calls deeper than %d; %" PRIu64 " returns above where a stack began\n",
		cs->unwound, cs->unmatched, cs->restarts, cs->truncated_calls,
		JF_CALL_STACKS_DEPTH_MAX, cs->above_start);
	for (i = 0; i < cs->nnotes; i++) {
		const struct jf_call_stacks_note *n = &cs->notes[i];

		fprintf(out, "    %s: thread %d at 0x%" PRIx64 ", trace offset %" PRIu64, 
			jf_call_stacks_note_name((enum jf_call_stacks_note_kind)n->kind), n->tid,
			n->ip, n->offset);
		if (n->has_time)
			fprintf(out, ", time %" PRIu64, n->time);
		fprintf(out, ", %u frames\n", n->frames);
	}
	if (!v)
		return;
	fprintf(out, "\n%14s %7s %14s %10s  stack (bottom first)\n", "insns", "share", "time",
		"entries");
	for (i = 0; i < cs->nstacks && i < top; i++) {
		const struct jf_call_stack *s = &cs->stacks[v[i]];

		if (!s->insns)
			break;
		stack_text(text, sizeof(text), r, v[i], names);
		fprintf(out, "%14" PRIu64 " %6.2f%% %14" PRIu64 " %10" PRIu64 "  %s\n", s->insns,
			cs->insns ? 100.0 * (double)s->insns / (double)cs->insns : 0.0, s->time,
			s->entries, text);
	}
	free(v);
}

int jf_report_call_stacks_folded(FILE *out, const struct jf_analysis_result *r,
				 const struct jf_stack_names *names)
{
	static char text[JF_CALL_STACKS_DEPTH_MAX * 24];
	size_t i;

	for (i = 0; i < r->call_stacks.nstacks; i++) {
		if (!r->call_stacks.stacks[i].insns)
			continue;
		stack_text(text, sizeof(text), r, (uint32_t)i, names);
		fprintf(out, "%s %" PRIu64 "\n", text, r->call_stacks.stacks[i].insns);
	}
	return 0;
}

/* The stacks that ran instructions as flame rows, in frame order (by their folded text, so
 * that stacks sharing bottom frames lie together). */
struct stack_row {
	char *text;        /* "thread;bottom;...;top" */
	uint32_t row;      /* the stack's row in r->call_stacks */
};

struct stack_rows {
	const struct jf_analysis_result *r;
	struct stack_row *v;
	size_t n;
};

static int by_text(const void *x, const void *y)
{
	return strcmp(((const struct stack_row *)x)->text, ((const struct stack_row *)y)->text);
}

static void stack_row_frame(void *ctx, size_t i, int d, char *buf, size_t size)
{
	const struct stack_rows *sr = ctx;
	const char *p = sr->v[i].text, *end;
	size_t len;

	for (; d > 0 && p; d--)
		if ((p = strchr(p, ';')))
			p++;
	if (!p) {
		buf[0] = 0;
		return;
	}
	end = strchr(p, ';');
	len = end ? (size_t)(end - p) : strlen(p);
	if (len >= size)
		len = size - 1;
	memcpy(buf, p, len);
	buf[len] = 0;
}

static uint64_t stack_row_count(void *ctx, size_t i)
{
	const struct stack_rows *sr = ctx;

	return sr->r->call_stacks.stacks[sr->v[i].row].insns;
}

/* Frames coloured by what runs there: native code, jitted regions, guest functions. */
static const char *stack_row_colour(void *ctx, size_t i, int d)
{
	const struct stack_rows *sr = ctx;
	uint32_t rows[JF_CALL_STACKS_DEPTH_MAX + 2];
	uint32_t n = jf_views_call_stack_rows(&sr->r->call_stacks, sr->v[i].row, rows);
	const struct jf_call_stack *f;

	if (d == 0 || (uint32_t)d > n)
		return "#d9d9d9";
	f = &sr->r->call_stacks.stacks[rows[d - 1]];
	return jf_views_call_stack_colour(f);
}

int jf_views_call_stacks_svg(FILE *out, const struct jf_analysis_result *r,
			     const struct jf_report_meta *m, const struct jf_stack_names *names,
			     int width)
{
	const struct jf_call_stacks_result *cs = &r->call_stacks;
	struct stack_rows sr = { r, NULL, 0 };
	struct jf_flame_rows rows;
	static char text[JF_CALL_STACKS_DEPTH_MAX * 24];
	char subtitle[256];
	uint32_t depth = 0;
	size_t i;
	int rc = -1;

	if (!(sr.v = malloc((cs->nstacks ? cs->nstacks : 1) * sizeof(*sr.v))))
		return -1;
	for (i = 0; i < cs->nstacks; i++) {
		if (!cs->stacks[i].insns)
			continue;
		stack_text(text, sizeof(text), r, (uint32_t)i, names);
		if (!(sr.v[sr.n].text = strdup(text)))
			goto out;
		sr.v[sr.n++].row = (uint32_t)i;
		if (cs->stacks[i].depth > depth)
			depth = cs->stacks[i].depth;
	}
	qsort(sr.v, sr.n, sizeof(*sr.v), by_text);
	rows.n = sr.n;
	rows.depth = (int)depth + 1;   /* the thread, then the frames */
	rows.ctx = &sr;
	rows.frame = stack_row_frame;
	rows.count = stack_row_count;
	rows.colour = stack_row_colour;
	snprintf(subtitle, sizeof(subtitle), "%.120s: %" PRIu64 " instructions, %zu distinct "
		 "stacks, %" PRIu64 " calls; widths are the instructions run with a frame on the "
		 "stack", m && m->source ? m->source : "the trace", cs->insns, cs->nstacks,
		 cs->calls);
	jf_views_flame_rows_svg(out, &rows, width, "Flame graph of call stacks: thread, then "
				"frames bottom first (native, jitted region, guest function)",
				subtitle);
	rc = 0;
out:
	for (i = 0; i < sr.n; i++)
		free(sr.v[i].text);
	free(sr.v);
	return rc;
}

int jf_report_call_stacks_svg(FILE *out, const struct jf_analysis_result *r,
			      const struct jf_report_meta *m, const struct jf_stack_names *names,
			      int width)
{
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	return jf_views_call_stacks_svg(out, r, m, names, width);
}

int jf_report_call_stacks_json(FILE *out, const struct jf_analysis_result *r,
			       const struct jf_report_meta *m, const struct jf_stack_names *names)
{
	const struct jf_call_stacks_result *cs = &r->call_stacks;
	uint32_t rows[JF_CALL_STACKS_DEPTH_MAX + 2], n, j;
	char name[NAME_MAX_LEN];
	size_t i;

	fprintf(out, "{\"source\":");
	jf_json_string(out, m && m->source ? m->source : "");
	fprintf(out, ",\"time_unit\":");
	jf_json_string(out, jf_report_time_unit(r));
	fprintf(out, ",\"insns\":%" PRIu64 ",\"calls\":%" PRIu64 ",\"returns\":%" PRIu64
		",\"signals\":%" PRIu64 ",\"unwound\":%" PRIu64 ",\"unmatched\":%" PRIu64
		",\"restarts\":%" PRIu64 ",\"truncated_calls\":%" PRIu64 ",\"above_start\":%" PRIu64
		",\"notes\":[", cs->insns, cs->calls, cs->returns, cs->signals, cs->unwound,
		cs->unmatched, cs->restarts, cs->truncated_calls, cs->above_start);
	for (i = 0; i < cs->nnotes; i++) {
		const struct jf_call_stacks_note *no = &cs->notes[i];

		fprintf(out, "%s{\"kind\":", i ? "," : "");
		jf_json_string(out, jf_call_stacks_note_name((enum jf_call_stacks_note_kind)no->kind));
		fprintf(out, ",\"tid\":%d,\"ip\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"frames\":%u",
			no->tid, no->ip, no->offset, no->frames);
		if (no->has_time)
			fprintf(out, ",\"time\":%" PRIu64, no->time);
		fputc('}', out);
	}
	fprintf(out, "],\"stacks\":[");
	for (i = 0; i < cs->nstacks; i++) {
		const struct jf_call_stack *s = &cs->stacks[i];

		fprintf(out, "%s\n{\"tid\":%d,\"insns\":%" PRIu64 ",\"time\":%" PRIu64
			",\"entries\":%" PRIu64 ",\"frames\":[", i ? "," : "", s->tid, s->insns,
			s->time, s->entries);
		n = jf_views_call_stack_rows(cs, (uint32_t)i, rows);
		for (j = 0; j < n; j++) {
			const struct jf_call_stack *f = &cs->stacks[rows[j]];

			jf_views_call_stack_frame(name, sizeof(name), r, f, names);
			fprintf(out, "%s{\"name\":", j ? "," : "");
			jf_json_string(out, name);
			fprintf(out, ",\"kind\":\"%s\"", f->kind == JF_FRAME_UNKNOWN ? "unknown" :
				f->kind == JF_FRAME_SIGNAL ? "signal" :
				f->kind == JF_FRAME_GUEST ? "guest" :
				f->kind == JF_FRAME_REGION || f->region >= 0 ? "jitted" : "native");
			if (f->kind == JF_FRAME_CODE)
				fprintf(out, ",\"addr\":%" PRIu64, f->addr);
			else if (f->kind == JF_FRAME_GUEST)
				fprintf(out, ",\"code_object\":%" PRIu64, f->addr);
			fputc('}', out);
		}
		fprintf(out, "]}");
	}
	fprintf(out, "]}\n");
	return 0;
}
