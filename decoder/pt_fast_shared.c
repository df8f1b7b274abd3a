/* Block and payload entries published once and read by every thread (pt_fast_shared.h). */
#include "pt_fast_shared.h"

#include "pt_fast_blocks.h"
#include "pt_fast_payloads.h"
#include "pt_fast_watch.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* A slot holds 0 (empty), CLAIMED (its entry being written by the thread that claimed it)
 * or 1 + the index of its entry, read and written atomically. */
enum { CLAIMED = UINT32_MAX };

/* Sizes: the largest per-thread caches (pt_fast_internal.h) hold 32 Ki blocks and 16 Ki
 * paths; these hold more, since no entry is ever evicted. A key looks at PROBES slots from
 * its hash's. */
enum { BLOCKS_LOG2 = 16, PATHS_LOG2 = 17, PROBES = 4, CACHE_LINE = 64 };

/* Slots index entries kept in the order published, so that the pages touched are those of
 * the slots and of the entries in use: entries placed at their hash's slot spread over all
 * of a table's pages (13.6 MB of paths), a new page faulted in for most entries a thread
 * published (clean capture x4 at -j 2: 1,650 of its 9,250 page faults). */
struct table {
	uint32_t *slot;
	char *entries;
	size_t entry_size;
	unsigned log2;
	/* Entries handed out (atomic): on a cache line of its own, since publishing threads
	 * write it while every thread's lookups read the members above. */
	_Alignas(CACHE_LINE) uint32_t used;
	char pad[CACHE_LINE - sizeof(uint32_t)];
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
	t->used = 0;
	t->slot = zeroed_pages(((size_t)1 << log2) * sizeof(*t->slot));
	/* As many entries as slots: a slot is claimed once, and takes one. */
	t->entries = zeroed_pages(((size_t)1 << log2) * entry_size);
	return t->slot && t->entries ? 0 : -1;
}

static void table_fini(struct table *t)
{
	if (t->slot)
		munmap(t->slot, ((size_t)1 << t->log2) * sizeof(*t->slot));
	if (t->entries)
		munmap(t->entries, ((size_t)1 << t->log2) * t->entry_size);
}

struct jf_fast_shared *jf_fast_shared_new(void)
{
	struct jf_fast_shared *s = aligned_alloc(CACHE_LINE, sizeof(*s));

	if (!s)
		return NULL;
	memset(s, 0, sizeof(*s));
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
	uint32_t v = __atomic_load_n(&t->slot[i], __ATOMIC_ACQUIRE);

	if (v == 0 || v == CLAIMED)
		return NULL;
	return t->entries + (size_t)(v - 1) * t->entry_size;
}

/* Publish e in the first empty slot from first (none: it is dropped). A slot is claimed
 * before its entry is written, so that one thread alone writes it. */
static void publish(struct table *t, size_t first, const void *e)
{
	unsigned i;

	for (i = 0; i < PROBES; i++) {
		size_t at = probe(t, first, i);
		uint32_t expected = 0, n;

		if (__atomic_compare_exchange_n(&t->slot[at], &expected, CLAIMED, 0,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			n = __atomic_fetch_add(&t->used, 1, __ATOMIC_RELAXED);
			memcpy(t->entries + (size_t)n * t->entry_size, e, t->entry_size);
			__atomic_store_n(&t->slot[at], n + 1, __ATOMIC_RELEASE);
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
