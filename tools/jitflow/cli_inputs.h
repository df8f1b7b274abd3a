/* Trace inputs shared by every subcommand that decodes: which trace, which images, which
 * CPU. Subcommands offer these options and get one decoder back. */
#ifndef JITFLOW_CLI_INPUTS_H
#define JITFLOW_CLI_INPUTS_H

#include "jitflow/codemap.h"
#include "jitflow/coresight.h"
#include "jitflow/decoder.h"
#include "jitflow/images.h"
#include "jitflow/mapped_file.h"
#include "jitflow/perf_images.h"
#include "jitflow/pt.h"
#include "jitflow/pt_parallel.h"
#include "jitflow/zone_image.h"
#include "cli_zones.h"

struct jf_cli_inputs {
	const char *pt_path;          /* --pt: a raw Intel PT stream */
	const char *cs_snapshot;      /* --cs-snapshot: a CoreSight snapshot folder */
	uint64_t trace_bytes;         /* of the snapshot's buffers */
	struct jf_mapped_file pt_file;
	struct jf_pt_config pt;       /* --cpu, timing parameters */
	struct jf_codemap *map;       /* --raw, --elf */
	struct jf_symtab *symtab;
	int nimages;
	/* perf.data */
	const char *perf_path;        /* --perf: an Intel PT perf.data file */
	struct jf_perf_images *perf_images; /* its sideband's images (--image-dir) */
	int cpu_given;                /* --cpu overrides the file's CPUID */
	const char *archive, *kernel; /* --archive, --kernel, --buildid-dir (cli_perf_files.c) */
	char archive_dir[4096];       /* where the archive is unpacked (removed at the end) */
	int buildid_dir_given;
	struct jf_zone_image *zones;  /* --zone (JIT code zones; NULL without) */
	char recording_perf[4096];    /* DIR/perf.data of a recording folder */
	int time_synthetic;           /* its manifest says the timing is synthetic */
	const char *recording_dir;    /* the recording folder (NULL: none) ... */
	int recording_has_manifest;   /* ... has manifest.json */
	int recording_has_code;       /* ... has code/ (the program's saved pages) */
	char recording_filter[256];   /* ... was recorded with --filter=this ("": without) */
	uint64_t recording_insns, recording_traced; /* ... instructions run, and traced */
	int recording_killed_by;      /* ... the signal that killed its program (0: none) */
	struct jf_cli_zone_discovery *zone_discovery; /* zone files named by --perf's MMAPs */
	struct jf_decoder *perf_session; /* inside the zone filter (jf_perf_session_fast_report) */
	char **zone_names;            /* base names of the zone files given */
	size_t nzone_names;
	/* Blocks end at every direct call and jump (the analysis needs arrivals at a
	 * trace's entry to start a block). */
	int split_blocks;
	/* ... but the consumer cuts them at direct jumps itself (jitflow/jump_split.h), which
	 * costs less than libipt's end_on_jump: set by the consumer before opening. */
	int cuts_jumps;
	/* Set when the decoder is opened: its blocks may run through direct jumps (libipt's
	 * block decoder without end_on_jump, because of cuts_jumps). The fast path on raw
	 * Intel PT ends its blocks at jumps whatever this says. */
	int jumps_left_in_blocks;
	/* The consumer only counts (stat): blocks need not be returned, so a raw Intel PT
	 * trace without zones may take the fast counting path (jitflow/pt_fast.h). */
	int count_only;
	/* --decoder=libipt-block: libipt's block decoder, not the fast path, on raw Intel PT. */
	int libipt_block;
	struct jf_cli_pypy *pypy;     /* --pypylog or a recording's pypylog.log (NULL: none) */
	const char *pypylog_path;     /* --pypylog: read when the decoder is opened, once the
	                               * trace (and so its TSC conversion) is known */
	/* Parallel decode (-j N, --segment-size BYTES) and what it did. */
	int jobs;                     /* decoding threads (0: not given: the command's default) */
	int jobs_given;               /* -j was given (a default that cannot apply is not told) */
	uint64_t segment_size;        /* trace bytes per segment (0: the default) */
	int jobs_used;                /* threads that decoded (1: one decoder) */
	const char *serial_reason;    /* why -j N > 1 decoded with one thread (NULL: it did not) */
	struct jf_pt_parallel_report parallel;
	/* The consumer's work per part of the trace (jf_pt_parallel_run; NULL: it pulls
	 * every flow itself): with -j N on a raw stream, parts are made on the threads that
	 * decode. */
	const struct jf_pt_part_ops *parts;
	void *parts_ctx;
};

/* Help text for the input options, for each subcommand's --help. */
extern const char jf_cli_inputs_help[];

void jf_cli_inputs_init(struct jf_cli_inputs *in);
void jf_cli_inputs_fini(struct jf_cli_inputs *in);

/* If argv[*i] is an input option, consume it (and its argument: *i advances) and return 1;
 * return 0 if it is not one; JF_CLI_BAD_USAGE (message in err) if it is malformed (missing
 * argument, bad number or CPU, --pt twice); -1 (message in err) if what it names cannot be
 * loaded. */
enum { JF_CLI_BAD_USAGE = -2 };
int jf_cli_input_option(struct jf_cli_inputs *in, int argc, char **argv, int *i,
			struct jf_error *err);

/* A folder written by `jitflow record` (--recording DIR, or the analysis commands'
 * positional argument): its perf.data, its zone files (jit-*.dump) and saved code. */
int jf_cli_open_recording(struct jf_cli_inputs *in, const char *dir, struct jf_error *err);
/* Only the zone files of a recording folder. */
int jf_cli_add_recording_zones(struct jf_cli_inputs *in, const char *dir, struct jf_error *err);

/* Add a zone file (what --zone does). */
int jf_cli_add_zone(struct jf_cli_inputs *in, const char *path, struct jf_error *err);

/* Open the decoder the options describe. */
struct jf_decoder *jf_cli_open_decoder(struct jf_cli_inputs *in, struct jf_error *err);

/* Run dec into in->parts when it decodes on several threads (jf_pt_parallel_run), else
 * pull every flow record from dec into fn (which returns <0 after filling err to stop),
 * with a progress line on a terminal. Returns 0 at the end of the trace, -1 on failure. */
int jf_cli_drain(struct jf_cli_inputs *in, struct jf_decoder *dec,
		 int (*fn)(void *ctx, const struct jf_flow *f, struct jf_error *err), void *ctx,
		 struct jf_error *err);

/* One line on how many threads decoded, for stat ("4 threads, 12 segments, ..." or
 * "1 (-j 2 not applied: ...)"). */
void jf_cli_describe_jobs(const struct jf_cli_inputs *in, char *buf, size_t size);

/* The total number of trace bytes (for progress), 0 if unknown. */
uint64_t jf_cli_trace_size(const struct jf_cli_inputs *in);

/* How the fast path decoded (stat's "decode path"; is_fast 0: it did not) and the bytes
 * its shares are of (*of): the trace's, or for a perf.data session the bytes its buffers'
 * decoders got (jf_perf_session_report's decoded_bytes), summed over those decoders. */
struct jf_pt_fast_report;
void jf_cli_decode_path(const struct jf_cli_inputs *in, struct jf_decoder *dec,
			struct jf_pt_fast_report *out, uint64_t *of);

#endif
