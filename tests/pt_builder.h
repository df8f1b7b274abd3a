/* Building Intel PT streams for tests with libipt's own packet encoder: the packets a
 * real CPU would write for a program whose path the test fixes. */
#ifndef JITFLOW_TEST_PT_BUILDER_H
#define JITFLOW_TEST_PT_BUILDER_H

#include <stddef.h>
#include <stdint.h>

struct pt_encoder;

struct jf_ptb {
	uint8_t *buf;
	size_t cap;
	struct pt_encoder *enc;
};

void jf_ptb_init(struct jf_ptb *b, size_t cap);
void jf_ptb_fini(struct jf_ptb *b);
/* PSB, MODE.Exec 64-bit, PSBEND */
void jf_ptb_psb(struct jf_ptb *b);
/* PSB, MODE.Exec 64-bit, TSC (the time, in TSC ticks), PSBEND */
void jf_ptb_psb_tsc(struct jf_ptb *b, uint64_t tsc);
/* Tracing enabled at ip (MODE.Exec 64-bit, TIP.PGE) */
void jf_ptb_pge(struct jf_ptb *b, uint64_t ip);
/* Tracing disabled at the next branch (TIP.PGD, IP suppressed) */
void jf_ptb_pgd(struct jf_ptb *b);
/* An indirect branch or return went to ip */
void jf_ptb_tip(struct jf_ptb *b, uint64_t ip);
/* Conditional branch outcomes, in execution order ("1" taken, "0" not) */
void jf_ptb_tnt(struct jf_ptb *b, const char *bits);
size_t jf_ptb_size(const struct jf_ptb *b);

#endif
