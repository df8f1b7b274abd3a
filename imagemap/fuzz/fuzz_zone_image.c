/* libFuzzer target: a zone file (arbitrary bytes) applied to a code map through the zone
 * image: loads, frees, moves (of patched code too), patches, lookups. The file goes
 * through an in-memory file, since zone images map their files by path. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jitflow/zone_image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jf_codemap *map;
	struct jf_zone_image *zi;
	struct jf_error err;
	char path[64];
	int fd = memfd_create("fuzz-zone", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	map = jf_codemap_new();
	zi = jf_zone_image_new(map, NULL, &err);
	if (zi && jf_zone_image_add_file(zi, path, &err) == 0 &&
	    jf_zone_image_apply_all(zi, &err) == 0) {
		uint64_t start;
		uint32_t version;

		jf_zone_image_lookup(zi, 0x7f0000000000ull, &start, &version);
	}
	jf_zone_image_free(zi);
	jf_codemap_free(map);
	close(fd);
	return 0;
}
