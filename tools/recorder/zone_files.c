/* Zone files as files (zone_files.h). */
#include "zone_files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int jf_zone_file_name(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "jit-", 4) && strstr(base, ".dump") != NULL;
}

uint8_t *jf_zone_file_read(const char *path, size_t *size)
{
	uint8_t *data = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	for (;;) {
		if (cap - len < 65536) {
			uint8_t *bigger = realloc(data, cap = cap ? cap * 2 : 1 << 20);

			if (!bigger) {
				free(data);
				close(fd);
				errno = ENOMEM;
				return NULL;
			}
			data = bigger;
		}
		n = read(fd, data + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	*size = len;
	return data;
}

int jf_zone_file_write(int fd, const uint8_t *data, size_t size, size_t *written)
{
	*written = 0;
	while (*written < size) {
		ssize_t n = write(fd, data + *written, size - *written);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n == 0)
				errno = ENOSPC;
			return -1;
		}
		*written += (size_t)n;
	}
	return 0;
}
