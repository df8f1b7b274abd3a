/* Comparing a CoreSight decode with trc_pkt_lister's output (OpenCSD's reference lister):
 * per trace ID, the sequence of executed ranges and missing-code gaps, each with its
 * trace index. Used by the snapshot tests (stored lister output) and the live test. */
#ifndef JITFLOW_CS_TRACE_COMPARE_H
#define JITFLOW_CS_TRACE_COMPARE_H

#include <stdint.h>
#include <stdio.h>

#include "jitflow/decoder.h"

struct cs_item {
	char kind;            /* 'R' executed range, 'N' no code at start (ADDR_NACC) */
	uint64_t index;       /* trace index of the element */
	uint64_t start, end;  /* end exclusive (ranges only) */
	uint32_t ninsn;
};

struct cs_items {
	struct cs_item *v;
	size_t n, cap;
};

/* Everything seen in one decode or one lister run. */
struct cs_run {
	struct cs_items id[128];
	uint64_t decode_errors;     /* errors while decoding trace */
	uint64_t setup_errors;      /* sources that could not be decoded */
	uint64_t ranges;
	uint64_t cycles[128];       /* cycle counts per ID, summed ([CC=N] in the lister) */
};

void cs_run_free(struct cs_run *run);

/* Read `trc_pkt_lister -decode` output. */
void cs_run_from_lister(struct cs_run *run, FILE *in);

/* Run `trc_pkt_lister -ss_dir SNAPSHOT_DIR -decode` in work_dir (it writes its
 * trc_pkt_lister.ppl there) and read its output; fails the test when the lister fails. */
void cs_run_from_lister_snapshot(struct cs_run *run, const char *snapshot_dir,
				 const char *work_dir);

/* Decode to the end with dec (fails the test on a fatal error). */
void cs_run_from_decoder(struct cs_run *run, struct jf_decoder *dec);

/* Compare ranges and gaps per ID; on a difference, print the first one and return -1. */
int cs_run_compare(const struct cs_run *expected, const struct cs_run *got, const char *what);

#endif
