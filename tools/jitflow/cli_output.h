/* Printing flow records: ptxed-style text, block lines, or JSON lines. */
#ifndef JITFLOW_CLI_OUTPUT_H
#define JITFLOW_CLI_OUTPUT_H

#include <stdio.h>

#include "jitflow/flow.h"
#include "jitflow/images.h"
#include "jitflow/insn.h"
#include "jitflow/json_out.h"
#include "jitflow/zone_image.h"

enum jf_out_format { JF_OUT_TEXT, JF_OUT_JSONL };

struct jf_printer {
	FILE *out;
	enum jf_out_format format;
	int blocks;          /* one line per block instead of per instruction */
	int asm_text;        /* add disassembly to instruction lines */
	struct jf_insn_cache *insns;
	struct jf_symtab *symtab;
	struct jf_codemap *map;
	struct jf_zone_image *zones; /* names JIT code by region, version and offset */
	uint8_t isa;         /* of the block being listed */
};

/* Print one flow record. Returns -1 on an output error. */
int jf_print_flow(struct jf_printer *p, const struct jf_flow *f);


/* A progress line on stderr ("decode: 42% ...") at most once a second, only when stderr is
 * a terminal; jf_progress_done clears it. */
void jf_progress(uint64_t done_bytes, uint64_t total_bytes, uint64_t insns);
void jf_progress_done(void);

#endif
