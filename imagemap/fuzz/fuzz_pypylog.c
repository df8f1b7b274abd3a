/* libFuzzer target: the PYPYLOG reader on arbitrary text. Every dump, trace and op it
 * returns is touched, so a bad pointer or length shows under the sanitizers. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "jitflow/pypylog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jf_pypylog *log;
	struct jf_error err;
	volatile size_t sink = 0;
	size_t i;

	if (jf_pypylog_parse(&log, (const char *)data, size, "fuzz.log", &err))
		return 0;
	for (i = 0; i < log->ndumps; i++)
		if (log->dumps[i].size)
			sink += log->dumps[i].bytes[log->dumps[i].size - 1];
	for (i = 0; i < log->ntraces; i++)
		sink += strlen(log->traces[i].name) + log->traces[i].first_op + log->traces[i].nops;
	for (i = 0; i < log->nops; i++)
		sink += strlen(log->ops[i].name) + (log->ops[i].code ? strlen(log->ops[i].code) : 0);
	(void)sink;
	jf_pypylog_free(log);
	return 0;
}
