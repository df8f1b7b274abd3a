/* Test helper: Intel PT streams written with libipt's own packet encoder, over small code
 * images written by hand, so that each test states the program, the packets the hardware
 * would emit for one run of it, and the flow that run must decode to.
 *
 *     struct jf_ptb *b = jf_ptb_new();
 *     jf_ptb_psb(b); jf_ptb_psbend(b);
 *     jf_ptb_mode_exec(b, ptem_64bit);
 *     jf_ptb_tip_pge(b, pt_ipc_sext_48, 0x400000);
 *     jf_ptb_tnt(b, "TTN");            // taken, taken, not taken (in execution order)
 *     ...
 *     size = jf_ptb_size(b); bytes = jf_ptb_bytes(b);
 *
 * Encoding failures (a packet libipt refuses) fail the running cmocka test. */
#ifndef JITFLOW_TEST_PT_BUILDER_H
#define JITFLOW_TEST_PT_BUILDER_H

#include <intel-pt.h>
#include <stddef.h>
#include <stdint.h>

#include "jitflow/codemap.h"
#include "jitflow/decoder.h"
#include "jitflow/pt.h"

struct jf_ptb;

struct jf_ptb *jf_ptb_new(void);
void jf_ptb_free(struct jf_ptb *b);

/* Offset at which the next packet will be written (to locate expected errors). */
uint64_t jf_ptb_offset(const struct jf_ptb *b);
const uint8_t *jf_ptb_bytes(const struct jf_ptb *b);
/* A writable view, for tests that corrupt the stream after building it. */
uint8_t *jf_ptb_bytes_mut(struct jf_ptb *b);
size_t jf_ptb_size(const struct jf_ptb *b);

/* Any packet, as libipt describes it. */
void jf_ptb_packet(struct jf_ptb *b, const struct pt_packet *p);

void jf_ptb_psb(struct jf_ptb *b);
void jf_ptb_psbend(struct jf_ptb *b);
void jf_ptb_pad(struct jf_ptb *b);
void jf_ptb_ovf(struct jf_ptb *b);
/* Two bytes libipt cannot decode: an extended opcode it does not know (02 ff). */
void jf_ptb_bad_packet(struct jf_ptb *b);
void jf_ptb_mode_exec(struct jf_ptb *b, enum pt_exec_mode mode);
void jf_ptb_tip(struct jf_ptb *b, enum pt_ip_compression ipc, uint64_t ip);
void jf_ptb_tip_pge(struct jf_ptb *b, enum pt_ip_compression ipc, uint64_t ip);
void jf_ptb_tip_pgd(struct jf_ptb *b, enum pt_ip_compression ipc, uint64_t ip);
void jf_ptb_fup(struct jf_ptb *b, enum pt_ip_compression ipc, uint64_t ip);
/* A trace's usual start: a PSB+ in 64-bit mode, then tracing enabled at ip. */
void jf_ptb_start_64(struct jf_ptb *b, uint64_t ip);
/* Conditional branch outcomes in execution order, 'T' taken and 'N' not taken; 1 to 6
 * bits make a TNT-8, 7 to 47 a TNT-64. */
void jf_ptb_tnt(struct jf_ptb *b, const char *bits);
void jf_ptb_tsc(struct jf_ptb *b, uint64_t tsc);
void jf_ptb_tma(struct jf_ptb *b, uint16_t ctc, uint16_t fc);
void jf_ptb_mtc(struct jf_ptb *b, uint8_t ctc);
void jf_ptb_cyc(struct jf_ptb *b, uint64_t cycles);
void jf_ptb_cbr(struct jf_ptb *b, uint8_t ratio);
/* PTW with an 8-byte payload; with_fup says a FUP with the instruction's IP follows. */
void jf_ptb_ptw(struct jf_ptb *b, uint64_t payload, int with_fup);

/* A loop through an indirect jump back to ip: tracing enabled at ip, then loops TIPs to
 * ip, a PSB+ (its FUP at ip) after each run of them, stretches times; one more TIP and the
 * disable. */
struct jf_ptb *jf_ptb_tip_loop(uint64_t ip, unsigned stretches, unsigned loops);
/* The same with a PTW (no FUP, an 8-byte payload) in the middle of stretch ptw_stretch
 * (counted from 0). */
struct jf_ptb *jf_ptb_tip_loop_ptw(uint64_t ip, unsigned stretches, unsigned loops,
				   unsigned ptw_stretch);

/* A code map holding code at base (fails the test on error). */
struct jf_codemap *jf_ptb_codemap(const uint8_t *code, size_t size, uint64_t base);

/* Everything one decode produced. */
struct jf_ptb_decode {
	struct jf_flow *flows;
	size_t count;
	struct jf_decode_stats stats;
	int rc;               /* the last jf_decoder_next result (0 = clean end) */
};

/* Decode trace[0, size) over map with cfg (may be NULL: defaults) and collect every flow.
 * Fails the test when the decoder produces more than max_flows records (a hang). */
void jf_ptb_decode(const uint8_t *trace, size_t size, struct jf_codemap *map,
		   const struct jf_pt_config *cfg, size_t max_flows, struct jf_ptb_decode *out);
void jf_ptb_decode_free(struct jf_ptb_decode *d);

/* Print the flows (for diagnosing a failing test). */
void jf_ptb_dump(const struct jf_ptb_decode *d);

#endif
