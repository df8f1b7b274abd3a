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

/* Anonymous executable mappings listed at most; later ones are counted, not listed. */
enum { JF_REC_JITCODE_MAX_REGIONS = 256 };

/* The list itself, for either recorder (the x86-64 state below, etm_flow.h): writing
 * OUT_DIR/jit-code.txt once a listed block runs. NULL when out of memory. */
struct jf_rec_jitcode *jf_rec_jitcode_new(const char *out_dir);
/* Follow [addr, addr + len) (see jf_rec_jitcode_region); -1 when too many regions. */
int jf_rec_jitcode_add(struct jf_rec_jitcode *jc, uint64_t addr, uint64_t len);
int jf_rec_jitcode_in(const struct jf_rec_jitcode *jc, uint64_t pc);
/* QEMU translated the block at pc. */
void jf_rec_jitcode_translated(struct jf_rec_jitcode *jc, uint64_t pc, const uint8_t *bytes,
			       size_t size);
/* Thread tid is about to run the block at pc, at POSITION; -1 when the file cannot be
 * created (then nothing more is followed). */
int jf_rec_jitcode_ran(struct jf_rec_jitcode *jc, int32_t tid, uint64_t position, uint64_t pc);
const char *jf_rec_jitcode_path(const struct jf_rec_jitcode *jc);
/* Close and free; how many blocks were listed, whether memory ran out on the way and
 * whether closing the file failed. */
uint64_t jf_rec_jitcode_close(struct jf_rec_jitcode *jc, int *incomplete, int *write_error);

/* The same in the x86-64 recorder's state (notes go into its manifest). */

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
