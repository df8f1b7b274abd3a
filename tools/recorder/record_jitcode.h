/* Code the program wrote into anonymous executable memory (a JIT's code zone), as QEMU
 * ran it: DIR/jit-code.txt lists, for every block of such memory that QEMU translated
 * with bytes different from the last translation at that address, the thread, the
 * position where it first ran and its bytes:
 *
 *     # jitflow jit-code 1
 *     TID POSITION PC HEX
 *
 * POSITION is the number of instructions the thread had run (in the recording) before the
 * block; with an IP filter (--filter), those it ran inside the filter, i.e. its position in
 * its trace. QEMU retranslates code after it is written to, so the first run of new bytes at
 * an address always shows here, exactly placed. A JIT log that lists code writes but
 * dates them with a clock the recording does not have (PyPy's PYPYLOG under QEMU) is
 * placed by comparing its bytes with these (imagemap/pypylog_place.c). */
#ifndef JITFLOW_RECORDER_RECORD_JITCODE_H
#define JITFLOW_RECORDER_RECORD_JITCODE_H

#include <stddef.h>
#include <stdint.h>

struct jf_record_state;
struct jf_record_thread;
struct jf_rec_jitcode;

/* An anonymous mapping with PROT_EXEC at [addr, addr + len), or memory made executable
 * there by mprotect; overlapping and adjacent ones make one region. */
void jf_rec_jitcode_region(struct jf_record_state *st, uint64_t addr, uint64_t len);
/* Whether pc lies in such a mapping. */
int jf_rec_jitcode_covers(struct jf_record_state *st, uint64_t pc);
/* QEMU translated the block at pc. */
void jf_rec_jitcode_translation(struct jf_record_state *st, uint64_t pc, const uint8_t *bytes,
				size_t size);
/* Thread t is about to run the block at pc (t->traced not yet counted). */
void jf_rec_jitcode_exec(struct jf_record_state *st, struct jf_record_thread *t, uint64_t pc);
/* Close the file; how many blocks it lists. */
uint64_t jf_rec_jitcode_finish(struct jf_record_state *st);

#endif
