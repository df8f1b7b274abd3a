/* Replays inputs through one libFuzzer target's LLVMFuzzerTestOneInput in the normal build
 * (gcc, no libFuzzer): the inputs that once crashed a target (tests/data/fuzz/TARGET/,
 * README there) run on every CI, and under ASan + UBSan in the sanitizer pass. Each input
 * is read into a buffer of exactly its size, so an overread is an ASan report there.
 *
 *   replay_TARGET FILE_OR_FOLDER...
 *
 * Exit 0 when every input was replayed; a crash or a sanitizer report fails the test. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long size;

	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "%s: cannot read\n", path);
		if (f)
			fclose(f);
		return -1;
	}
	buf = malloc(size ? (size_t)size : 1);
	if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
		fprintf(stderr, "%s: cannot read %ld bytes\n", path, size);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)size);
	free(buf);
	printf("replayed %s (%ld bytes)\n", path, size);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int replay(const char *path, int *count)
{
	struct dirent **names;
	struct stat st;
	char sub[4096];
	int i, n, rc = 0;

	if (stat(path, &st)) {
		fprintf(stderr, "%s: no such file or folder\n", path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		++*count;
		return replay_file(path);
	}
	n = scandir(path, &names, NULL, by_name);
	if (n < 0) {
		fprintf(stderr, "%s: cannot list\n", path);
		return -1;
	}
	for (i = 0; i < n; i++) {
		/* the folder's README says where each input came from: not an input */
		if (names[i]->d_name[0] != '.' && strcmp(names[i]->d_name, "README.md")) {
			snprintf(sub, sizeof(sub), "%s/%s", path, names[i]->d_name);
			if (replay(sub, count) < 0)
				rc = -1;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int i, count = 0, rc = 0;

	for (i = 1; i < argc; i++)
		if (replay(argv[i], &count) < 0)
			rc = 1;
	if (!count) {
		fprintf(stderr, "no input replayed\n");
		return 1;
	}
	return rc;
}
