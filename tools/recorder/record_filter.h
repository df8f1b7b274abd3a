/* The recorder's IP filter (`jitflow record --filter=...`), as Intel PT's address-range
 * filtering (IA32_RTIT_ADDRn, `perf record --filter`) does it in hardware: only blocks
 * that start inside the filter are traced. A branch from inside to outside writes a
 * TIP.PGD with the branch's target and no TNT bit or TIP for the branch itself; the first
 * block back inside writes TIP.PGE (record_flow.c). A filter is a list of items:
 *
 *   jit          anonymous executable memory (a JIT's code zones), each mapping from the
 *                moment its mmap (or the mprotect that makes it executable) returns;
 *                mappings are never dropped (code freed and reused by the JIT stays
 *                inside), and ranges that touch or overlap are one
 *   START-END    the addresses [START, END) (hexadecimal, 0x optional)
 *
 * The filter only chooses what is traced; the recorder still follows every block (the
 * manifest counts instructions run and instructions traced). */
#ifndef JITFLOW_RECORDER_RECORD_FILTER_H
#define JITFLOW_RECORDER_RECORD_FILTER_H

#include <stdint.h>

#include <jitflow/error.h>

enum { JF_REC_FILTER_MAX = 256 };

struct jf_rec_filter {
	int jit;                                  /* anonymous executable memory is inside */
	unsigned nranges, nfixed;                 /* ranges; the first nfixed are START-END */
	uint64_t start[JF_REC_FILTER_MAX], end[JF_REC_FILTER_MAX];
	uint64_t hit_start, hit_end;              /* the range of the last hit */
	uint64_t dropped;                         /* jit mappings beyond JF_REC_FILTER_MAX */
	char spec[256];                           /* as given, for the manifest */
};

/* Parse spec ("jit", "0x401000-0x402000", "jit,400000-401000"). 0, or -1 with err
 * naming the item that is not understood. */
int jf_rec_filter_parse(struct jf_rec_filter *f, const char *spec, struct jf_error *err);
/* An anonymous executable mapping appeared (kept only for a jit filter). Returns 1 the
 * first time one cannot be kept (the filter is full), else 0. */
int jf_rec_filter_anon_exec(struct jf_rec_filter *f, uint64_t addr, uint64_t len);
/* Whether a block starting at pc is traced. */
int jf_rec_filter_has(struct jf_rec_filter *f, uint64_t pc);

#endif
