/* A counting hand-over made ahead on a worker (pt_parallel_ahead.h). */
#include "pt_parallel_ahead.h"

#include <string.h>

#include "jitflow/pt.h"
#include "decoder_internal.h"

static int same_policy(const struct jf_pt_fast_policy *a, const struct jf_pt_fast_policy *b)
{
	return a->resumed == b->resumed && a->backoff == b->backoff &&
	       a->committed == b->committed;
}

/* The same stretch, from the same PSB, in the same state: return stacks of the same depth
 * (the hand-over's checks compare a decoder's stack with the top of these). */
static int same_counted(const struct jf_fast_counted *a, const struct jf_fast_counted *b)
{
	return a->from == b->from && a->state.depth == b->state.depth &&
	       jf_fast_same_counted(a, b);
}

static int keep_inputs(struct jf_pt_ahead *a, const struct jf_pt_fast_stop *stop,
		       const struct jf_pt_fast_policy *policy)
{
	size_t i;

	a->policy = *policy;
	a->timed = stop->timed;
	a->ncounted = stop->ncounted;
	for (i = 0; i < stop->ncounted; i++)
		a->counted[i] = stop->counted[i];
	/* The last stretch's records matter only to a hand-over checked over counted
	 * stretches (pt_fast_count_handover.c, checked_from). */
	for (i = 0; stop->ncounted && i < stop->nlast; i++) {
		if (jf_flow_buffer_push(&a->last_records, &stop->last_records[i]) < 0)
			return -1;
	}
	return 0;
}

int jf_pt_ahead_make(struct jf_pt_ahead *a, const struct jf_pt_config *cfg,
		     struct jf_codemap *map, const struct jf_pt_fast_caches *caches,
		     const struct jf_pt_fast_stop *stop, const struct jf_pt_fast_policy *policy)
{
	struct jf_error err = { "" };
	struct jf_decoder *dec = NULL;
	struct jf_flow f;
	int rc;

	jf_pt_ahead_clear(a);
	if (stop->ncounted > 2 || keep_inputs(a, stop, policy) < 0)
		return -1;
	rc = jf_pt_fast_count_from_stop(cfg, map, caches, stop, policy, &dec, &err);
	if (rc <= 0)
		return 0;
	/* As the calling thread reads it (pt_parallel_count.c, next_from_local). */
	for (;;) {
		if (jf_pt_fast_counter_resuming(dec, &a->psb, &a->after)) {
			a->resumes = 1;
			break;
		}
		rc = jf_decoder_next_uncounted(dec, &f, &err);
		if (rc == 0 || rc < 0)
			break;
		if (jf_flow_buffer_push(&a->records, &f) < 0) {
			jf_decoder_free(dec);
			return -1;
		}
	}
	if (rc >= 0 && !(rc == 0 && jf_pt_fast_counter_gave_up(dec))) {
		a->stats = *jf_decoder_stats(dec);
		a->made = 1;
	}
	jf_decoder_free(dec);
	return a->made;
}

int jf_pt_ahead_fits(const struct jf_pt_ahead *a, const struct jf_pt_fast_stop *stop,
		     const struct jf_pt_fast_policy *policy)
{
	size_t i, pos = 0;

	if (!a->made || !same_policy(&a->policy, policy) || a->timed != stop->timed ||
	    a->ncounted != stop->ncounted)
		return 0;
	if (!stop->ncounted)
		return 1; /* a hand-over from the stop itself: its last records are not read */
	if (a->last_records.count != stop->nlast)
		return 0;
	for (i = 0; i < stop->ncounted; i++) {
		if (!same_counted(&a->counted[i], &stop->counted[i]))
			return 0;
	}
	for (i = 0; i < stop->nlast; i++) {
		struct jf_flow f;

		pos = jf_flow_buffer_get(&a->last_records, pos, &f);
		if (!jf_flow_same(&f, &stop->last_records[i]))
			return 0;
	}
	return 1;
}

void jf_pt_ahead_clear(struct jf_pt_ahead *a)
{
	struct jf_flow_buffer records = a->records, last = a->last_records;

	memset(a, 0, sizeof(*a));
	a->records = records;
	a->last_records = last;
	jf_flow_buffer_clear(&a->records);
	jf_flow_buffer_clear(&a->last_records);
}

void jf_pt_ahead_fini(struct jf_pt_ahead *a)
{
	jf_flow_buffer_fini(&a->records);
	jf_flow_buffer_fini(&a->last_records);
	memset(a, 0, sizeof(*a));
}
