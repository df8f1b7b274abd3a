#include "cli_inputs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char jf_cli_inputs_help[] =
	"inputs:\n"
	"  --pt FILE                   a raw Intel PT stream (starts with or contains a PSB)\n"
	"  --raw FILE[:FROM[-TO]]:BASE  code bytes FROM..TO (exclusive) of FILE at address BASE\n"
	"  --elf FILE[:BASE]           the loadable segments of an ELF file (moved to BASE)\n"
	"  --cpu FAMILY/MODEL[/STEPPING]|none  the CPU that recorded the trace (errata)\n"
	"  --mtc-freq N, --nom-freq N, --cpuid-0x15.eax N, --cpuid-0x15.ebx N\n"
	"                              timing parameters (as libipt names them)\n";

void jf_cli_inputs_init(struct jf_cli_inputs *in)
{
	memset(in, 0, sizeof(*in));
	in->map = jf_codemap_new();
	in->symtab = jf_symtab_new();
}

void jf_cli_inputs_fini(struct jf_cli_inputs *in)
{
	jf_unmap_file(&in->pt_file);
	jf_codemap_free(in->map);
	jf_symtab_free(in->symtab);
}

static const char *value_of(int argc, char **argv, int *i, struct jf_error *err)
{
	if (*i + 1 >= argc) {
		jf_fail(err, "%s: missing argument", argv[*i]);
		return NULL;
	}
	return argv[++*i];
}

static int parse_u32(const char *opt, const char *s, uint32_t max, uint32_t *out,
		     struct jf_error *err)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > max)
		return jf_fail(err, "%s: expected a number up to %u, got '%s'", opt, max, s);
	*out = (uint32_t)v;
	return 0;
}

int jf_cli_input_option(struct jf_cli_inputs *in, int argc, char **argv, int *i,
			struct jf_error *err)
{
	const char *opt = argv[*i], *val;
	uint32_t v;

	if (!strcmp(opt, "--pt") || !strcmp(opt, "--raw") || !strcmp(opt, "--elf") ||
	    !strcmp(opt, "--cpu") || !strcmp(opt, "--mtc-freq") || !strcmp(opt, "--nom-freq") ||
	    !strcmp(opt, "--cpuid-0x15.eax") || !strcmp(opt, "--cpuid-0x15.ebx")) {
		val = value_of(argc, argv, i, err);
		if (!val)
			return -1;
	} else {
		return 0;
	}
	if (!strcmp(opt, "--pt")) {
		if (in->pt_path)
			return jf_fail(err, "--pt given twice ('%s' and '%s')", in->pt_path, val);
		in->pt_path = val;
		return 1;
	}
	if (!strcmp(opt, "--raw")) {
		in->nimages++;
		return jf_load_raw_spec(in->map, val, err) < 0 ? -1 : 1;
	}
	if (!strcmp(opt, "--elf")) {
		in->nimages++;
		return jf_load_elf_spec(in->map, in->symtab, val, err) < 0 ? -1 : 1;
	}
	if (!strcmp(opt, "--cpu"))
		return jf_pt_parse_cpu(val, &in->pt, err) < 0 ? -1 : 1;
	if (!strcmp(opt, "--mtc-freq") || !strcmp(opt, "--nom-freq")) {
		if (parse_u32(opt, val, 0xff, &v, err) < 0)
			return -1;
		if (!strcmp(opt, "--mtc-freq"))
			in->pt.mtc_freq = (uint8_t)v;
		else
			in->pt.nom_freq = (uint8_t)v;
		return 1;
	}
	if (parse_u32(opt, val, UINT32_MAX, &v, err) < 0)
		return -1;
	if (!strcmp(opt, "--cpuid-0x15.eax"))
		in->pt.cpuid_0x15_eax = v;
	else
		in->pt.cpuid_0x15_ebx = v;
	return 1;
}

struct jf_decoder *jf_cli_open_decoder(struct jf_cli_inputs *in, struct jf_error *err)
{
	if (!in->pt_path) {
		jf_fail(err, "no trace given (use --pt FILE; see --help)");
		return NULL;
	}
	if (jf_map_file(&in->pt_file, in->pt_path, err) < 0)
		return NULL;
	jf_mapped_file_sequential(&in->pt_file);
	in->pt.trace = in->pt_file.data;
	in->pt.size = in->pt_file.size;
	in->pt.release_consumed = 1;
	return jf_pt_decoder_new(&in->pt, in->map, err);
}

uint64_t jf_cli_trace_size(const struct jf_cli_inputs *in)
{
	return in->pt_file.size;
}
