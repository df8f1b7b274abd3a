/* A tool's view of the installed libjitflow: decode an Intel PT perf.data through the
 * public headers alone (perf session + perf images) and print the counts that
 * `jitflow stat --json` prints, as JSON, for the install test to compare.
 * usage: decode_perf PERF.DATA IMAGE_DIR */
#include <inttypes.h>
#include <stdio.h>

#include <jitflow/decoder.h>
#include <jitflow/perf_images.h>
#include <jitflow/perf_session.h>

int main(int argc, char **argv)
{
	struct jf_error err = { 0 };
	struct jf_perf_session_hooks hooks;
	struct jf_perf_images *imgs;
	struct jf_decoder *dec;
	const struct jf_decode_stats *st;
	struct jf_flow flow;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: decode_perf PERF.DATA IMAGE_DIR\n");
		return 2;
	}
	imgs = jf_perf_images_new();
	if (!imgs || jf_perf_images_add_dir(imgs, argv[2], &err) < 0) {
		fprintf(stderr, "decode_perf: %s\n", imgs ? err.msg : "out of memory");
		return 1;
	}
	jf_perf_images_hooks(imgs, &hooks);
	dec = jf_perf_pt_decoder_new(argv[1], &hooks, &err);
	if (!dec) {
		fprintf(stderr, "decode_perf: %s\n", err.msg);
		return 1;
	}
	while ((rc = jf_decoder_next(dec, &flow, &err)) > 0)
		;
	if (rc < 0) {
		fprintf(stderr, "decode_perf: %s\n", err.msg);
		return 1;
	}
	st = jf_decoder_stats(dec);
	printf("{\"trace_bytes\":%" PRIu64 ",\"instructions\":%" PRIu64 ",\"blocks\":%" PRIu64
	       ",\"events\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"missing_images\":%zu}\n",
	       st->trace_bytes, st->insns, st->blocks, st->events, st->errors,
	       jf_perf_images_nmissing(imgs));
	jf_decoder_free(dec);
	jf_perf_images_free(imgs);
	return 0;
}
