/* Placing the code writes of a PyPy JIT log in a recording, exactly.
 *
 * PyPy stamps its log with the TSC; under QEMU that is the host's clock, which the
 * recording (an instruction clock) does not have. But the recorder lists every block of
 * anonymous executable memory as it first ran with new bytes (DIR/jit-code.txt: thread,
 * instruction position, address, bytes). The log's writes (CODE_DUMPs, in the order PyPy
 * made them) are matched against those blocks:
 *
 *   S_k is the code image after the first k writes. Going through the blocks in the order
 *   they ran, with A writes placed so far: if the block's bytes equal S_A wherever S_A
 *   knows them, nothing changes; otherwise the smallest k > A whose image equals the
 *   block's bytes wherever it knows them places writes A+1..k right before that block.
 *
 * This never places a write before it happened (write k was made before its bytes ran,
 * and writes are logged in the order they were made) and never after its bytes first ran.
 * Blocks that no k explains are counted and located (never guessed at); blocks of memory
 * the log never wrote are someone else's code (counted). Writes whose bytes never ran
 * apply after the last block. */
#ifndef JITFLOW_PYPYLOG_PLACE_H
#define JITFLOW_PYPYLOG_PLACE_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jitflow/error.h"
#include "jitflow/pypylog.h"

#ifdef __cplusplus
extern "C" {
#endif

struct jf_pypylog_place {
	int placed;            /* 0: never ran (applies after everything) */
	int32_t tid;
	uint64_t position;     /* instructions tid had run before the write applies */
	uint64_t block;        /* the block (line of jit-code.txt, from 1) it applies before */
};

/* A block of anonymous memory that the log never wrote (code PyPy generates without
 * logging it, such as its CPU feature probe): its bytes as it ran. */
struct jf_pypylog_foreign {
	int32_t tid;
	uint64_t position, block, pc;
	uint8_t *bytes;
	size_t size;
};

struct jf_pypylog_placement {
	struct jf_pypylog_place *at; /* one per log->dumps entry */
	struct jf_pypylog_foreign *foreigners; /* in the order they ran */
	size_t nforeigners;
	uint64_t blocks, consistent, placing, foreign, unexplained, bad_lines;
	char problem[8][192];
	size_t nproblems;
	int32_t first_tid;
};

/* Read jit_code_path and place log's dumps. 0, or -1 with err (I/O, memory). */
int jf_pypylog_place(const struct jf_pypylog *log, const char *jit_code_path,
		     struct jf_pypylog_placement **out, struct jf_error *err);
/* The same from an open stream (name for messages). */
int jf_pypylog_place_stream(const struct jf_pypylog *log, FILE *f, const char *name,
			    struct jf_pypylog_placement **out, struct jf_error *err);
void jf_pypylog_placement_free(struct jf_pypylog_placement *p);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
