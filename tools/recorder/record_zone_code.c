/* The code a runtime's zone file describes, as its writes complete (record_zone_code.h). */
#include "record_zone_code.h"

#include <fcntl.h>
#include <unistd.h>

#include "jitflow/zone_format.h"
#include "native_fields.h"
#include "record_code_changes.h"
#include "record_internal.h"

enum {
	FIELDS = 64,        /* the fixed fields read of each record: enough for all four */
	UNREADABLE = 1,     /* zw->parsed when the file is no jitdump this code can read */
};

/* The code range record r (its first FIELDS bytes, n of them read) puts bytes in. */
static void describe(struct jf_record_state *st, const uint8_t *r, size_t n)
{
	const uint8_t *ext = r + JF_JITDUMP_PREFIX_SIZE + JF_ZONE_EXT_PREFIX_SIZE;

	switch (jf_rec_get32(r)) {
	case JF_JITDUMP_CODE_LOAD: /* pid, tid, vma, code_addr, code_size */
		if (n >= JF_JITDUMP_PREFIX_SIZE + 32)
			jf_rec_code_described(st, jf_rec_get64(r + JF_JITDUMP_PREFIX_SIZE + 16),
					      jf_rec_get64(r + JF_JITDUMP_PREFIX_SIZE + 24));
		break;
	case JF_JITDUMP_CODE_MOVE: /* pid, tid, vma, old, new, code_size */
		if (n >= JF_JITDUMP_PREFIX_SIZE + 40)
			jf_rec_code_described(st, jf_rec_get64(r + JF_JITDUMP_PREFIX_SIZE + 24),
					      jf_rec_get64(r + JF_JITDUMP_PREFIX_SIZE + 32));
		break;
	case JF_ZONE_REGION_MOVE: /* old, new, size */
		if (n >= (size_t)(ext - r) + 24)
			jf_rec_code_described(st, jf_rec_get64(ext + 8), jf_rec_get64(ext + 16));
		break;
	case JF_ZONE_PATCH: /* addr, size u32, flags u32 */
		if (n >= (size_t)(ext - r) + 16 && !(jf_rec_get32(ext + 12) & JF_PATCH_OBSERVED))
			jf_rec_code_described(st, jf_rec_get64(ext), jf_rec_get32(ext + 8));
		break;
	default:
		break;
	}
}

void jf_rec_zone_code_written(struct jf_record_state *st, struct jf_zone_writes *zw)
{
	uint8_t r[FIELDS];
	int fd;

	if (zw->parsed == UNREADABLE || !st->code_changes)
		return;
	fd = open(zw->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (!zw->parsed) {
		if (zw->size < JF_JITDUMP_HEADER_SIZE)
			goto out;
		if (pread(fd, r, 12, 0) != 12 || jf_rec_get32(r) != JF_JITDUMP_MAGIC ||
		    jf_rec_get32(r + 8) < JF_JITDUMP_HEADER_SIZE) {
			zw->parsed = UNREADABLE;
			goto out;
		}
		zw->parsed = jf_rec_get32(r + 8);
	}
	/* Whole records only: one a write left unfinished is read once the next ends it. */
	while (zw->parsed + JF_JITDUMP_PREFIX_SIZE <= zw->size) {
		uint64_t left = zw->size - zw->parsed;
		ssize_t n = pread(fd, r, left < FIELDS ? (size_t)left : FIELDS, (off_t)zw->parsed);
		uint32_t total;

		if (n < (ssize_t)JF_JITDUMP_PREFIX_SIZE)
			break;
		total = jf_rec_get32(r + 4);
		if (total < JF_JITDUMP_PREFIX_SIZE) {
			zw->parsed = UNREADABLE;
			break;
		}
		if (total > left)
			break;
		describe(st, r, (size_t)n < total ? (size_t)n : total);
		zw->parsed += total;
	}
out:
	close(fd);
}
