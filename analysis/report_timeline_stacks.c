/* The call-stack tracks of the timeline (report_timeline.c): per thread, on a process of
 * their own, the frames of its stacks (jf_stack_track_frames) as nested begin ("B") and
 * end ("E") events, as magic-trace draws them. */
#include <inttypes.h>
#include <stdlib.h>

#include "call_stack_spans.h"
#include "jitflow/json_out.h"
#include "jitflow/report.h"
#include "report_timeline_stacks.h"
#include "report_views.h"

struct stack_writer {
	FILE *out;
	const struct jf_analysis_result *r;
	const struct jf_stack_names *names;
	int32_t tid;
	uint64_t origin;
	int *first;
	size_t events;
};

static void event(struct stack_writer *w, char ph, uint32_t row, uint64_t at)
{
	char name[160];
	uint64_t t = at > w->origin ? at - w->origin : 0;

	if (row == JF_STACK_SPANS_SEVERAL)
		snprintf(name, sizeof(name), "[stacks sharing no frame]");
	else
		jf_views_call_stack_frame(name, sizeof(name), w->r, &w->r->call_stacks.stacks[row],
					  w->names);
	fputs(*w->first ? "\n" : ",\n", w->out);
	*w->first = 0;
	fprintf(w->out, "{\"ph\":\"%c\",\"pid\":3,\"tid\":%d,\"name\":", ph, w->tid);
	jf_json_string(w->out, name);
	fprintf(w->out, ",\"cat\":\"stack\",\"ts\":%" PRIu64 ".%03" PRIu64 "}", t / 1000, t % 1000);
	w->events++;
}

static void begin(void *ctx, uint32_t depth, uint32_t row, uint64_t at)
{
	(void)depth;
	event(ctx, 'B', row, at);
}

static void end(void *ctx, uint32_t depth, uint32_t row, uint64_t start, uint64_t at)
{
	(void)depth, (void)start;
	event(ctx, 'E', row, at);
}

size_t jf_timeline_stack_track(FILE *out, const struct jf_analysis_result *r,
			       const struct jf_stack_names *names, const struct jf_stack_track *tr,
			       uint64_t origin, uint64_t resolution, int *first)
{
	struct stack_writer w = { out, r, names, tr->tid, origin, first, 0 };
	struct jf_stack_frame_ops ops = { begin, end, &w };

	jf_stack_track_frames(r, tr, resolution, &ops);
	return w.events;
}
