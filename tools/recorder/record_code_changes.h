/* Code changes in a JIT's memory, placed where they happen: for every thread, each block of
 * anonymous executable memory (record_jitcode.h) that the thread runs with bytes it has
 * not run there before becomes a PATCH record of those bytes, flagged JF_PATCH_OBSERVED,
 * in DIR/observed-code-TID.dump, a zone file whose timestamps are positions
 * (JF_ZONE_MARKER_POSITION: the instructions a decoder of the thread's trace has counted
 * where the decoder's block holding it begins; see jf_rec_code_ran). One file per thread,
 * since a position stream's records apply in file order on their own thread. A decoder applies each one where the image holds other bytes, or none
 * (code that ran before the runtime described it), and leaves the others out
 * (imagemap/zone_image.c): so the bytes decoded at every block are the bytes that ran,
 * whatever the runtime tells, and wherever it patched its code without telling (inline
 * caches, call sites, entries made not-entrant), the change is counted where it first ran.
 *
 * Which bytes ran is known per translation: the plugin backend names each execution's
 * translation, so an execution that reaches the recorder after a newer translation at the
 * same address still gets its own bytes; the log backend's executions get the newest. */
#ifndef JITFLOW_RECORDER_RECORD_CODE_CHANGES_H
#define JITFLOW_RECORDER_RECORD_CODE_CHANGES_H

#include <stddef.h>
#include <stdint.h>

struct jf_record_state;
struct jf_record_thread;
struct jf_block;
struct jf_rec_code_changes;

/* QEMU translated size bytes at pc (id: the plugin's translation id, 0 from the log). */
void jf_rec_code_translated(struct jf_record_state *st, uint64_t pc, uint32_t id,
			    const uint8_t *bytes, size_t size);
/* Thread t is about to run block b; a change applies at position `at` of its trace: where
 * the straight-line run of blocks that b continues began, since a decoder decodes that run
 * as one block, with the code it has when the block begins (QEMU's blocks end at every
 * branch; libipt's only where the trace says something), less the instructions of blocks
 * an OVF hid from the decoder (t->hidden). */
void jf_rec_code_ran(struct jf_record_state *st, struct jf_record_thread *t,
		     const struct jf_block *b, uint64_t at);
/* A runtime's record, dated now, put code at [addr, addr + size): a decoder applies its
 * bytes here, over whatever a thread's earlier observed patch put there. A record written
 * late can hold bytes from before a patch the threads have run since (HotSpot posts
 * CompiledMethodLoad after the nmethod ran and its call sites were resolved): so the next
 * time a thread runs code on those pages it writes its bytes again, even those it ran
 * there before (page granularity: a few more records, never a missed one). */
void jf_rec_code_described(struct jf_record_state *st, uint64_t addr, uint64_t size);
/* Close the files; how many records they hold. */
uint64_t jf_rec_code_changes_finish(struct jf_record_state *st);

#endif
