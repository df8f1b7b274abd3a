/* The growing table under the fast path's caches (decoder/pt_fast_table.h): a table of
 * many megabytes asks the kernel for huge pages (a lookup per TNT packet lands on a page
 * of its own each time: with 4 KiB pages, each also missed the TLB), and is zeroed as a
 * small one is; a table grown into is in memory at once, every page of it (faulting its
 * pages in one by one as the cache first reads and then writes them cost `stat -j 16` a
 * TLB flush of every other thread per page). Linux only: the advice shows in
 * /proc/self/smaps as the "hg" flag of the mapping, residence in mincore(2); skipped
 * (exit 77) where transparent huge pages are off, or the kernel cannot fault pages in
 * for writing ahead (MADV_POPULATE_WRITE, Linux 5.14). */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pt_fast_table.h"

enum { ENTRY = 256, BIG_LOG2 = 15 }; /* 8 MiB: the TNT path table's entries */

/* Whether the kernel may give huge pages to a mapping that asks (THP not "never"). */
static int thp_possible(void)
{
	char line[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (!f)
		return 0;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	return line[0] && !strstr(line, "[never]");
}

/* The VmFlags line of the mapping of /proc/self/smaps that holds addr, into flags. */
static int mapping_flags(const void *addr, char *flags, size_t size)
{
	char line[512];
	unsigned long lo, hi, a = (unsigned long)addr;
	int in = 0, found = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = a >= lo && a < hi;
		else if (in && !strncmp(line, "VmFlags:", 8)) {
			snprintf(flags, size, "%s", line);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

static void test_big_table_asks_for_huge_pages(void **state)
{
	struct jf_fast_table t;
	const char *slots;
	char flags[512];
	size_t n, i;

	(void)state;
	assert_int_equal(jf_fast_table_init(&t, ENTRY, BIG_LOG2), 0);
	while (t.log2 < BIG_LOG2)
		assert_non_null(jf_fast_table_grow(&t, &n));
	slots = t.slots;
	/* Zeroed as calloc leaves it, from a line's start. */
	assert_int_equal((uintptr_t)slots % 64, 0);
	for (i = 0; i < ((size_t)ENTRY << BIG_LOG2); i += 4096)
		assert_int_equal(slots[i], 0);
	/* Its middle lies in whole huge pages: advised. */
	assert_true(mapping_flags(slots + ((size_t)ENTRY << BIG_LOG2) / 2, flags, sizeof(flags)));
	assert_non_null(strstr(flags, " hg"));
	jf_fast_table_fini(&t);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* Whether the kernel faults pages in for writing when asked (a page of a mapping tried). */
static int populate_possible(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ok;

	if (m == MAP_FAILED)
		return 0;
	ok = madvise(m, page, MADV_POPULATE_WRITE) == 0;
	munmap(m, page);
	return ok;
}

/* How many of the pages of [addr, addr + size) are in memory. */
static size_t resident_pages(const void *addr, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 0, i;
	uintptr_t from = (uintptr_t)addr & ~(uintptr_t)(page - 1);
	size_t pages = ((uintptr_t)addr + size - from + page - 1) / page;
	unsigned char *vec = malloc(pages);

	assert_non_null(vec);
	assert_int_equal(mincore((void *)from, pages * page, vec), 0);
	for (i = 0; i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

/* The block cache's table (48-byte entries) grown to 4 Ki entries (192 KiB) and to 32 Ki
 * (1.5 MiB): untouched, each is wholly in memory, and zeroed. */
static void test_grown_table_is_in_memory(void **state)
{
	struct jf_fast_table t;
	size_t n, page = (size_t)sysconf(_SC_PAGESIZE), size, i;
	const char *slots;

	(void)state;
	assert_int_equal(jf_fast_table_init(&t, 48, 17), 0);
	while (t.log2 < 15) {
		assert_non_null(jf_fast_table_grow(&t, &n));
		slots = t.slots;
		size = (size_t)48 << t.log2;
		assert_int_equal(resident_pages(slots, size), (size + page - 1) / page);
		for (i = 0; i < size; i += 512)
			assert_int_equal(slots[i], 0);
	}
	jf_fast_table_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_big_table_asks_for_huge_pages),
		cmocka_unit_test(test_grown_table_is_in_memory),
	};

	/* Decided before the test runs: the machine, not the code, lacks huge pages. */
	if (!thp_possible())
		return jf_test_skip_reason(JF_NEED_HARDWARE, "transparent huge pages are off "
					   "(/sys/kernel/mm/transparent_hugepage/enabled)");
	if (!populate_possible())
		return jf_test_skip_reason(JF_NEED_HARDWARE, "the kernel cannot fault pages in "
					   "ahead (madvise MADV_POPULATE_WRITE: Linux 5.14)");
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
