#include "jitflow/mapped_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int jf_map_file(struct jf_mapped_file *file, const char *path, struct jf_error *err)
{
	struct stat st;
	void *data = NULL;
	int fd;

	memset(file, 0, sizeof(*file));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return jf_fail(err, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return jf_fail(err, "%s: cannot stat: %s", path, strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return jf_fail(err, "%s: not a regular file", path);
	}
	if (st.st_size > 0) {
		data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (data == MAP_FAILED) {
			int e = errno;
			close(fd);
			return jf_fail(err, "%s: cannot map: %s", path, strerror(e));
		}
	}
	close(fd);
	file->data = data;
	file->size = (size_t)st.st_size;
	file->path = strdup(path);
	if (!file->path) {
		jf_unmap_file(file);
		return jf_fail(err, "%s: out of memory", path);
	}
	return 0;
}

void jf_unmap_file(struct jf_mapped_file *file)
{
	if (file->data)
		munmap((void *)file->data, file->size);
	free(file->path);
	memset(file, 0, sizeof(*file));
}

void jf_mapped_file_sequential(const struct jf_mapped_file *file)
{
	if (file->data)
		madvise((void *)file->data, file->size, MADV_SEQUENTIAL);
}

void jf_mapped_release(const uint8_t *data, uint64_t from, uint64_t to)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t first = ((uintptr_t)data + from + page - 1) & ~(page - 1);
	uintptr_t last = ((uintptr_t)data + to) & ~(page - 1);

	if (last > first)
		madvise((void *)first, last - first, MADV_DONTNEED);
}
