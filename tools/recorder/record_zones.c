/* Zone files the program wrote, copied into the recording with timestamps on its clock. */
#include "record_filter.h"
#include "record_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zone_copy.h"
#include "zone_files.h"

/* Under --filter the marker function may lie outside what is traced: its calls cannot
 * place the records then, their timestamps (from the marker calls the recorder saw, or
 * from the writes) do. */
static void untraced_marker(struct jf_record_state *st, uint8_t *data, size_t size,
			    const char *path)
{
	uint64_t marker = jf_zone_marker_calls_addr(data, size);

	if (!st->filter || !marker || jf_rec_filter_has(st->filter, marker))
		return;
	if (jf_zone_clear_marker_calls(data, size))
		jf_rec_note(st, "zone file %s: its marker function (%#llx) lies outside --filter=%s; "
			    "the copy's records apply by their timestamps", path,
			    (unsigned long long)marker, st->filter->spec);
}

int jf_record_copy_zone_files(struct jf_record_state *st, const char *dir,
			      struct jf_error *err)
{
	struct jf_zone_markers *markers = calloc(st->nthreads + 1, sizeof(*markers));
	unsigned i;
	int rc = 0;

	if (!markers)
		return jf_fail(err, "out of memory");
	for (i = 0; i < st->nthreads; i++) {
		markers[i].tid = st->threads[i]->tid;
		markers[i].times = st->threads[i]->marker_times;
		markers[i].count = st->threads[i]->nmarker_times;
	}
	for (i = 0; i < st->nzone_files && !rc; i++) {
		const char *base = strrchr(st->zone_files[i], '/');
		struct jf_zone_copy_result res;
		struct jf_error why = { { 0 } };
		char dest[PATH_MAX];
		uint8_t *data;
		size_t size = 0, written = 0;
		int out;

		base = base ? base + 1 : st->zone_files[i];
		snprintf(dest, sizeof(dest), "%s/%s", dir, base);
		data = jf_zone_file_read(st->zone_files[i], &size);
		if (!data) {
			jf_rec_note(st, "zone file %s cannot be read (%m); not copied", st->zone_files[i]);
			continue;
		}
		if (jf_zone_retime(data, size, markers, st->nthreads, &res, &why))
			jf_rec_note(st, "zone file %s: %s", st->zone_files[i], why.msg);
		if (!res.retimed) {
			const struct jf_zone_writes *zw = NULL;
			unsigned k;

			for (k = 0; k < st->nzone_writes; k++)
				if (!strcmp(st->zone_writes[k].path, st->zone_files[i]))
					zw = &st->zone_writes[k];
			if (zw && zw->n &&
			    jf_zone_retime_by_writes(data, size, zw->ends, zw->times, zw->n, &res,
						     &why) == 0 && res.retimed)
				jf_rec_note(st, "zone file %s: no marker calls; each record is dated by "
					    "the write() that completed it (a buffered writer's records "
					    "may date after their code ran)", st->zone_files[i]);
			else
				jf_rec_note(st, "zone file %s: no marker calls or writes matched its "
					    "records; its timestamps are the program's clock, not the "
					    "recording's", st->zone_files[i]);
		}
		else if (res.markers_unmatched)
			jf_rec_note(st, "zone file %s: %zu marker calls had no record", st->zone_files[i],
			     res.markers_unmatched);
		untraced_marker(st, data, size, st->zone_files[i]);
		out = open(dest, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (out < 0) {
			rc = jf_fail(err, "%s: cannot create: %m", dest);
		} else if (jf_zone_file_write(out, data, size, &written) ? (close(out), 1) : close(out) != 0) {
			/* A zone file cut short would stop every decode of the recording; without
			 * it the JIT code is reported missing. The program's own file is whole. */
			rc = jf_fail(err, "%s: cannot write: %m (%zu of its %zu bytes written; "
				     "removed: the recording decodes without it, its JIT code "
				     "reported missing; the program's own %s is whole)",
				     dest, written, size, st->zone_files[i]);
			unlink(dest);
		}
		free(data);
	}
	free(markers);
	return rc;
}
