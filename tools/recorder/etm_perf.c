#include "etm_perf.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "etm_frames.h"
#include "etm_registers.h"
#include "pt_stream.h"

/* The piece of the stream that starts at the A-Sync numbered first ends at the last A-Sync
 * that keeps it within JF_ETM_PERF_CHUNK bytes (the next one, when the stretch to it is
 * longer), or at the stream's end; *next is the A-Sync the next piece starts at. */
static size_t piece_end(const struct jf_etm_stream *s, size_t first, size_t *next)
{
	size_t start = s->sync_at[first], i = first + 1;

	while (i < s->nsync && s->sync_at[i] - start <= JF_ETM_PERF_CHUNK)
		i++;
	if (i == s->nsync && s->size - start <= JF_ETM_PERF_CHUNK) {
		*next = s->nsync;
		return s->size;
	}
	if (i > first + 1)
		i--;
	*next = i;
	return i < s->nsync ? s->sync_at[i] : s->size;
}

/* The AUX and AUXTRACE records of the trace: each piece as it is, or in formatter frames
 * of its own (a whole number of frames, so that each decodes alone as in raw mode). */
static int write_trace(struct jf_perf_writer *w, const struct jf_etm_stream *s, int formatted,
		       int32_t pid, uint64_t end)
{
	uint8_t *frames = NULL;
	uint64_t at = 0;
	size_t first, cap = 0;

	for (first = 0; first < s->nsync;) {
		size_t next, stop = piece_end(s, first, &next), size = stop - s->sync_at[first];
		const uint8_t *piece = s->buf + s->sync_at[first];

		if (formatted) {
			/* A piece is longer than JF_ETM_PERF_CHUNK where A-Syncs are further
			 * apart. */
			if (jf_cs_frames_size(size) > cap) {
				uint8_t *more = realloc(frames, jf_cs_frames_size(size));

				if (!more) {
					free(frames);
					return -1;
				}
				frames = more;
				cap = jf_cs_frames_size(size);
			}
			jf_cs_frames_write(piece, size, JF_ETM_TRCTRACEIDR, frames);
			piece = frames;
			size = jf_cs_frames_size(size);
		}
		jf_perf_aux(w, pid, pid, 0, at, piece, size, end);
		at += size;
		first = next;
	}
	free(frames);
	return 0;
}

int jf_etm_perf_write(const struct jf_etm_flow *f, const struct jf_etm_snapshot_stats *snap,
		      const char *dir, int formatted, const char *comm,
		      const struct jf_perf_info *info, struct jf_error *err)
{
	static const struct jf_perf_etmv4 etm = {
		.cpu = 0,
		.trcconfigr = JF_ETM_TRCCONFIGR,
		.trctraceidr = JF_ETM_TRCTRACEIDR,
		.trcidr0 = JF_ETM_TRCIDR0,
		.trcidr1 = JF_ETM_TRCIDR1,
		.trcidr2 = JF_ETM_TRCIDR2,
		.trcidr8 = JF_ETM_TRCIDR8,
		.trcauthstatus = JF_ETM_TRCAUTHSTATUS,
	};
	const struct jf_etm_stream *s = &f->etm;
	uint64_t start = jf_pt_perf_time(0), end = jf_pt_perf_time(f->instructions);
	struct jf_perf_writer w;
	char path[PATH_MAX + 32];
	int32_t pid = f->nthreads ? f->threads[0].tid : 0;
	size_t i;

	snprintf(path, sizeof(path), "%s/perf.data", dir);
	if (jf_perf_open(&w, path, err))
		return -1;
	jf_perf_cs_etm_auxtrace_info(&w, &etm);
	w.aux_flags = formatted ? 0 : JF_PERF_AUX_CORESIGHT_RAW;
	jf_perf_comm(&w, pid, pid, comm, 1, start);
	for (i = 0; i < snap->regions; i++) {
		snprintf(path, sizeof(path), "%s/mem_%zu.bin", dir, i);
		jf_perf_mmap2(&w, pid, pid, snap->images[i].start, snap->images[i].size, 0,
			      PROT_READ | PROT_EXEC, MAP_PRIVATE, path, start);
	}
	/* A thread exists before its first instruction runs. */
	for (i = 1; i < f->nthreads; i++)
		jf_perf_fork(&w, pid, pid, f->threads[i].tid, pid,
			     f->threads[i].ran ? f->threads[i].first_time - 1 : start);
	if (write_trace(&w, s, formatted, pid, end)) {
		jf_perf_close(&w, info, err);
		return jf_fail(err, "out of memory");
	}
	for (i = 1; i < f->nthreads; i++)
		jf_perf_exit(&w, pid, pid, f->threads[i].tid, pid,
			     f->threads[i].ran ? f->threads[i].last_time : end);
	if (f->nthreads)
		jf_perf_exit(&w, pid, pid, pid, pid, end);
	jf_perf_finished_round(&w);
	return jf_perf_close(&w, info, err);
}
