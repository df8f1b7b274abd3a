/* The x86-64 recorder's list of JIT code blocks (record_jitcode.h), kept in its state and
 * reporting into its notes; the list itself (record_jitcode.c) is shared with the AArch64
 * recorder. */
#include "record_jitcode.h"

#include "record_internal.h"

static struct jf_rec_jitcode *state(struct jf_record_state *st)
{
	if (!st->jitcode && !st->jitcode_failed) {
		st->jitcode = jf_rec_jitcode_new(st->out_dir);
		if (!st->jitcode) {
			st->jitcode_failed = 1;
			jf_rec_note(st, "out of memory following JIT code: jit-code.txt not written");
		}
	}
	return st->jitcode;
}

void jf_rec_jitcode_region(struct jf_record_state *st, uint64_t addr, uint64_t len)
{
	struct jf_rec_jitcode *jc = state(st);

	if (jc && jf_rec_jitcode_add(jc, addr, len))
		jf_rec_note(st, "more than %d anonymous executable mappings: code in later ones "
			    "is not listed in jit-code.txt", JF_REC_JITCODE_MAX_REGIONS);
}

int jf_rec_jitcode_covers(struct jf_record_state *st, uint64_t pc)
{
	return st->jitcode && jf_rec_jitcode_in(st->jitcode, pc);
}

void jf_rec_jitcode_translation(struct jf_record_state *st, uint64_t pc, const uint8_t *bytes,
				size_t size)
{
	if (st->jitcode)
		jf_rec_jitcode_translated(st->jitcode, pc, bytes, size);
}

void jf_rec_jitcode_exec(struct jf_record_state *st, struct jf_record_thread *t, uint64_t pc)
{
	struct jf_rec_jitcode *jc = st->jitcode;

	if (jc && jf_rec_jitcode_ran(jc, t->tid ? t->tid : st->pid, t->traced, pc))
		jf_rec_note(st, "%s: cannot write (%m)", jf_rec_jitcode_path(jc));
}

uint64_t jf_rec_jitcode_finish(struct jf_record_state *st)
{
	int incomplete, write_error;
	uint64_t n;

	if (!st->jitcode)
		return 0;
	n = jf_rec_jitcode_close(st->jitcode, &incomplete, &write_error);
	st->jitcode = NULL;
	if (incomplete)
		jf_rec_note(st, "out of memory following JIT code: jit-code.txt is incomplete");
	if (write_error)
		jf_rec_note(st, "jit-code.txt: write error");
	return n;
}
