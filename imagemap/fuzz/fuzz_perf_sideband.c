/* libFuzzer target: a perf.data file's sideband as the jitflow command applies it while
 * decoding (jitflow/perf_images.h): MMAP/MMAP2 records load the files they name into one
 * code map per process (looked up by build-id, by recorded path, in image folders), FORK
 * copies a parent's map, exec empties it, and what cannot be loaded is listed with its
 * record's offset. The input goes through the Intel PT session with these hooks, as
 * fuzz_perf_data's does without them; the missing list is walked as a report would. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../decoder/fuzz/fuzz_input_file.h"
#include "jitflow/perf_images.h"
#include "jitflow/perf_session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Bound the work per input: an AUXTRACE payload of random bytes can hold many flows. */
enum { MAX_FLOWS = 1 << 16 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jf_perf_session_hooks hooks;
	struct jf_perf_images *imgs;
	struct jf_decoder *dec;
	struct jf_error err;
	struct jf_flow flow;
	volatile size_t sink = 0;
	char path[64];
	size_t i;
	int n = 0, fd = fuzz_input_file(data, size, path, sizeof(path));

	if (fd < 0)
		return 0;
	imgs = jf_perf_images_new();
	if (imgs) {
		memset(&hooks, 0, sizeof(hooks));
		jf_perf_images_hooks(imgs, &hooks);
		dec = jf_perf_pt_decoder_new(path, &hooks, &err);
		if (dec) {
			while (n++ < MAX_FLOWS && jf_decoder_next(dec, &flow, &err) > 0)
				;
			jf_decoder_free(dec);
		}
		for (i = 0; i < jf_perf_images_nmissing(imgs); i++)
			sink += strlen(jf_perf_images_missing(imgs, i)->name);
		(void)sink;
		jf_perf_images_free(imgs);
	}
	close(fd);
	return 0;
}
