/* The fuzz input as a file, for targets whose reader opens a path (perf.data, ELF, tar,
 * JSON reports): an anonymous memory file, named /proc/self/fd/N, with exactly the input's
 * bytes. Returns its descriptor (close it when done), or -1 (the input is then skipped). */
#ifndef JITFLOW_FUZZ_INPUT_FILE_H
#define JITFLOW_FUZZ_INPUT_FILE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

static inline int fuzz_input_file(const uint8_t *data, size_t size, char *path, size_t cap)
{
	int fd = memfd_create("fuzz-input", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	snprintf(path, cap, "/proc/self/fd/%d", fd);
	return fd;
}
#endif
