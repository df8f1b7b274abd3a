/* The counters' part for what went wrong in the trace (decode errors, lost data,
 * overflows): how many, and where the first JF_PROBLEM_SITES_MAX happened, so that every
 * report can say where, not only how many. */
#include <stdio.h>
#include <string.h>

#include "counters.h"

static void note_site(struct jf_analysis *a, const struct jf_flow *f)
{
	struct jf_problem_site *p;

	if (a->nproblems >= JF_PROBLEM_SITES_MAX)
		return;
	p = &a->problems[a->nproblems++];
	memset(p, 0, sizeof(*p));
	p->kind = f->kind;
	p->source = f->source;
	p->offset = f->offset;
	p->has_ip = !(f->flags & JF_FLOW_IP_SUPPRESSED);
	p->ip = p->has_ip ? f->ip : 0;
	p->has_time = (f->flags & JF_FLOW_HAS_TIME) != 0;
	p->time = p->has_time ? f->time : 0;
	if (f->kind == JF_FLOW_LOST) {
		p->code = (uint16_t)f->u.lost.reason;
		p->bytes = f->u.lost.bytes;
	} else if (f->kind == JF_FLOW_ERROR) {
		p->code = f->u.error.phase;
		snprintf(p->text, sizeof(p->text), "%s", f->u.error.text);
	}
}

void jf_count_problem(struct jf_analysis *a, const struct jf_flow *f)
{
	note_site(a, f);
	switch (f->kind) {
	case JF_FLOW_ERROR:
		a->decode_errors++;
		break;
	case JF_FLOW_LOST:
		a->lost_bytes += f->u.lost.bytes;
		a->lost_events++;
		break;
	default:
		a->overflows++;
		break;
	}
}

const char *jf_problem_kind_name(const struct jf_problem_site *p)
{
	return p->kind == JF_FLOW_LOST ? "lost" : p->kind == JF_FLOW_ERROR ? "error" : "overflow";
}

const char *jf_problem_what(const struct jf_problem_site *p)
{
	if (p->kind == JF_FLOW_LOST)
		return jf_lost_reason_name(p->code);
	if (p->kind == JF_FLOW_ERROR)
		return jf_error_phase_name(p->code);
	return "overflow";
}
