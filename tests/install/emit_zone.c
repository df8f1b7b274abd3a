/* A runtime's view of the installed emitter: write a zone file with one region, a guard
 * and a free, using only <jitflow/emitter.h>. The install test reads the file back with the
 * installed `jitflow zone dump` and expects exactly these records.
 * usage: emit_zone DIR   (prints the zone file's path) */
#include <stdio.h>

#include <jitflow/emitter.h>

/* The "compiled code": any bytes will do, they are copied into the file. */
static const unsigned char code[] = { 0x48, 0x31, 0xc0, 0x0f, 0x85, 0x10, 0, 0, 0, 0xc3 };

int main(int argc, char **argv)
{
	struct jf_emitter *em;
	struct jf_region r = {
		.name = "install-test trace",
		.addr = 0x7f0000001000,
		.code = code,
		.size = sizeof(code),
		.kind = JF_REGION_TRACE,
		.trace_id = 7,
	};

	if (argc != 2) {
		fprintf(stderr, "usage: emit_zone DIR\n");
		return 2;
	}
	em = jf_emitter_open(argv[1], JF_EMIT_NO_MARKER_CALLS);
	if (!em) {
		fprintf(stderr, "emit_zone: cannot open a zone file in %s\n", argv[1]);
		return 1;
	}
	if (!jf_emit_region_load(em, &r) ||
	    !jf_emit_guard(em, 1, 7, r.addr + 3, r.addr + 0x19, 42) ||
	    !jf_emit_region_free(em, r.addr, r.size) || jf_emitter_flush(em) < 0) {
		fprintf(stderr, "emit_zone: %s\n", jf_emitter_error(em));
		return 1;
	}
	printf("%s\n", jf_emitter_path(em));
	jf_emitter_close(em);
	return 0;
}
