/* libFuzzer target: `jitflow check`'s two inputs, a report and its baseline (the JSON of
 * `jitflow report --json`), cut from the input at its first NUL byte. Both go through the
 * command as a user runs it (--json, so only a summary line is printed): parsed, their
 * traces and guards matched by id and compared. Any input must give a verdict or a clear
 * error. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../decoder/fuzz/fuzz_input_file.h"
#include "commands.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t first = nul ? (size_t)(nul - data) : size;
	char now[64], base[64];
	int fd_now, fd_base;

	fd_now = fuzz_input_file(data, first, now, sizeof(now));
	fd_base = nul ? fuzz_input_file(nul + 1, size - first - 1, base, sizeof(base))
		      : fuzz_input_file(data, first, base, sizeof(base));
	if (fd_now >= 0 && fd_base >= 0) {
		char *argv[] = { "check", "--json", now, "--baseline", base, NULL };

		(void)jf_cmd_check(5, argv);
		fflush(stdout);
	}
	if (fd_now >= 0)
		close(fd_now);
	if (fd_base >= 0)
		close(fd_base);
	return 0;
}
