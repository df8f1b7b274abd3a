/* A PyPy log as it would be stamped on Intel PT hardware (pypylog_restamp.h). */
#include "pypylog_restamp.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

/* The recorder's synthetic clock (tools/recorder/pt_stream.h): the TSC packet of a point
 * where the recording had run N instructions is (N + 10^9) * 8. */
enum { TSC_PER_INSN = 8 };
#define CLOCK_BASE 1000000000ull

struct block {               /* one line of jit-code.txt */
	uint64_t pos, pc;
	uint8_t bytes[4096];
	size_t size;
};

struct piece {               /* one CODE_DUMP line */
	uint64_t addr;
	uint8_t *bytes;
	size_t size;
};

struct section {             /* one jit-backend-dump section */
	size_t line;             /* its opening line */
	struct piece *pieces;
	size_t npieces;
	long block;              /* the block that first ran its bytes (-1: none) */
};

static size_t hex_bytes(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;
	unsigned v;

	while (n < max && sscanf(hex + 2 * n, "%2x", &v) == 1)
		out[n++] = (uint8_t)v;
	return n;
}

static struct block *read_blocks(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	static char line[16384];
	struct block *b = NULL;
	char hex[9000];
	unsigned long long pos, pc;
	int tid;

	assert_non_null(f);
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || sscanf(line, "%d %llu %llx %8999s", &tid, &pos, &pc, hex) != 4)
			continue;
		b = realloc(b, (*n + 1) * sizeof(*b));
		assert_non_null(b);
		b[*n].pos = pos;
		b[*n].pc = pc;
		b[*n].size = hex_bytes(hex, b[*n].bytes, sizeof(b[*n].bytes));
		++*n;
	}
	fclose(f);
	return b;
}

/* Is the byte at addr written by a section after k? (Then k's value there is not what ran.) */
static int rewritten_later(const struct section *s, size_t ns, size_t k, uint64_t addr)
{
	size_t j, p;

	for (j = k + 1; j < ns; j++)
		for (p = 0; p < s[j].npieces; p++)
			if (addr >= s[j].pieces[p].addr &&
			    addr < s[j].pieces[p].addr + s[j].pieces[p].size)
				return 1;
	return 0;
}

/* Does block b run section k's bytes: it overlaps them, some byte of the overlap is
 * equal, and every one that differs is rewritten by a later section? */
static int runs_section(const struct block *b, const struct section *s, size_t ns, size_t k)
{
	size_t p, compared = 0;
	uint64_t a;

	for (p = 0; p < s[k].npieces; p++) {
		const struct piece *pc = &s[k].pieces[p];
		uint64_t lo = pc->addr > b->pc ? pc->addr : b->pc;
		uint64_t hi = pc->addr + pc->size < b->pc + b->size ? pc->addr + pc->size :
								       b->pc + b->size;

		for (a = lo; a < hi; a++) {
			if (pc->bytes[a - pc->addr] == b->bytes[a - b->pc])
				compared++;
			else if (!rewritten_later(s, ns, k, a))
				return 0;
		}
	}
	return compared > 0;
}

static int overlaps(const struct section *x, const struct section *y)
{
	size_t i, j;

	for (i = 0; i < x->npieces; i++)
		for (j = 0; j < y->npieces; j++)
			if (x->pieces[i].addr < y->pieces[j].addr + y->pieces[j].size &&
			    y->pieces[j].addr < x->pieces[i].addr + x->pieces[i].size)
				return 1;
	return 0;
}

void jf_test_pypylog_restamp(const char *log_path, const char *jit_code_path,
			     uint64_t instructions, uint64_t lead, const char *out_path,
			     struct jf_test_restamp_stats *st)
{
	size_t size, nlines = 0, nblocks, ns = 0, i, k;
	char *text = jf_test_read_file(log_path, &size), *p, **lines = NULL;
	struct block *blocks = read_blocks(jit_code_path, &nblocks);
	struct section *s = NULL;
	uint64_t *stamp, cur;
	FILE *out;

	memset(st, 0, sizeof(*st));
	for (p = text; p && *p;) {
		char *nl = strchr(p, '\n');

		lines = realloc(lines, (nlines + 1) * sizeof(*lines));
		assert_non_null(lines);
		lines[nlines++] = p;
		if (!nl)
			break;
		*nl = 0;
		p = nl + 1;
	}
	/* The dump sections and their bytes. */
	for (i = 0; i < nlines; i++) {
		unsigned long long addr, off;
		char hex[65536];

		if (lines[i][0] == '[' && strstr(lines[i], "] {jit-backend-dump")) {
			s = realloc(s, (ns + 1) * sizeof(*s));
			assert_non_null(s);
			memset(&s[ns], 0, sizeof(*s));
			s[ns].line = i;
			s[ns++].block = -1;
		} else if (ns && sscanf(lines[i], "CODE_DUMP @%llx +%llu %65535s", &addr, &off,
					hex) == 3) {
			struct section *c = &s[ns - 1];

			c->pieces = realloc(c->pieces, (c->npieces + 1) * sizeof(*c->pieces));
			assert_non_null(c->pieces);
			c->pieces[c->npieces].addr = addr + off;
			c->pieces[c->npieces].bytes = malloc(strlen(hex) / 2 + 1);
			c->pieces[c->npieces].size = hex_bytes(hex, c->pieces[c->npieces].bytes,
							       strlen(hex) / 2);
			c->npieces++;
		}
	}
	/* Each section's first run: the first block, no earlier than the first run of any
	 * earlier section at the same addresses, that runs its bytes. */
	for (k = 0; k < ns; k++) {
		long from = 0, b;

		for (i = 0; i < k; i++)
			if (s[i].block > from && overlaps(&s[i], &s[k]))
				from = s[i].block;
		for (b = from; b < (long)nblocks; b++)
			if (runs_section(&blocks[b], s, ns, k)) {
				s[k].block = b;
				break;
			}
		st->sections++;
		st->placed += s[k].block >= 0;
	}
	/* Code PyPy ran without logging it. */
	for (i = 0; i < nblocks; i++) {
		struct section whole = { 0, NULL, 1, -1 };
		struct piece pc = { blocks[i].pc, blocks[i].bytes, blocks[i].size };
		int written = 0;

		whole.pieces = &pc;
		for (k = 0; k < ns && !written; k++)
			written = overlaps(&whole, &s[k]);
		if (!written && !st->unlogged++)
			st->first_unlogged_pc = blocks[i].pc;
	}
	/* Every stamp: the TSC `lead` instructions before the earliest first run of the
	 * sections from that line on (written before the bytes ran, in log order). */
	stamp = calloc(nlines, sizeof(*stamp));
	assert_non_null(stamp);
	cur = (instructions + CLOCK_BASE) * TSC_PER_INSN;
	k = ns;
	for (i = nlines; i-- > 0;) {
		if (k && s[k - 1].line == i) {
			k--;
			if (s[k].block >= 0) {
				uint64_t pos = blocks[s[k].block].pos;
				uint64_t at = ((pos > lead ? pos - lead : 0) + CLOCK_BASE) * TSC_PER_INSN;

				if (at < cur)
					cur = at;
			}
		}
		stamp[i] = cur;
	}
	out = fopen(out_path, "w");
	assert_non_null(out);
	for (i = 0; i < nlines; i++) {
		const char *close = lines[i][0] == '[' ? strchr(lines[i], ']') : NULL;

		if (close)
			fprintf(out, "[%" PRIx64 "%s\n", stamp[i], close);
		else
			fprintf(out, "%s\n", lines[i]);
	}
	fclose(out);
	for (k = 0; k < ns; k++) {
		for (i = 0; i < s[k].npieces; i++)
			free(s[k].pieces[i].bytes);
		free(s[k].pieces);
	}
	free(s);
	free(stamp);
	free(lines);
	free(blocks);
	free(text);
}
