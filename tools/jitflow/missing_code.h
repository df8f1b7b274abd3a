/* Where decoding stopped for want of code, by the file that would have had it: each
 * no-image gap (libipt's "no memory mapped", OpenCSD's inaccessible address) is charged to
 * the missing perf.data mapping holding its address (with the build-id to look for), to
 * kernel addresses, or to addresses nothing mapped. A gap is one stop of the decoder: how
 * many instructions ran in it cannot be known without the file. */
#ifndef JITFLOW_MISSING_CODE_H
#define JITFLOW_MISSING_CODE_H

#include <stdint.h>
#include <stdio.h>

#include "jitflow/flow.h"

struct jf_cli_inputs;

enum { JF_MISSING_FILES_MAX = 64 };

struct jf_missing_place {
	char name[256];           /* recorded file name, or "kernel" / "unmapped" */
	char build_id[41];
	uint64_t gaps, first_offset, first_ip;
};

struct jf_missing_code {
	struct jf_missing_place files[JF_MISSING_FILES_MAX];
	int nfiles;
	struct jf_missing_place kernel, unmapped;
	uint64_t gaps;
};

/* Count f if it is a no-image gap. */
void jf_missing_code_count(struct jf_missing_code *m, const struct jf_cli_inputs *in,
			   const struct jf_flow *f);
void jf_missing_code_print_text(const struct jf_missing_code *m, FILE *out);
/* ,"missing_code":{...} */
void jf_missing_code_print_json(const struct jf_missing_code *m, FILE *out);

#endif
