/* The code map: sections, newest-wins overlap, cutting, reads across edges. */
#include "test_support.h"

#include <stdio.h>
#include <string.h>

#include "jitflow/codemap.h"
#include "codemap_pt.h" /* the decoder's libipt image of the map */

static void test_add_read_and_overlap(void **state)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err;
	uint8_t a[16], b[4], buf[16];
	uint64_t at;
	uint64_t gen;

	memset(a, 0xaa, sizeof(a));
	memset(b, 0xbb, sizeof(b));
	assert_int_equal(jf_codemap_add_bytes(map, a, sizeof(a), 0x1000, "a", &err), 0);
	gen = jf_codemap_generation(map);
	/* b lands inside a: a is split around it. */
	assert_int_equal(jf_codemap_add_bytes(map, b, sizeof(b), 0x1004, "b", &err), 0);
	assert_true(jf_codemap_generation(map) != gen);
	assert_int_equal(jf_codemap_count(map), 3);

	assert_int_equal(jf_codemap_read(map, 0x1000, buf, 16), 4); /* stops at a's end */
	assert_memory_equal(buf, a, 4);
	assert_int_equal(jf_codemap_read(map, 0x1004, buf, 16), 4);
	assert_memory_equal(buf, b, 4);
	assert_int_equal(jf_codemap_read(map, 0x1008, buf, 16), 8);
	assert_memory_equal(buf, a, 8);
	assert_int_equal(jf_codemap_read(map, 0x0fff, buf, 1), 0);
	assert_int_equal(jf_codemap_read(map, 0x1010, buf, 1), 0);

	assert_string_equal(jf_codemap_lookup(map, 0x1005, &at), "b");
	assert_int_equal(at, 0x1004);
	assert_string_equal(jf_codemap_lookup(map, 0x100f, &at), "a");
	assert_int_equal(at, 0x1008);

	/* Removing a range cuts what straddles it. */
	assert_int_equal(jf_codemap_remove(map, 0x1002, 0x8), 3);
	assert_int_equal(jf_codemap_read(map, 0x1004, buf, 1), 0);
	assert_int_equal(jf_codemap_read(map, 0x1000, buf, 16), 2);
	assert_int_equal(jf_codemap_read(map, 0x100a, buf, 16), 6);
	jf_codemap_free(map);
}

static void test_file_sections_and_bad_ranges(void **state)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err;
	char path[256];
	uint8_t data[64], buf[8];
	int i;

	for (i = 0; i < 64; i++)
		data[i] = (uint8_t)i;
	snprintf(path, sizeof(path), "%s/image.bin", jf_test_tmpdir());
	jf_test_write_file(path, data, sizeof(data));

	assert_int_equal(jf_codemap_add_file(map, path, 16, 32, 0x400000, NULL, &err), 0);
	assert_int_equal(jf_codemap_read(map, 0x400004, buf, 4), 4);
	assert_memory_equal(buf, data + 20, 4);
	assert_string_equal(jf_codemap_lookup(map, 0x400000, NULL), "image.bin");

	/* Beyond the end of the file: a clear error naming the file. */
	assert_int_equal(jf_codemap_add_file(map, path, 48, 32, 0x500000, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "image.bin"));
	assert_non_null(strstr(err.msg, "beyond the end"));
	/* A missing file. */
	assert_int_equal(jf_codemap_add_file(map, "/nonexistent/x", 0, 1, 0, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "/nonexistent/x"));
	jf_codemap_free(map);
}

/* A JIT that keeps replacing its code: libipt's section cache holds at most 65535 sections
 * and never lets one go, so the map starts new caches long before one fills (found with a
 * minivm program that loaded and freed 59562 regions: "libipt cannot add section ...
 * out of memory"). Every image still builds and reads the newest bytes. */
static void test_many_generations_of_code(void **state)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err;
	uint8_t code[16], buf[16];
	uint32_t i;

	for (i = 0; i < 70000; i++) { /* more than libipt's cache can hold */
		memset(code, (int)(i & 0xff), sizeof(code));
		memcpy(code, &i, sizeof(i));
		assert_int_equal(jf_codemap_add_bytes(map, code, sizeof(code), 0x7000, "jit", &err), 0);
		if (!jf_codemap_pt_image(map, &err))
			fail_msg("generation %u: %s", i, err.msg);
	}
	assert_int_equal(jf_codemap_count(map), 1);
	assert_int_equal(jf_codemap_read(map, 0x7000, buf, sizeof(buf)), sizeof(buf));
	assert_memory_equal(buf, code, sizeof(code));
	jf_codemap_free(map);
}

/* A fill that knows code everywhere (as a zone file's code loads not applied yet cover the
 * addresses they will be loaded at): 0xcc bytes, and the largest size it was asked for. */
static size_t fill_cc(void *ctx, uint64_t vaddr, void *buf, size_t size)
{
	size_t *largest = ctx;

	(void)vaddr;
	if (size > *largest)
		*largest = size;
	memset(buf, 0xcc, size);
	return size;
}

/* Fill answers for a gap between sections, never for the section after it: a decoder that
 * reads a page ahead from inside a gap (OpenCSD caches 256 bytes from the address it
 * asks) must get the section's bytes where the section is, not code loaded there later. */
static void test_fill_stops_at_the_next_section(void **state)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err;
	uint8_t b[16], buf[32], want[32];
	size_t largest = 0;

	memset(b, 0xbb, sizeof(b));
	assert_int_equal(jf_codemap_add_bytes(map, b, sizeof(b), 0x1010, "b", &err), 0);
	jf_codemap_set_fill(map, fill_cc, &largest);

	assert_int_equal(jf_codemap_read(map, 0x1008, buf, sizeof(buf)), 8);
	assert_int_equal(largest, 8);
	memset(want, 0xcc, 8);
	assert_memory_equal(buf, want, 8);
	assert_int_equal(jf_codemap_read(map, 0x1010, buf, sizeof(buf)), 16);
	assert_memory_equal(buf, b, 16);
	/* Past the last section, fill has the rest of the address space. */
	largest = 0;
	assert_int_equal(jf_codemap_read(map, 0x1020, buf, sizeof(buf)), sizeof(buf));
	assert_int_equal(largest, sizeof(buf));
	assert_int_equal(jf_codemap_read_mapped(map, 0x1008, buf, sizeof(buf)), 0);
	jf_codemap_set_fill(map, NULL, NULL);
	jf_codemap_free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_read_and_overlap),
		cmocka_unit_test(test_file_sections_and_bad_ranges),
		cmocka_unit_test(test_many_generations_of_code),
		cmocka_unit_test(test_fill_stops_at_the_next_section),
	};
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
