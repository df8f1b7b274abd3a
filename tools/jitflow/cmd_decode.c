/* jitflow decode: the decoded flow, one line per instruction (or block, or event). */
#include <stdio.h>
#include <string.h>

#include "cli_inputs.h"
#include "cli_output.h"
#include "commands.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: jitflow decode INPUTS [--blocks] [--asm] [--format=text|jsonl]\n\n"
		"Decode a trace. By default, print one line per executed instruction: its address\n"
		"as 16 hex digits; events and errors as lines in square brackets, as libipt's\n"
		"ptxed --no-inst prints them (errors: [trace offset, ip: error: message]).\n\n"
		"  --blocks          one line per block: start, last, instructions, how it ended\n"
		"  --asm             add the disassembly (capstone) to instruction lines\n"
		"  --format=jsonl    one JSON object per line, with a \"kind\" field (insn, block,\n"
		"                    range, event, lost, error)\n\n%s",
		jf_cli_inputs_help);
}

static int print_one(void *ctx, const struct jf_flow *f, struct jf_error *err)
{
	return jf_print_flow(ctx, f) < 0 ? jf_fail(err, "writing output failed") : 0;
}

int jf_cmd_decode(int argc, char **argv)
{
	struct jf_cli_inputs in;
	struct jf_printer printer;
	struct jf_decoder *dec;
	struct jf_error err = { "" };
	int i, rc, status = JF_EXIT_OK;

	jf_cli_inputs_init(&in);
	/* Blocks end at every branch, as the fast path ends them on a raw stream: then a
	 * perf.data file or recording takes the fast path too, with the same records. */
	in.split_blocks = 1;
	memset(&printer, 0, sizeof(printer));
	printer.out = stdout;
	for (i = 1; i < argc; i++) {
		rc = jf_cli_input_option(&in, argc, argv, &i, &err);
		if (rc == JF_CLI_BAD_USAGE)
			goto usage_error;
		if (rc < 0)
			goto fail;
		if (rc > 0)
			continue;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			jf_cli_inputs_fini(&in);
			return JF_EXIT_OK;
		} else if (!strcmp(argv[i], "--blocks")) {
			printer.blocks = 1;
		} else if (!strcmp(argv[i], "--asm")) {
			printer.asm_text = 1;
		} else if (!strcmp(argv[i], "--format=jsonl") || !strcmp(argv[i], "--jsonl")) {
			printer.format = JF_OUT_JSONL;
		} else if (!strcmp(argv[i], "--format=text")) {
			printer.format = JF_OUT_TEXT;
		} else {
			fprintf(stderr, "jitflow decode: unknown option '%s' (see --help)\n", argv[i]);
			jf_cli_inputs_fini(&in);
			return JF_EXIT_USAGE;
		}
	}
	dec = jf_cli_open_decoder(&in, &err);
	if (!dec)
		goto fail;
	setvbuf(stdout, NULL, _IOFBF, 1 << 20);
	printer.insns = jf_insn_cache_new(in.map);
	printer.symtab = in.symtab;
	printer.map = in.map;
	printer.zones = in.zones;
	rc = jf_cli_drain(&in, dec, print_one, &printer, &err);
	if (rc < 0)
		status = JF_EXIT_FAIL;
	jf_insn_cache_free(printer.insns);
	jf_decoder_free(dec);
	if (fflush(stdout) != 0 && status == JF_EXIT_OK) {
		jf_fail(&err, "writing output failed");
		status = JF_EXIT_FAIL;
	}
	if (status != JF_EXIT_OK)
		fprintf(stderr, "jitflow decode: %s\n", err.msg);
	jf_cli_inputs_fini(&in);
	return status;
fail:
	fprintf(stderr, "jitflow decode: %s\n", err.msg);
	jf_cli_inputs_fini(&in);
	return JF_EXIT_FAIL;
usage_error:
	fprintf(stderr, "jitflow decode: %s (see --help)\n", err.msg);
	jf_cli_inputs_fini(&in);
	return JF_EXIT_USAGE;
}
