/* libFuzzer target: a recording folder as `jitflow record` writes it and every analysis
 * command opens it (jf_cli_open_recording): manifest.json (synthetic timing, the IP
 * filter and its counts), the zone files (jit-*.dump), PyPy's pypylog.log, the
 * recorder's jit-code.txt and a saved code piece (code/NAME@ADDRESS.bin). The input is cut
 * at NUL bytes into those five files, in that order (a missing part: the file is absent);
 * the folder is made once under TMPDIR and written again for each input. Opening must give
 * the inputs or a clear error. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_inputs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = { "manifest.json", "jit-1.dump", "pypylog.log",
				     "jit-code.txt", "code/fuzz@401000.bin",
				     "observed-code-1.dump" };
enum { NPARTS = sizeof(names) / sizeof(names[0]) };
static char dir[4096];

static void put(const char *name, const uint8_t *p, size_t len, int present)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	if (!present || !(f = fopen(path, "wb")))
		return;
	if (len)
		fwrite(p, 1, len, f);
	fclose(f);
}

/* The folder goes at a normal exit (the replay test's; libFuzzer's own ends skip it, and
 * campaign.sh gives the fuzzer a TMPDIR of its own). */
static void remove_dir(void)
{
	char path[4200];
	int i;

	for (i = 0; i < NPARTS; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/code", dir);
	rmdir(path);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jf_cli_inputs in;
	struct jf_error err;
	const uint8_t *end = data + size;
	char sub[4200];
	int i;

	if (!dir[0]) {
		const char *tmp = getenv("TMPDIR");

		snprintf(dir, sizeof(dir), "%s/fuzz-recording-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir))
			abort();
		snprintf(sub, sizeof(sub), "%s/code", dir);
		if (mkdir(sub, 0700))
			abort();
		atexit(remove_dir);
	}
	for (i = 0; i < NPARTS; i++) {
		const uint8_t *nul = data < end ? memchr(data, 0, (size_t)(end - data)) : NULL;
		const uint8_t *stop = nul ? nul : end;

		put(names[i], data, (size_t)(stop - data), data < end || i == 0);
		data = nul ? nul + 1 : end;
	}
	jf_cli_inputs_init(&in);
	(void)jf_cli_open_recording(&in, dir, &err);
	jf_cli_inputs_fini(&in);
	return 0;
}
