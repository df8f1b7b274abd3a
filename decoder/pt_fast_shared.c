/* Block and payload entries published once and read by every thread (pt_fast_shared.h). */
#include "pt_fast_shared.h"

#include "pt_fast_blocks.h"
#include "pt_fast_payloads.h"
#include "pt_fast_watch.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum slot_state { EMPTY, WRITING, READY };

/* Sizes: the largest per-thread caches (pt_fast_internal.h) hold 32 Ki blocks and 16 Ki
 * paths; these hold more, since no entry is ever evicted, and only the pages of slots
 * used are touched. A key looks at PROBES slots from its hash's. */
enum { BLOCKS_LOG2 = 16, PATHS_LOG2 = 17, PROBES = 4 };

struct table {
	uint32_t *state;  /* enum slot_state, read and written atomically */
	void *entries;
	size_t entry_size;
	unsigned log2;
};

struct jf_fast_shared {
	struct table blocks, paths;
};

/* Zeroed memory of n bytes whose pages are only touched when used: calloc cleared all
 * 17 MB of these tables itself wherever it reused freed heap (14 M instructions on the
 * calling thread, callgrind), and most of them stay unused on a small trace. */
static void *zeroed_pages(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int table_init(struct table *t, size_t entry_size, unsigned log2)
{
	t->entry_size = entry_size;
	t->log2 = log2;
	t->state = zeroed_pages(((size_t)1 << log2) * sizeof(*t->state));
	t->entries = zeroed_pages(((size_t)1 << log2) * entry_size);
	return t->state && t->entries ? 0 : -1;
}

static void table_fini(struct table *t)
{
	if (t->state)
		munmap(t->state, ((size_t)1 << t->log2) * sizeof(*t->state));
	if (t->entries)
		munmap(t->entries, ((size_t)1 << t->log2) * t->entry_size);
}

struct jf_fast_shared *jf_fast_shared_new(void)
{
	struct jf_fast_shared *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (table_init(&s->blocks, sizeof(struct jf_fast_block), BLOCKS_LOG2) < 0 ||
	    table_init(&s->paths, sizeof(struct jf_payload_path), PATHS_LOG2) < 0) {
		jf_fast_shared_free(s);
		return NULL;
	}
	return s;
}

void jf_fast_shared_free(struct jf_fast_shared *s)
{
	if (!s)
		return;
	table_fini(&s->blocks);
	table_fini(&s->paths);
	free(s);
}

void jf_fast_shared_attach(struct jf_fast_shared *s, struct jf_pt_fast_caches *c)
{
	c->blocks->shared = s;
	c->payloads->shared = s;
}

static size_t first_slot(const struct table *t, uint64_t hash)
{
	return (size_t)((hash * 0x9e3779b97f4a7c15ull) >> (64 - t->log2));
}

static size_t probe(const struct table *t, size_t first, unsigned i)
{
	return (first + i) & (((size_t)1 << t->log2) - 1);
}

/* The entry in slot i once a thread has published it, else NULL. */
static const void *ready(const struct table *t, size_t i)
{
	if (__atomic_load_n(&t->state[i], __ATOMIC_ACQUIRE) != READY)
		return NULL;
	return (const char *)t->entries + i * t->entry_size;
}

/* Publish e in the first empty slot from first (none: it is dropped). A slot is claimed
 * before it is written, so that one thread alone writes it. */
static void publish(struct table *t, size_t first, const void *e)
{
	unsigned i;

	for (i = 0; i < PROBES; i++) {
		size_t at = probe(t, first, i);
		uint32_t expected = EMPTY;

		if (__atomic_compare_exchange_n(&t->state[at], &expected, WRITING, 0,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			memcpy((char *)t->entries + at * t->entry_size, e, t->entry_size);
			__atomic_store_n(&t->state[at], READY, __ATOMIC_RELEASE);
			return;
		}
	}
}

static uint64_t block_hash(int isa, uint64_t ip)
{
	return ip ^ ((uint64_t)isa << 60);
}

int jf_fast_shared_block_get(struct jf_fast_shared *s, int isa, uint64_t ip,
			     struct jf_fast_block *b)
{
	size_t first;
	unsigned i;

	if (!s)
		return 0;
	first = first_slot(&s->blocks, block_hash(isa, ip));
	for (i = 0; i < PROBES; i++) {
		const struct jf_fast_block *e = ready(&s->blocks, probe(&s->blocks, first, i));

		/* Slots fill in probe order, so an empty one ends the search; so does one being
		 * written, which may leave the entry further on unseen: a miss, decoded by the
		 * caller, costs time, never a wrong entry. */
		if (!e)
			return 0;
		if (e->start == ip && e->isa == (uint8_t)isa) {
			*b = *e;
			return 1;
		}
	}
	return 0;
}

void jf_fast_shared_block_put(struct jf_fast_shared *s, const struct jf_fast_block *b)
{
	if (s)
		publish(&s->blocks, first_slot(&s->blocks, block_hash(b->isa, b->start)), b);
}

static uint64_t path_hash(int isa, uint64_t ip, uint64_t bits, unsigned nbits)
{
	return ip ^ (bits << 7) ^ ((uint64_t)nbits << 52) ^ ((uint64_t)isa << 60);
}

int jf_fast_shared_path_get(struct jf_fast_shared *s, int isa, uint64_t ip, uint64_t bits,
			    unsigned nbits, struct jf_payload_path *p)
{
	size_t first;
	unsigned i;

	if (!s)
		return 0;
	first = first_slot(&s->paths, path_hash(isa, ip, bits, nbits));
	for (i = 0; i < PROBES; i++) {
		const struct jf_payload_path *e = ready(&s->paths, probe(&s->paths, first, i));

		if (!e)
			return 0;
		if (e->start == ip && e->bits == bits && e->nbits == nbits &&
		    e->isa == (uint8_t)isa) {
			*p = *e;
			return 1;
		}
	}
	return 0;
}

void jf_fast_shared_path_put(struct jf_fast_shared *s, const struct jf_payload_path *p)
{
	if (s)
		publish(&s->paths, first_slot(&s->paths, path_hash(p->isa, p->start, p->bits,
								    p->nbits)),
			p);
}
