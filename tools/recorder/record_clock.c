/* The program's reads of the time-stamp counter, with their positions (record_clock.h). */
#include "record_clock.h"

#include <stdio.h>

#include "record_internal.h"

void jf_rec_clock_read(struct jf_record_state *st, const struct jf_record_thread *t,
		       uint64_t position, uint64_t tsc)
{
	if (st->clock_reads_failed)
		return;
	if (!st->clock_reads) {
		char path[8192];

		snprintf(path, sizeof(path), "%s/clock-reads.txt", st->out_dir);
		st->clock_reads = fopen(path, "w");
		if (!st->clock_reads) {
			st->clock_reads_failed = 1;
			jf_rec_note(st, "%s: cannot write (%m)", path);
			return;
		}
		fputs("# jitflow clock-reads 1\n", st->clock_reads);
	}
	fprintf(st->clock_reads, "%d %llu %llx\n", t->tid ? t->tid : st->pid,
		(unsigned long long)position, (unsigned long long)tsc);
	st->clock_reads_written++;
}

uint64_t jf_rec_clock_finish(struct jf_record_state *st)
{
	uint64_t n = st->clock_reads_written;

	if (st->clock_reads && fclose(st->clock_reads))
		jf_rec_note(st, "clock-reads.txt: write error");
	st->clock_reads = NULL;
	st->clock_reads_written = 0;
	return n;
}
