/* Per-thread record buffers. A record is appended to the calling thread's own buffer, so
 * emitting takes no lock shared between threads; the file receives whole buffers, each
 * under em->file_lock. Records of different threads therefore reach the file out of
 * sequence order (readers order them by seq: docs/zone-format.md, "Ordering").
 *
 * A thread finds its buffer through a small thread-local cache keyed by the emitter's id.
 * Buffers are flushed when full, by jf_emitter_flush / jf_emitter_close, when their thread
 * exits (a pthread key destructor) and at process exit (atexit). */
#include <stdlib.h>

#include "emitter_internal.h"

/* This thread's buffers, most recently used first. A thread that uses more emitters than
 * slots forgets the oldest; its buffer stays on that emitter's list (found again by tid,
 * flushed at flush/close/exit). */
__thread struct jf_emit_tls_slot jf_emit_tls_slots[JF_EMIT_TLS_SLOTS];
__thread unsigned jf_emit_tls_used;

/* Emitters still open, flushed by the atexit handler and searched by the thread-exit
 * destructor (an emitter closed meanwhile has freed its buffers). */
static pthread_mutex_t open_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct jf_emitter *open_list;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;

JF_EMIT_CODE
static void release(struct jf_emit_tbuf *tb)
{
	atomic_store_explicit(&tb->busy, 0, memory_order_release);
}

JF_EMIT_CODE
void jf_emit_tbuf_write(struct jf_emitter *em, struct jf_emit_tbuf *tb)
{
	if (!tb->fill)
		return;
	if (!tb->file_locked)
		pthread_mutex_lock(&em->file_lock);
	if (!atomic_load_explicit(&em->failed, memory_order_relaxed))
		jf_emit_write_all(em, tb->data, tb->fill);
	tb->fill = 0;
	if (!tb->file_locked)
		pthread_mutex_unlock(&em->file_lock);
}

/* The buffer filled in the middle of a call: from here to jf_emit_end the thread keeps
 * the file, so the call's records (a CODE_LOAD and its REGION_LOAD) stay together. */
JF_EMIT_CODE
void jf_emit_put_slow(struct jf_emitter *em, struct jf_emit_tbuf *tb, const void *data,
		      size_t size)
{
	const uint8_t *p = data;

	while (size) {
		size_t room = sizeof(tb->data) - tb->fill, n = size < room ? size : room;

		memcpy(tb->data + tb->fill, p, n);
		tb->fill += n;
		p += n;
		size -= n;
		if (tb->fill == sizeof(tb->data)) {
			if (!tb->file_locked) {
				pthread_mutex_lock(&em->file_lock);
				tb->file_locked = 1;
			}
			jf_emit_tbuf_write(em, tb);
		}
	}
}

JF_EMIT_CODE
void jf_emit_end_locked(struct jf_emitter *em, struct jf_emit_tbuf *tb)
{
	jf_emit_tbuf_write(em, tb);
	tb->file_locked = 0;
	pthread_mutex_unlock(&em->file_lock);
}

/* Write out and free one buffer, taken off its emitter's list (tbufs_lock held). */
JF_EMIT_CODE
static void retire_locked(struct jf_emitter *em, struct jf_emit_tbuf *tb)
{
	struct jf_emit_tbuf **p;

	for (p = &em->tbufs; *p; p = &(*p)->next) {
		if (*p == tb) {
			*p = tb->next;
			break;
		}
	}
	jf_emit_acquire(tb);
	jf_emit_tbuf_write(em, tb);
	free(tb);
}

/* A thread ends: its buffers go to the files of the emitters still open. */
JF_EMIT_CODE
static void thread_exit(void *unused)
{
	unsigned i;

	(void)unused;
	pthread_mutex_lock(&open_list_lock);
	for (i = 0; i < jf_emit_tls_used; i++) {
		struct jf_emitter *em;

		for (em = open_list; em; em = em->next_open) {
			if (em->id != jf_emit_tls_slots[i].em_id)
				continue;
			pthread_mutex_lock(&em->tbufs_lock);
			retire_locked(em, jf_emit_tls_slots[i].tb);
			pthread_mutex_unlock(&em->tbufs_lock);
			break;
		}
	}
	jf_emit_tls_used = 0;
	pthread_mutex_unlock(&open_list_lock);
}

JF_EMIT_CODE
static void flush_all_at_exit(void)
{
	struct jf_emitter *em;

	pthread_mutex_lock(&open_list_lock);
	for (em = open_list; em; em = em->next_open)
		jf_emit_flush_all(em);
	pthread_mutex_unlock(&open_list_lock);
}

JF_EMIT_CODE
static void init_once(void)
{
	pthread_key_create(&exit_key, thread_exit);
	atexit(flush_all_at_exit);
}

JF_EMIT_CODE
void jf_emit_register_open(struct jf_emitter *em)
{
	pthread_once(&once, init_once);
	pthread_mutex_lock(&open_list_lock);
	em->next_open = open_list;
	open_list = em;
	pthread_mutex_unlock(&open_list_lock);
}

JF_EMIT_CODE
void jf_emit_unregister_open(struct jf_emitter *em)
{
	struct jf_emitter **p;

	pthread_mutex_lock(&open_list_lock);
	for (p = &open_list; *p; p = &(*p)->next_open) {
		if (*p == em) {
			*p = em->next_open;
			break;
		}
	}
	pthread_mutex_unlock(&open_list_lock);
}

/* First record of this thread for em (or its slot was forgotten): find or make its
 * buffer, and remember it in front. */
JF_EMIT_CODE
static struct jf_emit_tbuf *lookup_slow(struct jf_emitter *em)
{
	struct jf_emit_tls_slot slot = { em->id, NULL };
	uint32_t tid = jf_emit_tid();
	unsigned i;

	for (i = 1; i < jf_emit_tls_used; i++) {
		if (jf_emit_tls_slots[i].em_id == em->id) {
			slot = jf_emit_tls_slots[i];
			memmove(&jf_emit_tls_slots[1], &jf_emit_tls_slots[0], i * sizeof(slot));
			jf_emit_tls_slots[0] = slot;
			return slot.tb;
		}
	}
	pthread_mutex_lock(&em->tbufs_lock);
	for (slot.tb = em->tbufs; slot.tb && slot.tb->tid != tid; slot.tb = slot.tb->next)
		;
	if (!slot.tb) {
		slot.tb = calloc(1, sizeof(*slot.tb));
		if (slot.tb) {
			slot.tb->tid = tid;
			slot.tb->next = em->tbufs;
			em->tbufs = slot.tb;
		}
	}
	pthread_mutex_unlock(&em->tbufs_lock);
	if (!slot.tb) {
		jf_emit_fail(em, "out of memory for a thread's record buffer");
		return NULL;
	}
	pthread_once(&once, init_once);
	pthread_setspecific(exit_key, jf_emit_tls_slots); /* any non-NULL value: run thread_exit */
	if (jf_emit_tls_used < JF_EMIT_TLS_SLOTS)
		jf_emit_tls_used++;
	memmove(&jf_emit_tls_slots[1], &jf_emit_tls_slots[0], (jf_emit_tls_used - 1) * sizeof(slot));
	jf_emit_tls_slots[0] = slot;
	return slot.tb;
}

JF_EMIT_CODE
struct jf_emit_tbuf *jf_emit_begin_slow(struct jf_emitter *em)
{
	struct jf_emit_tbuf *tb = lookup_slow(em);

	if (tb)
		jf_emit_acquire(tb);
	return tb;
}

JF_EMIT_CODE
int jf_emit_flush_all(struct jf_emitter *em)
{
	struct jf_emit_tbuf *tb;

	pthread_mutex_lock(&em->tbufs_lock);
	for (tb = em->tbufs; tb; tb = tb->next) {
		jf_emit_acquire(tb);
		jf_emit_tbuf_write(em, tb);
		release(tb);
	}
	pthread_mutex_unlock(&em->tbufs_lock);
	return atomic_load(&em->failed) ? -1 : 0;
}

JF_EMIT_CODE
void jf_emit_tbufs_free(struct jf_emitter *em)
{
	pthread_mutex_lock(&em->tbufs_lock);
	while (em->tbufs)
		retire_locked(em, em->tbufs);
	pthread_mutex_unlock(&em->tbufs_lock);
}
