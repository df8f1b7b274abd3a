/* The emitter on its own: the file it writes walks as jitdump (header, records whose sizes
 * chain to the end of the file), the executable marker mapping exists while it is open,
 * sequence numbers are unique under concurrent writers and increase in each thread's
 * records (threads write their own buffers, so the file interleaves them), and the marker
 * record names this process's jf_emitter_marker. The byte-exact round trip through the
 * reader is in test_zone_reader.c; perf's acceptance in test_zone_perf.c. */
#include "test_support.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jitflow/emitter.h"
#include "jitflow/zone_format.h"

static uint32_t u32_at(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t u64_at(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static int file_is_mapped_executable(const char *path)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[4096];
	int found = 0;

	assert_non_null(maps);
	while (fgets(line, sizeof(line), maps)) {
		char perms[8];

		if (strstr(line, path) && sscanf(line, "%*s %7s", perms) == 1 && perms[2] == 'x')
			found = 1;
	}
	fclose(maps);
	return found;
}

static void test_single_thread_file_layout(void **state)
{
	const char *dir = jf_test_tmpdir();
	struct jf_emitter *em = jf_emitter_open(dir, JF_EMIT_CLOCK_MONOTONIC);
	static const uint8_t code[] = { 0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3 };
	struct jf_region r = { .name = "trace 1", .addr = 0x7f0000001000, .code = code,
			       .size = sizeof(code), .kind = JF_REGION_TRACE, .trace_id = 1 };
	char path[512];
	uint8_t *data;
	size_t size, off;
	uint32_t ids[16];
	unsigned n = 0;
	uint64_t last_seq = 0;

	assert_non_null(em);
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	assert_string_equal(jf_emitter_path(em), path);
	assert_true(file_is_mapped_executable(path));

	/* CLOCK = 1, MARKER = 2, INTERP_RANGE (the emitter's own code) = 3 */
	assert_int_equal(jf_emit_region_load(em, &r), 4);
	assert_int_equal(jf_emit_event(em, JF_EVENT_ITERATION, 7), 5);
	jf_emitter_close(em);
	assert_false(file_is_mapped_executable(path));

	data = jf_test_read_file(path, &size);
	assert_true(size >= JF_JITDUMP_HEADER_SIZE);
	assert_int_equal(u32_at(data), JF_JITDUMP_MAGIC);
	assert_int_equal(u32_at(data + 4), 1);
	assert_int_equal(u32_at(data + 8), 40);
	assert_int_equal(u32_at(data + 20), (uint32_t)getpid());
	assert_int_equal(u64_at(data + 32), 0); /* CLOCK_MONOTONIC: no ARCH_TIMESTAMP */
	for (off = 40; off < size; ) {
		uint32_t id = u32_at(data + off), total = u32_at(data + off + 4);

		assert_true(total >= 16 && off + total <= size);
		assert_true(n < 16);
		ids[n++] = id;
		if (id >= JF_ZONE_ID_BASE) {
			uint64_t seq = u64_at(data + off + 16);

			assert_true(seq > last_seq);
			last_seq = seq;
			assert_int_equal(u32_at(data + off + 28) & 0xffff, JF_ZONE_EXT_VERSION);
		}
		if (id == JF_ZONE_MARKER)
			assert_int_equal(u64_at(data + off + 32),
					 (uint64_t)(uintptr_t)&jf_emitter_marker);
		if (id == JF_JITDUMP_CODE_LOAD) {
			/* the code bytes end the record, after the name */
			assert_int_equal(u64_at(data + off + 40), sizeof(code));
			assert_string_equal((const char *)data + off + 56, "trace 1");
			assert_memory_equal(data + off + total - sizeof(code), code, sizeof(code));
		}
		off += total;
	}
	assert_int_equal(off, size);
	assert_int_equal(n, 8);
	assert_int_equal(ids[0], JF_ZONE_CLOCK);
	assert_int_equal(ids[1], JF_ZONE_MARKER);
	assert_int_equal(ids[2], JF_ZONE_INTERP_RANGE);
	assert_int_equal(ids[3], JF_JITDUMP_CODE_LOAD);
	assert_int_equal(ids[4], JF_ZONE_REGION_LOAD);
	assert_int_equal(ids[5], JF_ZONE_EVENT);
	assert_int_equal(ids[6], JF_ZONE_CLOCK);
	assert_int_equal(ids[7], JF_JITDUMP_CODE_CLOSE);
	free(data);
}

enum { THREADS = 4, PER_THREAD = 5000 };

static void *writer(void *arg)
{
	struct jf_emitter *em = arg;
	uint64_t prev = 0;
	int i;

	for (i = 0; i < PER_THREAD; i++) {
		uint64_t seq = jf_emit_event(em, JF_EVENT_ITERATION, (uint64_t)i);

		if (seq <= prev)
			return (void *)1;
		prev = seq;
	}
	return NULL;
}

static void test_threads_get_unique_increasing_seqs(void **state)
{
	char dir[256];
	struct jf_emitter *em;
	pthread_t t[THREADS];
	uint8_t *data, *seen;
	size_t size, off, events = 0;
	struct { uint32_t tid; uint64_t last; } last[THREADS + 1];
	size_t nlast = 0, j, runs = 0;
	uint64_t prev_seq = 0;
	int i;

	snprintf(dir, sizeof(dir), "%s/threads", jf_test_tmpdir());
	mkdir(dir, 0755);
	em = jf_emitter_open(dir, JF_EMIT_CLOCK_TSC);
	assert_non_null(em);
	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, writer, em), 0);
	for (i = 0; i < THREADS; i++) {
		void *rc;

		pthread_join(t[i], &rc);
		assert_null(rc);
	}
	assert_int_equal(jf_emitter_flush(em), 0);
	data = jf_test_read_file(jf_emitter_path(em), &size);
	seen = calloc(THREADS * PER_THREAD + 8, 1);
	assert_int_equal(u64_at(data + 32), JF_JITDUMP_FLAG_ARCH_TIMESTAMP);
	for (off = 40; off < size; ) {
		uint32_t id = u32_at(data + off), total = u32_at(data + off + 4);
		uint64_t seq = u64_at(data + off + 16);

		uint32_t tid = u32_at(data + off + 24);

		assert_true(total >= 32 && off + total <= size);
		/* each thread's records in seq order; the file as a whole need not be */
		for (j = 0; j < nlast && last[j].tid != tid; j++)
			;
		if (j == nlast) {
			assert_true(nlast < THREADS + 1);
			last[nlast].tid = tid;
			last[nlast++].last = 0;
		}
		assert_true(seq > last[j].last);
		last[j].last = seq;
		runs += seq < prev_seq;
		prev_seq = seq;
		if (id == JF_ZONE_EVENT) {
			events++;
			assert_true(seq < THREADS * PER_THREAD + 8);
			assert_false(seen[seq]);
			seen[seq] = 1;
		}
		off += total;
	}
	assert_int_equal(events, THREADS * PER_THREAD);
	assert_int_equal(nlast, THREADS + 1); /* the writers and the opening thread */
	print_message("%zu places where the file goes back in seq\n", runs);
	free(seen);
	free(data);
	jf_emitter_close(em);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_thread_file_layout),
		cmocka_unit_test(test_threads_get_unique_increasing_seqs),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
