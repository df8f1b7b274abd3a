/* libFuzzer target: the input is a whole CoreSight (cs_etm) perf.data file, decoded as
 * `jitflow decode` decodes one: the AUXTRACE_INFO record's sources, the time schedule of
 * the AUXTRACE buffers, each buffer through OpenCSD over an empty code map, the losses
 * (AUX flags, LOST) and the file's cut. fuzz_perf_cs_etm covers the info words alone;
 * this one covers the records around them and the decode of every buffer. OpenCSD 1.3.3's
 * own crashes (docs/fuzzing.md) are reached here too: run in fork mode. */
#include "jitflow/perf_cs_etm.h"
#include "fuzz_input_file.h"

#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Decode in this process, not in jitflow's isolating child (jitflow/isolate.h): libFuzzer
 * only sees coverage and crashes of its own process. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("JITFLOW_ISOLATE", "0", 1);
	return 0;
}

/* Bound the work per input: one AUXTRACE buffer of random bytes can hold many flows. */
enum { MAX_FLOWS = 1 << 16 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	struct jf_error err;
	struct jf_decoder *dec;
	struct jf_flow flow;
	uint32_t type;
	int n = 0, fd = fuzz_input_file(data, size, path, sizeof(path));

	if (fd < 0)
		return 0;
	(void)jf_perf_auxtrace_type(path, &type, &err);
	dec = jf_perf_cs_decoder_new(path, NULL, &err);
	if (dec) {
		while (n++ < MAX_FLOWS && jf_decoder_next(dec, &flow, &err) > 0)
			;
		jf_decoder_free(dec);
	}
	close(fd);
	return 0;
}
