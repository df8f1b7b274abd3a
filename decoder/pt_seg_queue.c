#include "pt_seg_queue.h"

#include <stdlib.h>

int jf_seg_queue_init(struct jf_seg_queue *q, const uint8_t *trace, uint64_t size,
		      uint64_t segment_size, size_t max_alive, void *ctx,
		      struct jf_seg *(*new_seg)(void *ctx),
		      void (*recycle)(void *ctx, struct jf_seg *s))
{
	q->head = q->tail = NULL;
	q->alive = 0;
	q->max_alive = max_alive;
	q->cut_at = 0;
	q->size = size;
	q->segment_size = segment_size;
	q->max_size = segment_size;
	q->share_of_rest = 0;
	q->tail_size = segment_size;
	q->tail_share = 0;
	q->all_cut = q->stopping = 0;
	q->new_seg = new_seg;
	q->recycle = recycle;
	q->ctx = ctx;
	q->help = NULL;
	q->help_ctx = NULL;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->changed, NULL);
	q->nthreads = 0;
	q->threads = calloc(max_alive, sizeof(*q->threads));
	q->psbs = jf_pt_psb_finder_new(trace, size);
	return q->psbs && q->threads ? 0 : -1;
}

void jf_seg_queue_fini(struct jf_seg_queue *q)
{
	jf_seg_queue_join(q);
	free(q->threads);
	while (q->head) {
		struct jf_seg *s = q->head;

		q->head = s->next;
		q->recycle(q->ctx, s);
	}
	jf_pt_psb_finder_free(q->psbs);
	pthread_cond_destroy(&q->changed);
	pthread_mutex_destroy(&q->lock);
}

int jf_seg_queue_start_worker(struct jf_seg_queue *q, void *(*fn)(void *), void *arg,
			      struct jf_error *err)
{
	if ((size_t)q->nthreads >= q->max_alive ||
	    pthread_create(&q->threads[q->nthreads], NULL, fn, arg) != 0)
		return jf_fail(err, "cannot start decoding thread %d", q->nthreads + 1);
	q->nthreads++;
	return 0;
}

void jf_seg_queue_join(struct jf_seg_queue *q)
{
	jf_seg_queue_stop(q);
	while (q->nthreads > 0)
		pthread_join(q->threads[--q->nthreads], NULL);
}

void jf_seg_queue_set_guided(struct jf_seg_queue *q, uint64_t max_size, unsigned share_of_rest)
{
	q->max_size = max_size > q->segment_size ? max_size : q->segment_size;
	q->share_of_rest = share_of_rest;
}

void jf_seg_queue_set_tail(struct jf_seg_queue *q, uint64_t tail_size, unsigned threads)
{
	q->tail_size = tail_size && tail_size < q->segment_size ? tail_size : q->segment_size;
	q->tail_share = threads;
}

/* The smallest segment to cut now, out of rest bytes not cut yet (jf_seg_queue_set_tail). */
static uint64_t smallest(const struct jf_seg_queue *q, uint64_t rest)
{
	uint64_t share;

	if (!q->tail_share)
		return q->segment_size;
	share = rest / q->tail_share;
	if (share >= q->segment_size)
		return q->segment_size;
	return share > q->tail_size ? share : q->tail_size;
}

/* The size of the next segment (lock held). */
static uint64_t next_size(const struct jf_seg_queue *q)
{
	uint64_t size, rest, least;

	if (!q->share_of_rest)
		return q->segment_size;
	rest = q->size - q->cut_at;
	least = smallest(q, rest);
	size = rest / q->share_of_rest;
	if (size > q->max_size)
		size = q->max_size;
	if (size < least)
		size = least;
	/* Not a last segment smaller than the smallest: its decoder would start where the
	 * one before is still decoding past its end. */
	return size >= rest || rest - size < least ? rest : size;
}

/* Cut the next segment off the trace (lock held). */
static struct jf_seg *cut(struct jf_seg_queue *q)
{
	struct jf_seg *s = q->new_seg(q->ctx);
	uint64_t size = next_size(q);
	int64_t end = -1;

	if (!s)
		return NULL;
	s->start = q->cut_at;
	s->first = q->head == NULL && q->cut_at == 0;
	s->state = JF_SEG_QUEUED;
	s->next = NULL;
	if (q->cut_at + size < q->size)
		end = jf_pt_psb_at_or_after(q->psbs, q->cut_at + size);
	if (end < 0) {
		s->end = q->size;
		s->last = 1;
		q->all_cut = 1;
	} else {
		s->end = (uint64_t)end;
		s->last = 0;
	}
	q->cut_at = s->end;
	if (q->tail)
		q->tail->next = s;
	else
		q->head = s;
	q->tail = s;
	q->alive++;
	return s;
}

/* The first queued segment, or a new one if there is room (lock held). */
static struct jf_seg *take_job(struct jf_seg_queue *q)
{
	struct jf_seg *s;

	for (s = q->head; s; s = s->next) {
		if (s->state == JF_SEG_QUEUED)
			return s;
	}
	if (q->all_cut || q->alive >= q->max_alive)
		return NULL;
	return cut(q);
}

void jf_seg_queue_set_helper(struct jf_seg_queue *q, void (*help)(void *help_ctx, struct jf_seg *s),
			     void *help_ctx)
{
	q->help = help;
	q->help_ctx = help_ctx;
}

/* The calling thread decodes a segment no worker has taken, if there is one (lock held,
 * released meanwhile): 1 if it did. */
static int help_once(struct jf_seg_queue *q)
{
	struct jf_seg *s;

	if (!q->help || jf_seg_queue_stopping(q) || !(s = take_job(q)))
		return 0;
	s->state = JF_SEG_RUNNING;
	pthread_mutex_unlock(&q->lock);
	q->help(q->help_ctx, s);
	pthread_mutex_lock(&q->lock);
	return 1;
}

int jf_seg_queue_stopping(struct jf_seg_queue *q)
{
	return __atomic_load_n(&q->stopping, __ATOMIC_RELAXED);
}

struct jf_seg *jf_seg_queue_next_job(struct jf_seg_queue *q)
{
	struct jf_seg *s = NULL;

	pthread_mutex_lock(&q->lock);
	while (!jf_seg_queue_stopping(q) && !(s = take_job(q)))
		pthread_cond_wait(&q->changed, &q->lock);
	if (jf_seg_queue_stopping(q))
		s = NULL;
	else
		s->state = JF_SEG_RUNNING;
	pthread_mutex_unlock(&q->lock);
	return s;
}

void jf_seg_queue_job_done(struct jf_seg_queue *q, struct jf_seg *s, uint64_t *counter)
{
	pthread_mutex_lock(&q->lock);
	s->state = JF_SEG_DONE;
	(*counter)++;
	pthread_cond_broadcast(&q->changed);
	pthread_mutex_unlock(&q->lock);
}

void jf_seg_queue_stop(struct jf_seg_queue *q)
{
	pthread_mutex_lock(&q->lock);
	__atomic_store_n(&q->stopping, 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&q->changed);
	pthread_mutex_unlock(&q->lock);
}

struct jf_seg *jf_seg_queue_first(struct jf_seg_queue *q)
{
	struct jf_seg *s;

	pthread_mutex_lock(&q->lock);
	while (!q->head)
		if (!help_once(q))
			pthread_cond_wait(&q->changed, &q->lock);
	s = q->head;
	pthread_mutex_unlock(&q->lock);
	return s;
}

struct jf_seg *jf_seg_queue_wait_next(struct jf_seg_queue *q, struct jf_seg *s)
{
	struct jf_seg *next;

	pthread_mutex_lock(&q->lock);
	while (!s->next && !s->last)
		if (!help_once(q))
			pthread_cond_wait(&q->changed, &q->lock);
	next = s->next;
	pthread_mutex_unlock(&q->lock);
	return next;
}

void jf_seg_queue_wait_done(struct jf_seg_queue *q, struct jf_seg *s)
{
	pthread_mutex_lock(&q->lock);
	while (s->state != JF_SEG_DONE)
		if (!help_once(q))
			pthread_cond_wait(&q->changed, &q->lock);
	pthread_mutex_unlock(&q->lock);
}

void jf_seg_queue_drop_first(struct jf_seg_queue *q)
{
	struct jf_seg *s;

	pthread_mutex_lock(&q->lock);
	s = q->head;
	q->head = s->next;
	if (!q->head)
		q->tail = NULL;
	q->alive--;
	q->recycle(q->ctx, s);
	pthread_cond_broadcast(&q->changed);
	pthread_mutex_unlock(&q->lock);
}
