/* libFuzzer target for the QEMU log parser: arbitrary bytes, split into lines, must never
 * crash, hang or read out of bounds; recognised blocks go through the block classifier. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "qemu_log.h"

static void on_exec(void *ctx, const struct jf_qlog_exec *e)
{
	(void)ctx;
	(void)e;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct jf_qlog_parser parser;
	struct jf_qlog_callbacks cb = { .exec = on_exec };
	const char *line = (const char *)data, *end = line + size, *nl;

	jf_qlog_init(&parser, &cb);
	while ((nl = memchr(line, '\n', (size_t)(end - line))) != NULL) {
		jf_qlog_line(&parser, line, (size_t)(nl - line));
		line = nl + 1;
	}
	jf_qlog_line(&parser, line, (size_t)(end - line));
	jf_qlog_finish(&parser);
	return 0;
}
