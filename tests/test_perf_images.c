/* The default perf session hooks (imagemap/perf_sideband.c), driven with records as the
 * reader returns them: executable MMAP2s load file sections (clamped to the file), FORK of
 * a new process copies its parent's mappings, a new thread shares them, exec empties the
 * process's map, non-executable and unloadable mappings are handled as documented. */
#include "test_support.h"

#include <stdio.h>
#include <string.h>

#include "jitflow/perf_images.h"

static const uint8_t code[11] = { 0xb9, 3, 0, 0, 0, 0xff, 0xc9, 0x75, 0xfc, 0xff, 0xe0 };

static struct jf_perf_record mmap2(int32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff,
				   uint32_t prot, const char *file, uint64_t offset)
{
	struct jf_perf_record r;

	memset(&r, 0, sizeof(r));
	r.type = JF_PERF_RECORD_MMAP2;
	r.offset = offset;
	r.u.mmap.pid = r.u.mmap.tid = pid;
	r.u.mmap.addr = addr;
	r.u.mmap.len = len;
	r.u.mmap.pgoff = pgoff;
	r.u.mmap.prot = prot;
	r.u.mmap.exec = (prot & 4) != 0;
	r.u.mmap.filename = file;
	return r;
}

static struct jf_perf_record fork_rec(int32_t pid, int32_t ppid)
{
	struct jf_perf_record r;

	memset(&r, 0, sizeof(r));
	r.type = JF_PERF_RECORD_FORK;
	r.u.fork.pid = r.u.fork.tid = pid;
	r.u.fork.ppid = r.u.fork.ptid = ppid;
	return r;
}

static void test_process_maps(void **state)
{
	struct jf_perf_images *imgs = jf_perf_images_new();
	struct jf_perf_session_hooks h;
	struct jf_perf_record r;
	char path[512];
	uint8_t buf[16];

	snprintf(path, sizeof(path), "%s/code.bin", jf_test_tmpdir());
	jf_test_write_file(path, code, sizeof(code));
	jf_perf_images_hooks(imgs, &h);

	/* 0x1000 bytes mapped from an 11-byte file: only the file's bytes are code. */
	r = mmap2(100, 0x400000, 0x1000, 0, 5, path, 1000);
	h.on_record(h.ctx, &r);
	assert_int_equal(jf_perf_images_loaded(imgs), 1);
	assert_int_equal(jf_codemap_read(h.codemap_for_pid(h.ctx, 100), 0x400000, buf, 16), 11);
	assert_memory_equal(buf, code, 11);
	assert_int_equal(jf_codemap_read(h.codemap_for_pid(h.ctx, 100), 0x40000b, buf, 1), 0);
	/* From an offset: the bytes there. */
	r = mmap2(100, 0x500000, 0x1000, 5, 5, path, 1100);
	h.on_record(h.ctx, &r);
	assert_int_equal(jf_codemap_read(h.codemap_for_pid(h.ctx, 100), 0x500000, buf, 16), 6);
	assert_memory_equal(buf, code + 5, 6);
	/* Not executable: ignored. */
	r = mmap2(100, 0x600000, 0x1000, 0, 3, path, 1200);
	h.on_record(h.ctx, &r);
	assert_int_equal(jf_codemap_read(h.codemap_for_pid(h.ctx, 100), 0x600000, buf, 1), 0);
	/* Beyond the end of the file: reported with its record's offset. */
	r = mmap2(100, 0x700000, 0x1000, 0x2000, 5, path, 1300);
	h.on_record(h.ctx, &r);
	assert_int_equal(jf_perf_images_nmissing(imgs), 1);
	assert_int_equal(jf_perf_images_missing(imgs, 0)->record_offset, 1300);
	assert_non_null(strstr(jf_perf_images_missing(imgs, 0)->reason, "only 11 bytes"));

	/* A new thread shares; a new process gets a copy of its parent's mappings. */
	r = fork_rec(100, 100);
	h.on_record(h.ctx, &r);
	r = fork_rec(200, 100);
	h.on_record(h.ctx, &r);
	assert_int_equal(jf_codemap_read(h.codemap_for_pid(h.ctx, 200), 0x400000, buf, 16), 11);
	assert_int_equal(jf_codemap_count(h.codemap_for_pid(h.ctx, 200)), 2);
	/* exec in the child empties its map only. */
	memset(&r, 0, sizeof(r));
	r.type = JF_PERF_RECORD_COMM;
	r.u.comm.pid = r.u.comm.tid = 200;
	r.u.comm.comm = "child";
	r.u.comm.exec = 1;
	h.on_record(h.ctx, &r);
	assert_int_equal(jf_codemap_count(h.codemap_for_pid(h.ctx, 200)), 0);
	assert_int_equal(jf_codemap_count(h.codemap_for_pid(h.ctx, 100)), 2);
	/* An unknown process starts empty. */
	assert_int_equal(jf_codemap_count(h.codemap_for_pid(h.ctx, 300)), 0);
	jf_perf_images_free(imgs);
}

static void test_one_map_and_substitutes(void **state)
{
	struct jf_perf_images *imgs = jf_perf_images_new();
	struct jf_codemap *map = jf_codemap_new();
	struct jf_perf_session_hooks h;
	struct jf_perf_record r;
	char path[512];
	uint8_t buf[16];

	snprintf(path, sizeof(path), "%s/vdso.bin", jf_test_tmpdir());
	jf_test_write_file(path, code, sizeof(code));
	jf_perf_images_use_one_map(imgs, map);
	assert_int_equal(jf_perf_images_add_file(imgs, "[vdso]", path, NULL), 0);
	jf_perf_images_hooks(imgs, &h);
	r = mmap2(100, 0x7fff0000, 0x2000, 0, 5, "[vdso]", 10);
	h.on_record(h.ctx, &r);
	r = mmap2(300, 0x7ffe0000, 0x2000, 0, 5, "//anon", 20);
	h.on_record(h.ctx, &r);
	/* Every process's mappings in the caller's one map. */
	assert_ptr_equal(h.codemap_for_pid(h.ctx, 100), map);
	assert_ptr_equal(h.codemap_for_pid(h.ctx, 555), map);
	assert_int_equal(jf_codemap_read(map, 0x7fff0000, buf, 16), 11);
	assert_int_equal(jf_perf_images_nmissing(imgs), 1);
	assert_string_equal(jf_perf_images_missing(imgs, 0)->name, "//anon");
	jf_perf_images_free(imgs);
	jf_codemap_free(map); /* the caller's */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_process_maps),
		cmocka_unit_test(test_one_map_and_substitutes),
	};
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
