/* Blocks of anonymous executable memory as QEMU ran them (record_jitcode.h). */
#include "record_jitcode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "address_ranges.h"
#include "code_table.h"
#include "record_internal.h"

enum { MAX_REGIONS = JF_REC_JITCODE_MAX_REGIONS, TABLE_BITS = 16 };

struct jf_rec_jitcode {
	uint64_t start[MAX_REGIONS], end[MAX_REGIONS];
	unsigned nregions;
	struct jf_rec_code_table seen; /* the last bytes translated at each pc (key 0) */
	char path[8192];
	FILE *out;
	uint64_t written;
	int failed;                    /* out of memory: the list is incomplete */
};

struct jf_rec_jitcode *jf_rec_jitcode_new(const char *out_dir)
{
	struct jf_rec_jitcode *jc = calloc(1, sizeof(*jc));

	if (!jc || jf_rec_code_table_init(&jc->seen, TABLE_BITS)) {
		free(jc);
		return NULL;
	}
	snprintf(jc->path, sizeof(jc->path), "%s/jit-code.txt", out_dir);
	return jc;
}

int jf_rec_jitcode_add(struct jf_rec_jitcode *jc, uint64_t addr, uint64_t len)
{
	/* a page made executable again after a rewrite joins its own region */
	if (!len || jf_rec_ranges_join(jc->start, jc->end, 0, jc->nregions, addr, len))
		return 0;
	if (jc->nregions == MAX_REGIONS)
		return -1;
	jc->start[jc->nregions] = addr;
	jc->end[jc->nregions++] = addr + len;
	return 0;
}

int jf_rec_jitcode_in(const struct jf_rec_jitcode *jc, uint64_t pc)
{
	unsigned i;

	for (i = 0; i < jc->nregions; i++)
		if (jc->start[i] <= pc && pc < jc->end[i])
			return 1;
	return 0;
}

void jf_rec_jitcode_translated(struct jf_rec_jitcode *jc, uint64_t pc, const uint8_t *bytes,
			       size_t size)
{
	struct jf_rec_code_entry *s;
	uint64_t h;

	if (!size || size > UINT32_MAX || !jf_rec_jitcode_in(jc, pc))
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

int jf_rec_jitcode_ran(struct jf_rec_jitcode *jc, int32_t tid, uint64_t position, uint64_t pc)
{
	struct jf_rec_code_entry *s;
	uint32_t i;

	if (!jc->seen.used || !(s = jf_rec_code_table_find(&jc->seen, pc, 0, 0)) || !s->pending)
		return 0;
	s->pending = 0;
	if (!jc->out) {
		jc->out = fopen(jc->path, "w");
		if (!jc->out) {
			jc->nregions = 0; /* stop following */
			return -1;
		}
		fputs("# jitflow jit-code 1\n", jc->out);
	}
	fprintf(jc->out, "%d %llu %llx ", tid, (unsigned long long)position,
		(unsigned long long)pc);
	for (i = 0; i < s->size; i++)
		fprintf(jc->out, "%02x", s->bytes[i]);
	fputc('\n', jc->out);
	free(s->bytes);
	s->bytes = NULL;
	jc->written++;
	return 0;
}

const char *jf_rec_jitcode_path(const struct jf_rec_jitcode *jc)
{
	return jc->path;
}

uint64_t jf_rec_jitcode_close(struct jf_rec_jitcode *jc, int *incomplete, int *write_error)
{
	uint64_t n = jc->written;

	*incomplete = jc->failed;
	*write_error = jc->out && fclose(jc->out);
	jf_rec_code_table_free(&jc->seen);
	free(jc);
	return n;
}
