/* libFuzzer target: what `jitflow warmup` and `jitflow merge` read. The input, cut at its
 * first NUL byte: a report (`jitflow report --json`, or a warm-up report to merge), given
 * to both commands as a user runs them (--json); then a timeline (`jitflow timeline`),
 * read for the events at the changepoints of a fixed execution of three segments. Any
 * input must give a report or a clear error. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../decoder/fuzz/fuzz_input_file.h"
#include "commands.h"
#include "warmup_events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char execution[] =
	"{\"name\":\"e\",\"iterations\":30,\"class\":\"warmup\",\"segments\":["
	"{\"from\":0,\"to\":0,\"mean\":9,\"jitted_share\":0},"
	"{\"from\":1,\"to\":9,\"mean\":5,\"jitted_share\":0.5},"
	"{\"from\":10,\"to\":29,\"mean\":2,\"jitted_share\":1}],"
	"\"changepoints\":[{\"iteration\":1},{\"iteration\":10}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t first = nul ? (size_t)(nul - data) : size;
	char report[64], timeline[64];
	int fd_report, fd_timeline = -1;

	fd_report = fuzz_input_file(data, first, report, sizeof(report));
	if (fd_report >= 0) {
		char *warmup[] = { "warmup", "--json", report, NULL };
		char *merge[] = { "merge", report, NULL };

		(void)jf_cmd_warmup(3, warmup);
		(void)jf_cmd_merge(2, merge);
		fflush(stdout);
		close(fd_report);
	}
	if (nul)
		fd_timeline = fuzz_input_file(nul + 1, size - first - 1, timeline, sizeof(timeline));
	if (fd_timeline >= 0) {
		struct jf_error err = { { 0 } };
		cJSON *e = cJSON_Parse(execution);

		if (e)
			(void)jf_warmup_add_events(e, timeline, &err);
		cJSON_Delete(e);
		close(fd_timeline);
	}
	return 0;
}
