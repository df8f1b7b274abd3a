/* Folded stacks (`thread;class;region;bytecode-range count`, one line per stack), the input
 * of flamegraph.pl, inferno and speedscope. Counts are instructions; they sum to the
 * result's instruction count, since every block's instructions go to exactly one stack. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/report.h"
#include "report_views.h"
#include "runtime.h"

/* A frame's text: ';' separates frames and the count follows the last space of a line, so
 * ';' and line breaks in names become ',' and ' '. */
void jf_views_frame_text(char *buf, size_t size, const char *name)
{
	size_t i;

	snprintf(buf, size, "%s", name);
	for (i = 0; buf[i]; i++) {
		if (buf[i] == ';')
			buf[i] = ',';
		else if ((unsigned char)buf[i] < 0x20)
			buf[i] = ' ';
	}
}

void jf_views_thread_label(char *buf, size_t size, int32_t tid)
{
	if (tid < 0)
		snprintf(buf, size, "trace source %d", -1 - tid);
	else
		snprintf(buf, size, "thread %d", tid);
}

void jf_views_stack_frames(const struct jf_runtime_desc *rt, const struct jf_stack_result *s,
			   char frames[JF_VIEWS_DEPTH][128])
{
	char name[128];

	jf_views_thread_label(frames[0], 128, s->tid);
	snprintf(frames[1], 128, "%s", jf_runtime_class(rt, s->cls));
	jf_views_frame_text(name, sizeof(name), s->region[0] ? s->region : "(no image names it)");
	snprintf(frames[2], 128, "%s", name);
	if (s->has_range)
		snprintf(frames[3], 128, "pc %u->%u", s->pc_from, s->pc_to);
	else
		frames[3][0] = 0;
}

static int by_frames(const void *x, const void *y)
{
	const struct jf_stack_result *p = *(const struct jf_stack_result *const *)x;
	const struct jf_stack_result *q = *(const struct jf_stack_result *const *)y;
	int c;

	if (p->tid != q->tid)
		return p->tid < q->tid ? -1 : 1;
	if (p->cls != q->cls)
		return p->cls < q->cls ? -1 : 1;
	c = strcmp(p->region, q->region);
	if (c)
		return c;
	if (p->has_range != q->has_range)
		return p->has_range < q->has_range ? -1 : 1;
	if (p->pc_from != q->pc_from)
		return p->pc_from < q->pc_from ? -1 : 1;
	return p->pc_to < q->pc_to ? -1 : p->pc_to > q->pc_to;
}

const struct jf_stack_result **jf_views_sorted_stacks(const struct jf_analysis_result *r)
{
	const struct jf_stack_result **v = malloc((r->nstacks ? r->nstacks : 1) * sizeof(*v));
	size_t i;

	if (!v)
		return NULL;
	for (i = 0; i < r->nstacks; i++)
		v[i] = &r->stacks[i];
	qsort(v, r->nstacks, sizeof(*v), by_frames);
	return v;
}

int jf_report_folded(FILE *out, const struct jf_analysis_result *r)
{
	const struct jf_stack_result **v = jf_views_sorted_stacks(r);
	char frames[JF_VIEWS_DEPTH][128];
	size_t i;

	if (!v)
		return -1;
	for (i = 0; i < r->nstacks; i++) {
		if (!v[i]->insns)
			continue;
		jf_views_stack_frames(jf_runtime_of(r), v[i], frames);
		fprintf(out, "%s;%s;%s%s%s %" PRIu64 "\n", frames[0], frames[1], frames[2],
			frames[3][0] ? ";" : "", frames[3], v[i]->insns);
	}
	free(v);
	return 0;
}
