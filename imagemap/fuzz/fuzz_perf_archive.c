/* libFuzzer target: a `perf archive` tarball (--archive, or PERF.DATA.tar.bz2 beside a
 * recording) on arbitrary bytes: unpacked with libarchive into a temporary folder under
 * TMPDIR (names outside the folder, absolute links, too much data refused), looked up as
 * a build-id cache, and removed. A finding is a crash, a leak, or a folder that removal
 * leaves behind. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../decoder/fuzz/fuzz_input_file.h"
#include "jitflow/buildid_cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], dir[4096], found[4096];
	struct jf_error err;
	int fd = fuzz_input_file(data, size, path, sizeof(path));

	if (fd < 0)
		return 0;
	if (jf_perf_archive_unpack(path, dir, sizeof(dir), &err) == 0) {
		(void)jf_buildid_cache_find(dir, "0123456789abcdef0123456789abcdef01234567",
					    "/bin/true", found, sizeof(found));
		jf_perf_archive_remove(dir);
		if (access(dir, F_OK) == 0)
			abort(); /* the folder was not removed: a file escaped the walk */
	}
	close(fd);
	return 0;
}
