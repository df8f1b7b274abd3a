/* Code changes in a JIT's memory as positioned PATCH records (record_code_changes.h). */
#include "record_code_changes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/zone_format.h"
#include "code_table.h"
#include "record_internal.h"
#include "record_jitcode.h"

enum { TABLE_BITS = 14, MAX_FILES = 1024, PAGE_SHIFT = 12 };
/* A record said to describe more code than this (a damaged size) marks every page at once,
 * not page by page: the page table stays as small as the code the runtime describes. */
#define MAX_DESCRIBED_BYTES (1ull << 30)

struct thread_file {
	FILE *f;
	uint64_t seq;
	int refused;       /* could not be opened: said once */
};

struct jf_rec_code_changes {
	/* Versions: key = translation id, with the bytes. What a thread last ran at pc:
	 * key = the thread's slot, bytes NULL, stamp = `described` when it ran them. The
	 * pages a runtime's record described: key 0, stamp = `described` after it. */
	struct jf_rec_code_table versions, last_run, described_pages;
	uint64_t described;        /* runtime records that described code so far */
	uint64_t all_described;    /* `described` after the last that described all pages */
	struct thread_file *files; /* by thread slot (its AUX buffer index) */
	size_t nfiles;
	uint64_t written;
	int failed;
	int too_many;      /* a thread past MAX_FILES: said once */
};

static struct jf_rec_code_changes *state(struct jf_record_state *st)
{
	struct jf_rec_code_changes *cc = st->code_changes;

	if (cc || st->code_changes_failed)
		return cc;
	cc = calloc(1, sizeof(*cc));
	if (!cc || jf_rec_code_table_init(&cc->versions, TABLE_BITS) ||
	    jf_rec_code_table_init(&cc->last_run, TABLE_BITS) ||
	    jf_rec_code_table_init(&cc->described_pages, TABLE_BITS)) {
		if (cc) {
			jf_rec_code_table_free(&cc->versions);
			jf_rec_code_table_free(&cc->last_run);
			jf_rec_code_table_free(&cc->described_pages);
		}
		free(cc);
		st->code_changes_failed = 1;
		jf_rec_note(st, "out of memory following JIT code: its changes are not recorded");
		return NULL;
	}
	st->code_changes = cc;
	return cc;
}

void jf_rec_code_translated(struct jf_record_state *st, uint64_t pc, uint32_t id,
			    const uint8_t *bytes, size_t size)
{
	struct jf_rec_code_changes *cc;
	struct jf_rec_code_entry *v;

	if (!size || size > UINT32_MAX || !jf_rec_jitcode_covers(st, pc) || !(cc = state(st)))
		return;
	v = jf_rec_code_table_find(&cc->versions, pc, id, 1);
	if (!v) {
		cc->failed = 1;
		return;
	}
	free(v->bytes);
	v->bytes = malloc(size);
	v->size = (uint32_t)size;
	if (!v->bytes) {
		cc->failed = 1;
		v->size = 1; /* keeps its slot; hash 0 and no bytes: never written */
		return;
	}
	memcpy(v->bytes, bytes, size);
	v->hash = jf_rec_code_hash(bytes, size);
}

static void put(FILE *f, const void *p, size_t n)
{
	fwrite(p, 1, n, f);
}

static void put32(FILE *f, uint32_t v)
{
	put(f, &v, 4);
}

static void put64(FILE *f, uint64_t v)
{
	put(f, &v, 8);
}

static void ext_prefix(FILE *f, uint32_t id, uint32_t body, uint64_t timestamp, uint64_t seq,
		       int tid)
{
	uint16_t version = JF_ZONE_EXT_VERSION, reserved = 0;

	put32(f, id);
	put32(f, JF_JITDUMP_PREFIX_SIZE + JF_ZONE_EXT_PREFIX_SIZE + body);
	put64(f, timestamp);
	put64(f, seq);
	put32(f, (uint32_t)tid);
	put(f, &version, 2);
	put(f, &reserved, 2);
}

/* The thread's file, opened with its header and the MARKER that says "by position". */
static struct thread_file *file_of(struct jf_record_state *st, struct jf_rec_code_changes *cc,
				   unsigned slot, int tid)
{
	struct thread_file *tf;
	char path[8192];

	if (slot >= MAX_FILES) {
		if (!cc->too_many++)
			jf_rec_note(st, "more than %d threads: the code changes of thread %d and later "
				    "ones are not recorded", MAX_FILES, tid);
		return NULL;
	}
	if (slot >= cc->nfiles) {
		size_t n = slot + 16;

		tf = realloc(cc->files, n * sizeof(*tf));
		if (!tf) {
			cc->failed = 1;
			return NULL;
		}
		memset(tf + cc->nfiles, 0, (n - cc->nfiles) * sizeof(*tf));
		cc->files = tf;
		cc->nfiles = n;
	}
	tf = &cc->files[slot];
	if (tf->f || tf->refused)
		return tf->f ? tf : NULL;
	snprintf(path, sizeof(path), "%s/" JF_OBSERVED_CODE_PREFIX "%d.dump", st->out_dir, tid);
	tf->f = fopen(path, "wb");
	if (!tf->f) {
		tf->refused = 1;
		jf_rec_note(st, "%s: cannot write (%m): this thread's code changes are not "
			    "recorded", path);
		return NULL;
	}
	put32(tf->f, JF_JITDUMP_MAGIC);
	put32(tf->f, JF_JITDUMP_VERSION);
	put32(tf->f, JF_JITDUMP_HEADER_SIZE);
	put32(tf->f, 62); /* EM_X86_64 */
	put32(tf->f, 0);
	put32(tf->f, (uint32_t)st->pid);
	put64(tf->f, 0);
	put64(tf->f, 0);
	ext_prefix(tf->f, JF_ZONE_MARKER, JF_ZONE_MARKER_FIXED, 0, ++tf->seq, tid);
	put64(tf->f, 0);
	put32(tf->f, JF_ZONE_MARKER_POSITION);
	put32(tf->f, 0);
	return tf;
}

void jf_rec_code_described(struct jf_record_state *st, uint64_t addr, uint64_t size)
{
	struct jf_rec_code_changes *cc = st->code_changes;
	uint64_t page;

	if (!cc || !size)
		return;
	cc->described++;
	if (size > MAX_DESCRIBED_BYTES || addr + size < addr) {
		cc->all_described = cc->described;
		return;
	}
	for (page = addr >> PAGE_SHIFT; page <= (addr + size - 1) >> PAGE_SHIFT; page++) {
		struct jf_rec_code_entry *e = jf_rec_code_table_find(&cc->described_pages, page,
								     0, 1);

		if (!e) {
			cc->failed = 1;
			return;
		}
		e->size = 1;
		e->stamp = cc->described;
	}
}

/* The count of runtime records after the last that described a page of [pc, pc + size). */
static uint64_t described_at(struct jf_rec_code_changes *cc, uint64_t pc, uint32_t size)
{
	struct jf_rec_code_entry *first = jf_rec_code_table_find(&cc->described_pages,
								 pc >> PAGE_SHIFT, 0, 0);
	struct jf_rec_code_entry *last = jf_rec_code_table_find(&cc->described_pages,
								(pc + size - 1) >> PAGE_SHIFT, 0, 0);
	uint64_t a = first ? first->stamp : 0, b = last ? last->stamp : 0;

	if (a < b)
		a = b;
	return a > cc->all_described ? a : cc->all_described;
}

void jf_rec_code_ran(struct jf_record_state *st, struct jf_record_thread *t,
		     const struct jf_block *b, uint64_t at)
{
	static const char reason[] = "ran";
	struct jf_rec_code_changes *cc = st->code_changes;
	struct jf_rec_code_entry *v, *last;
	struct thread_file *tf;
	int tid = t->tid ? t->tid : st->pid;

	if (!cc)
		return;
	v = jf_rec_code_table_find(&cc->versions, b->pc,
				   b->cflags == JF_REC_PLUGIN_KEY ? b->flags : 0, 0);
	if (!v || !v->bytes)
		return;
	last = jf_rec_code_table_find(&cc->last_run, b->pc, t->queue, 1);
	if (!last) {
		cc->failed = 1;
		return;
	}
	if (last->size && last->hash == v->hash && last->stamp >= described_at(cc, b->pc, v->size))
		return; /* the thread ran these bytes here before, and no record came since */
	last->size = v->size;
	last->hash = v->hash;
	last->stamp = cc->described;
	tf = file_of(st, cc, t->queue, tid);
	if (!tf)
		return;
	ext_prefix(tf->f, JF_ZONE_PATCH, JF_ZONE_PATCH_FIXED + v->size + sizeof(reason),
		   at, ++tf->seq, tid);
	put64(tf->f, b->pc);
	put32(tf->f, v->size);
	put32(tf->f, JF_PATCH_OBSERVED);
	put(tf->f, v->bytes, v->size);
	put(tf->f, reason, sizeof(reason));
	cc->written++;
}

uint64_t jf_rec_code_changes_finish(struct jf_record_state *st)
{
	struct jf_rec_code_changes *cc = st->code_changes;
	uint64_t n;
	size_t i;

	if (!cc)
		return 0;
	if (cc->failed)
		jf_rec_note(st, "out of memory following JIT code: some code changes are not "
			    "recorded");
	for (i = 0; i < cc->nfiles; i++)
		if (cc->files[i].f && fclose(cc->files[i].f))
			jf_rec_note(st, JF_OBSERVED_CODE_PREFIX "TID.dump: write error");
	jf_rec_code_table_free(&cc->versions);
	jf_rec_code_table_free(&cc->last_run);
	jf_rec_code_table_free(&cc->described_pages);
	free(cc->files);
	n = cc->written;
	free(cc);
	st->code_changes = NULL;
	return n;
}
