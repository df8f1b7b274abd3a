/* Blocks of anonymous executable memory as QEMU ran them (record_jitcode.h). */
#include "record_jitcode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "address_ranges.h"
#include "code_table.h"
#include "record_internal.h"

enum { MAX_REGIONS = 256, TABLE_BITS = 16 };

struct jf_rec_jitcode {
	uint64_t start[MAX_REGIONS], end[MAX_REGIONS];
	unsigned nregions;
	struct jf_rec_code_table seen; /* the last bytes translated at each pc (key 0) */
	FILE *out;
	uint64_t written;
	int failed;
};

static struct jf_rec_jitcode *state(struct jf_record_state *st)
{
	if (!st->jitcode && !st->jitcode_failed) {
		st->jitcode = calloc(1, sizeof(*st->jitcode));
		if (!st->jitcode || jf_rec_code_table_init(&st->jitcode->seen, TABLE_BITS)) {
			free(st->jitcode);
			st->jitcode = NULL;
			st->jitcode_failed = 1;
			jf_rec_note(st, "out of memory following JIT code: jit-code.txt not written");
		}
	}
	return st->jitcode;
}

void jf_rec_jitcode_region(struct jf_record_state *st, uint64_t addr, uint64_t len)
{
	struct jf_rec_jitcode *jc = state(st);

	/* a page made executable again after a rewrite joins its own region */
	if (!jc || !len || jf_rec_ranges_join(jc->start, jc->end, 0, jc->nregions, addr, len))
		return;
	if (jc->nregions == MAX_REGIONS) {
		jf_rec_note(st, "more than %d anonymous executable mappings: code in later ones "
			    "is not listed in jit-code.txt", MAX_REGIONS);
		return;
	}
	jc->start[jc->nregions] = addr;
	jc->end[jc->nregions++] = addr + len;
}

static int in_region(const struct jf_rec_jitcode *jc, uint64_t pc)
{
	unsigned i;

	for (i = 0; i < jc->nregions; i++)
		if (jc->start[i] <= pc && pc < jc->end[i])
			return 1;
	return 0;
}

int jf_rec_jitcode_covers(struct jf_record_state *st, uint64_t pc)
{
	return st->jitcode && in_region(st->jitcode, pc);
}

void jf_rec_jitcode_translation(struct jf_record_state *st, uint64_t pc, const uint8_t *bytes,
				size_t size)
{
	struct jf_rec_jitcode *jc = st->jitcode;
	struct jf_rec_code_entry *s;
	uint64_t h;

	if (!jc || !size || size > UINT32_MAX || !in_region(jc, pc))
		return;
	h = jf_rec_code_hash(bytes, size);
	s = jf_rec_code_table_find(&jc->seen, pc, 0, 1);
	if (!s) {
		jc->failed = 1;
		return;
	}
	if (s->size == size && s->hash == h && !s->pending)
		return; /* the same bytes again (QEMU retranslates whole pages) */
	free(s->bytes);
	s->bytes = malloc(size);
	if (!s->bytes) {
		s->size = 1; /* keeps its slot; not pending: never written */
		s->pending = 0;
		jc->failed = 1;
		return;
	}
	memcpy(s->bytes, bytes, size);
	s->size = (uint32_t)size;
	s->hash = h;
	s->pending = 1;
}

void jf_rec_jitcode_exec(struct jf_record_state *st, struct jf_record_thread *t, uint64_t pc)
{
	struct jf_rec_jitcode *jc = st->jitcode;
	struct jf_rec_code_entry *s;
	uint32_t i;

	if (!jc || !jc->seen.used || !(s = jf_rec_code_table_find(&jc->seen, pc, 0, 0)) ||
	    !s->pending)
		return;
	s->pending = 0;
	if (!jc->out) {
		char path[8192];

		snprintf(path, sizeof(path), "%s/jit-code.txt", st->out_dir);
		jc->out = fopen(path, "w");
		if (!jc->out) {
			jf_rec_note(st, "%s: cannot write (%m)", path);
			jc->nregions = 0; /* stop following */
			return;
		}
		fputs("# jitflow jit-code 1\n", jc->out);
	}
	fprintf(jc->out, "%d %llu %llx ", t->tid ? t->tid : st->pid,
		(unsigned long long)t->traced, (unsigned long long)pc);
	for (i = 0; i < s->size; i++)
		fprintf(jc->out, "%02x", s->bytes[i]);
	fputc('\n', jc->out);
	free(s->bytes);
	s->bytes = NULL;
	jc->written++;
}

uint64_t jf_rec_jitcode_finish(struct jf_record_state *st)
{
	struct jf_rec_jitcode *jc = st->jitcode;
	uint64_t n;

	if (!jc)
		return 0;
	if (jc->failed)
		jf_rec_note(st, "out of memory following JIT code: jit-code.txt is incomplete");
	if (jc->out && fclose(jc->out))
		jf_rec_note(st, "jit-code.txt: write error");
	jf_rec_code_table_free(&jc->seen);
	n = jc->written;
	free(jc);
	st->jitcode = NULL;
	return n;
}
