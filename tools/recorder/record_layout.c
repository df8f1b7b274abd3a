/* Load addresses the log shows only by execution: the dynamic loader and a PIE program. */
#include "record_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/mman.h>

/* MMAP2 records for an ELF file's executable segments, moved by base. */
void jf_rec_map_image(struct jf_record_state *st, const struct jf_program_image *img,
		      const char *path, uint64_t base, uint64_t clock)
{
	int i;

	for (i = 0; i < img->nsegments; i++) {
		const struct jf_image_segment *s = &img->segments[i];

		jf_perf_mmap2(&st->perf, st->pid, st->pid, base + s->addr, s->len, s->pgoff,
			      s->prot, MAP_PRIVATE, path, jf_pt_perf_time(clock));
		st->mmap_records++;
	}
}

/* Before the block at pc runs on t: learn load addresses the log only shows this way. */
void jf_rec_follow_loader(struct jf_record_state *st, struct jf_record_thread *t, uint64_t pc)
{
	if (st->layout_state == 0) {
		st->layout_state = 2;
		if (st->image.interp[0]) {
			struct jf_error err;
			char path[PATH_MAX];

			/* The loader QEMU uses is the host's (same architecture). */
			if (!realpath(st->image.interp, path) ||
			    jf_program_image_load(&st->interp, path, &err)) {
				jf_rec_note(st, "dynamic loader %s cannot be read; its code and the "
				     "program's are not mapped in the recording", st->image.interp);
				return;
			}
			st->interp_base = pc - st->interp.entry;
			st->interp_end = st->interp_base;
			for (int i = 0; i < st->interp.nsegments; i++) {
				const struct jf_image_segment *s = &st->interp.segments[i];

				if (st->interp_base + s->addr + s->len > st->interp_end)
					st->interp_end = st->interp_base + s->addr + s->len;
			}
			jf_rec_map_image(st, &st->interp, path, st->interp_base, 0);
			st->layout_state = st->image.is_pie ? 1 : 2;
			if (!st->image.is_pie) {
				jf_rec_map_image(st, &st->image, st->program, 0, 0);
				st->marker_addr = st->image.marker_addr;
			}
		} else if (st->image.is_pie) {
			/* static-pie: the first block is the program's entry point */
			st->main_base = pc - st->image.entry;
			jf_rec_map_image(st, &st->image, st->program, st->main_base, 0);
			st->marker_addr = st->image.marker_addr ?
					  st->image.marker_addr + st->main_base : 0;
		}
		return;
	}
	/* The loader enters the program with an indirect jump to its (page-offset-exact)
	 * entry point, outside the loader. QEMU mapped the program before the loader's
	 * first instruction, so that is the record's date too (perf orders by time). */
	if (st->layout_state == 1 && t->have_prev && t->prev.exit == JF_EXIT_IND_JUMP &&
	    ((pc - st->image.entry) & 0xfff) == 0 &&
	    (pc < st->interp_base || pc >= st->interp_end)) {
		st->main_base = pc - st->image.entry;
		jf_rec_map_image(st, &st->image, st->program, st->main_base, 0);
		st->marker_addr = st->image.marker_addr ? st->image.marker_addr + st->main_base : 0;
		st->layout_state = 2;
	}
}
