/* A tiny A64 program, two versions of it at the same address (as a JIT rewrites code in
 * place), and an ETMv4 trace of it written packet by packet (see cs_synthetic.c). The
 * expected ranges follow from what the program does, not from any decoder. */
#ifndef JITFLOW_CS_SYNTHETIC_H
#define JITFLOW_CS_SYNTHETIC_H

#include <stddef.h>
#include <stdint.h>

#include "jitflow/coresight.h"

enum { CS_SYN_BASE = 0x10000, CS_SYN_TRACE_ID = 0x10 };

extern const uint8_t cs_syn_code_a[16];  /* loop of 3 passes through a 2-insn body */
extern const uint8_t cs_syn_code_b[20];  /* loop of 2 passes through a 4-insn body */

/* The trace: part 1 runs version A once and returns to its start; part 2 runs the code
 * there again. cs_syn_part2 is the index where part 2 begins. */
extern const uint8_t cs_syn_trace[];
extern const size_t cs_syn_trace_size;
extern const size_t cs_syn_part2;

/* Wrap a single source's stream into 16-byte CoreSight frames under trace ID id, padded
 * with empty ETMv4 Context packets (0x80: "context unchanged"). Returns the frames' size
 * (a multiple of 16, at most cap). */
size_t cs_syn_frames(const uint8_t *data, size_t size, uint8_t id, uint8_t *out, size_t cap);

/* The ETMv4 registers of the traced core's ETM. */
void cs_syn_source(struct jf_cs_source *src);

/* A decoder of trace (raw, or formatted in frames of the given JF_CS_FRAMES_* kind) from
 * that ETM over map, looking one record ahead; fails the test if it cannot be made. */
struct jf_decoder *cs_syn_decoder(const uint8_t *trace, size_t size, int formatted, int frames,
				  struct jf_codemap *map);

/* Write a snapshot folder (snapshot.ini, cpu.ini with version A as a dump, etm.ini,
 * trace.ini, trace.bin) into dir. */
void cs_syn_write_snapshot(const char *dir);

#endif
