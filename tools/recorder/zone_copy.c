/* Zone file timestamps onto the recording's clock (see zone_copy.h). */
#include "zone_copy.h"

#include "native_fields.h"

#include <string.h>

enum {
	JITDUMP_MAGIC = 0x4A695444,     /* "JiTD" in the writer's byte order */
	JITDUMP_HEADER_MIN = 40,
	RECORD_PREFIX = 16,             /* id u32, total_size u32, timestamp u64 */
	EXT_BASE = 0x4A460000,          /* jitflow's extension record ids: EXT_BASE + n */
	EXT_PREFIX = 32,                /* + seq u64, tid u32, version u16, reserved u16 */
	EXT_CLOCK = EXT_BASE + 1,
	EXT_MARKER = EXT_BASE + 12,     /* + marker_addr u64, methods u32, reserved u32 */
	MARKER_ADDR = EXT_PREFIX, MARKER_METHODS = EXT_PREFIX + 8, MARKER_CALLS = 1,
	CLOCK_MONO_NS = 48, CLOCK_TICKS = 56,
	CODE_LOAD = 0, CODE_LOAD_TID = 20,
};

#define JITDUMP_FLAGS_ARCH_TIMESTAMP 1ull

static int is_ext(uint32_t id)
{
	return (id & 0xffff0000u) == EXT_BASE;
}

int jf_zone_retime(uint8_t *data, size_t size, const struct jf_zone_markers *threads,
		   size_t nthreads, struct jf_zone_copy_result *res, struct jf_error *err)
{
	size_t used[64] = { 0 }, off, header_size;
	uint64_t last_time = 0;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	if (nthreads > 64)
		nthreads = 64;
	if (size < JITDUMP_HEADER_MIN || jf_rec_get32(data) != JITDUMP_MAGIC)
		return jf_fail(err, "offset 0: expected a jitdump header (magic 0x4A695444 in "
				    "this machine's byte order)");
	header_size = jf_rec_get32(data + 8);
	if (header_size < JITDUMP_HEADER_MIN || header_size > size)
		return jf_fail(err, "offset 8: header size %zu outside the file", header_size);

	/* Pass 1: extension records take their marker call's time. */
	for (off = header_size; off + RECORD_PREFIX <= size;) {
		uint32_t id = jf_rec_get32(data + off), len = jf_rec_get32(data + off + 4);
		size_t i;

		if (len < RECORD_PREFIX || len > size - off) {
			rc = jf_fail(err, "offset %zu: record size %u outside the file", off, len);
			size = off; /* pass 2 stops here too */
			break;
		}
		res->records++;
		if (is_ext(id) && len >= EXT_PREFIX) {
			int tid = (int)jf_rec_get32(data + off + 24);

			for (i = 0; i < nthreads; i++) {
				if (threads[i].tid != tid)
					continue;
				if (used[i] < threads[i].count) {
					uint64_t t = threads[i].times[used[i]++];

					jf_rec_put64(data + off + 8, t);
					if (id == EXT_CLOCK && len >= CLOCK_TICKS + 8) {
						jf_rec_put64(data + off + CLOCK_MONO_NS, t);
						jf_rec_put64(data + off + CLOCK_TICKS, t);
					}
					res->retimed++;
				}
				break;
			}
		}
		off += len;
	}
	for (size_t i = 0; i < nthreads; i++)
		res->markers_unmatched += threads[i].count - used[i];
	if (!res->retimed)
		return rc;

	/* Pass 2: a perf record takes the time of the next retimed extension record of its
	 * thread (CODE_LOAD has a tid) or of any thread; at the end, the last time seen. */
	for (off = header_size; off + RECORD_PREFIX <= size;) {
		uint32_t id = jf_rec_get32(data + off), len = jf_rec_get32(data + off + 4);

		if (!is_ext(id)) {
			int tid = id == CODE_LOAD && len >= 24 ? (int)jf_rec_get32(data + off + CODE_LOAD_TID) : -1;
			uint64_t t = 0;
			size_t next;

			for (next = off + len; next + RECORD_PREFIX <= size;) {
				uint32_t nid = jf_rec_get32(data + next), nlen = jf_rec_get32(data + next + 4);

				if (nlen < RECORD_PREFIX || nlen > size - next)
					break;
				if (is_ext(nid) && nlen >= EXT_PREFIX &&
				    (tid < 0 || (int)jf_rec_get32(data + next + 24) == tid)) {
					t = jf_rec_get64(data + next + 8);
					break;
				}
				next += nlen;
			}
			if (!t)
				t = last_time;
			jf_rec_put64(data + off + 8, t);
		}
		last_time = jf_rec_get64(data + off + 8);
		off += len;
	}
	/* Header: perf clock nanoseconds now, not TSC; its timestamp is the first record's. */
	jf_rec_put64(data + 32, jf_rec_get64(data + 32) & ~JITDUMP_FLAGS_ARCH_TIMESTAMP);
	if (header_size + RECORD_PREFIX <= size)
		jf_rec_put64(data + 24, jf_rec_get64(data + header_size + 8));
	return rc;
}

int jf_zone_retime_by_writes(uint8_t *data, size_t size, const uint64_t *ends,
			     const uint64_t *times, size_t n, struct jf_zone_copy_result *res,
			     struct jf_error *err)
{
	size_t off, header_size, w = 0;

	memset(res, 0, sizeof(*res));
	if (size < JITDUMP_HEADER_MIN || jf_rec_get32(data) != JITDUMP_MAGIC)
		return jf_fail(err, "offset 0: expected a jitdump header (magic 0x4A695444 in "
				    "this machine's byte order)");
	header_size = jf_rec_get32(data + 8);
	if (header_size < JITDUMP_HEADER_MIN || header_size > size)
		return jf_fail(err, "offset 8: header size %zu outside the file", header_size);
	if (!n)
		return 0;
	for (off = header_size; off + RECORD_PREFIX <= size;) {
		uint32_t id = jf_rec_get32(data + off), len = jf_rec_get32(data + off + 4);

		if (len < RECORD_PREFIX || len > size - off)
			return jf_fail(err, "offset %zu: record size %u outside the file", off, len);
		while (w + 1 < n && ends[w] < off + len)
			w++;
		jf_rec_put64(data + off + 8, times[w]);
		if (id == EXT_CLOCK && len >= CLOCK_TICKS + 8) {
			jf_rec_put64(data + off + CLOCK_MONO_NS, times[w]);
			jf_rec_put64(data + off + CLOCK_TICKS, times[w]);
		}
		res->records++;
		res->retimed++;
		off += len;
	}
	jf_rec_put64(data + 32, jf_rec_get64(data + 32) & ~JITDUMP_FLAGS_ARCH_TIMESTAMP);
	jf_rec_put64(data + 24, times[0]);
	return 0;
}

/* The MARKER records of a well-formed prefix of the file, one at a time: the offset of the
 * next one at or after *off, or 0 when there is none. */
static size_t next_marker(const uint8_t *data, size_t size, size_t *off)
{
	if (*off == 0) {
		if (size < JITDUMP_HEADER_MIN || jf_rec_get32(data) != JITDUMP_MAGIC)
			return 0;
		*off = jf_rec_get32(data + 8);
	}
	while (*off + RECORD_PREFIX <= size) {
		size_t at = *off;
		uint32_t id = jf_rec_get32(data + at), len = jf_rec_get32(data + at + 4);

		if (len < RECORD_PREFIX || len > size - at)
			return 0;
		*off += len;
		if (id == EXT_MARKER && len >= MARKER_METHODS + 4)
			return at;
	}
	return 0;
}

uint64_t jf_zone_marker_calls_addr(const uint8_t *data, size_t size)
{
	size_t off = 0, at;

	while ((at = next_marker(data, size, &off)))
		if (jf_rec_get32(data + at + MARKER_METHODS) & MARKER_CALLS)
			return jf_rec_get64(data + at + MARKER_ADDR);
	return 0;
}

size_t jf_zone_clear_marker_calls(uint8_t *data, size_t size)
{
	size_t off = 0, at, cleared = 0;

	while ((at = next_marker(data, size, &off))) {
		uint32_t methods = jf_rec_get32(data + at + MARKER_METHODS);

		if (methods & MARKER_CALLS) {
			methods &= ~(uint32_t)MARKER_CALLS;
			memcpy(data + at + MARKER_METHODS, &methods, 4);
			cleared++;
		}
	}
	return cleared;
}
