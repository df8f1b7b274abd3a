/* minivm: run a program with the interpreter alone or with the tracing JIT, optionally
 * writing jitflow's zone file and the runtime's own counters (the ground truth jitflow's
 * analysis is checked against). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: minivm [OPTIONS] PROGRAM.mvm\n\n"
		"Run a minivm program (docs/minivm.md) with a bytecode interpreter and a tracing JIT.\n\n"
		"options:\n"
		"  --jit=on|off         compile hot loops to machine code (default on)\n"
		"  --hot=N              back-edges before a loop is traced (default 50)\n"
		"  --bridge=N           exits of a guard before a bridge is compiled (default 10; 0: never)\n"
		"  --code-size=BYTES    code memory; when full, all traces are flushed (default 1048576)\n"
		"  --counters FILE      write the runtime's trace counters as JSON to FILE\n"
		"  --zone-dir DIR       write jitflow's zone file jit-PID.dump into DIR\n"
		"                       (default: $JITFLOW_ZONE_DIR if set, else no zone file)\n"
		"  --help               this text\n\n"
		"Exit status: 0 on success, 1 for an error in the program (file:line:column: message),\n"
		"2 for bad usage.\n");
}

static int parse_count(const char *opt, const char *text, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || v > max) {
		fprintf(stderr, "minivm: %s needs a number up to %llu, not '%s'\n", opt,
			(unsigned long long)max, text);
		return -1;
	}
	*out = v;
	return 0;
}

/* "--name=value" or "--name value"; returns the value or NULL if arg is not --name. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n))
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] == 0 && *i + 1 < argc)
		return argv[++*i];
	return NULL;
}

static char *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *data = NULL;
	size_t cap = 0, len = 0, got;

	if (!f)
		return NULL;
	do {
		if (len == cap) {
			char *p = realloc(data, cap = cap ? cap * 2 : 4096);

			if (!p) {
				free(data);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			data = p;
		}
		got = fread(data + len, 1, cap - len, f);
		len += got;
	} while (got);
	if (ferror(f)) {
		free(data);
		fclose(f);
		return NULL;
	}
	fclose(f);
	*size = len;
	return data;
}

int main(int argc, char **argv)
{
	struct mvm_options opt = {.jit = 1, .hot = 50, .bridge = 10, .code_size = 1 << 20};
	const char *program = NULL, *v;
	struct mvm_program *prog;
	struct mvm_vm vm;
	char *source;
	size_t size;
	uint64_t n;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if ((v = option_value(argc, argv, &i, "--jit"))) {
			if (strcmp(v, "on") && strcmp(v, "off")) {
				fprintf(stderr, "minivm: --jit is on or off, not '%s'\n", v);
				return 2;
			}
			opt.jit = !strcmp(v, "on");
		} else if ((v = option_value(argc, argv, &i, "--hot"))) {
			if (parse_count("--hot", v, 1u << 30, &n) || n == 0) {
				if (n == 0)
					fprintf(stderr, "minivm: --hot must be at least 1\n");
				return 2;
			}
			opt.hot = (uint32_t)n;
		} else if ((v = option_value(argc, argv, &i, "--bridge"))) {
			if (parse_count("--bridge", v, 1u << 30, &n))
				return 2;
			opt.bridge = (uint32_t)n;
		} else if ((v = option_value(argc, argv, &i, "--code-size"))) {
			if (parse_count("--code-size", v, (uint64_t)1 << 30, &n))
				return 2;
			if (n < 256) {
				fprintf(stderr, "minivm: --code-size must be at least 256 bytes\n");
				return 2;
			}
			opt.code_size = (size_t)n;
		} else if ((v = option_value(argc, argv, &i, "--counters"))) {
			opt.counters_path = v;
		} else if ((v = option_value(argc, argv, &i, "--zone-dir"))) {
			opt.zone_dir = v;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "minivm: unknown or incomplete option '%s' (see --help)\n",
				argv[i]);
			return 2;
		} else if (program) {
			fprintf(stderr, "minivm: one program at a time ('%s' and '%s')\n", program,
				argv[i]);
			return 2;
		} else {
			program = argv[i];
		}
	}
	if (!program) {
		fprintf(stderr, "minivm: no program given (see --help)\n");
		return 2;
	}
	if (!opt.zone_dir) /* as the emitter itself does for runtimes that do not choose */
		opt.zone_dir = getenv("JITFLOW_ZONE_DIR");
	source = read_file(program, &size);
	if (!source) {
		fprintf(stderr, "minivm: cannot read %s: %s\n", program, strerror(errno));
		return 1;
	}
	prog = mvm_compile(program, source, size);
	if (!prog) {
		free(source);
		return 1;
	}
	if (mvm_vm_init(&vm, prog, &opt)) {
		mvm_vm_free(&vm);
		free(source);
		return 1;
	}
	vm.source = source;
	mvm_vm_run(&vm);
	mvm_vm_finish(&vm);
	mvm_vm_free(&vm);
	return 0;
}
