/* The analysis commands' common path: inputs -> decoder (with zone files) -> analysis ->
 * one view of the result, as text, JSON or CSV. */
#include "cli_analysis.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_collectors.h"
#include "cli_inputs.h"
#include "cli_output.h"
#include "cli_pypylog.h"
#include "cli_stacks.h"
#include "cli_views.h"
#include "commands.h"
#include "jitflow/analysis.h"
#include "jitflow/jump_split.h"
#include "jitflow/zone_image.h"

struct options {
	int json;
	const char *csv;
	size_t top;
	double tolerance;
	const char *dir;          /* a recording folder (positional) */
	struct jf_cli_views views;
	int stacks;               /* `stacks`: call stacks, and --folded prints them */
};

static void usage(FILE *out, const char *cmd, const char *what)
{
	if (!strcmp(cmd, "timeline")) {
		jf_cli_timeline_usage(out, what);
		return;
	}
	if (!strcmp(cmd, "stacks")) {
		jf_cli_stacks_usage(out, jf_cli_inputs_help);
		return;
	}
	fprintf(out,
		"usage: jitflow %s [RECORDING_DIR | PERF.DATA | INPUTS] [--json | --csv TABLE | --folded |\n"
		"       --svg FILE | --html FILE] [--top N] [--tolerance X] [--zone FILE]...\n\n%s\n\n"
		"  RECORDING_DIR     a folder written by `jitflow record`: its perf.data and the\n"
		"                    zone files (jit-*.dump) beside it\n"
		"  PERF.DATA         an Intel PT perf.data file (its zone files: --zone)\n"
		"  --json            the whole result as one JSON object (docs/analysis.md)\n"
		"  --csv TABLE       one table as CSV: %s\n"
		"  --top N           rows per table in text output (default 10)\n"
		"  --tolerance X     relative tolerance of a steady state (default 0.05)\n%s\n%s",
		cmd, what, jf_report_csv_tables, jf_cli_views_help, jf_cli_inputs_help);
}

/* Code that no zone record describes, by the file it was mapped from: shared libraries
 * (lib*.so*, ld-*.so*) are other native code, other files and HotSpot's libjvm.so the
 * runtime's own; the upper half of the address space is the kernel's. */
static enum jf_code_class classify_native(struct jf_codemap *map, uint64_t addr)
{
	const char *name = map ? jf_codemap_lookup(map, addr, NULL) : NULL;

	if (addr >= 0xffff800000000000ull)
		return JF_CLASS_KERNEL;
	if (!name)
		return JF_CLASS_UNKNOWN;
	if (jf_cli_collectors_is_vm(name))
		return JF_CLASS_RUNTIME;
	if (!strncmp(name, "lib", 3) || !strncmp(name, "ld-", 3) || strstr(name, ".so"))
		return JF_CLASS_NATIVE;
	return JF_CLASS_RUNTIME;
}

/* The analysis asks for every block outside the zone records: its answers by address,
 * for as long as the code map stays the same (a name lookup and string compares per block
 * were a tenth of a report). One per code map: the parts of a parallel decode, each a
 * fresh analysis that asks again for every block it sees, share their thread's (its
 * code map is that thread's own), which holds the blocks of a whole run's loops. */
enum { NATIVE_MEMO_BITS = 11 };

struct native_memo {
	struct jf_codemap *map;
	uint64_t generation;
	struct native_memo *next;       /* the memos of the other threads' maps */
	struct jf_cli_collectors *collectors; /* the collector entries in map's files */
	/* addr + 1, so that 0 is an empty slot */
	struct { uint64_t key; uint8_t cls, collector_entry; } slot[1u << NATIVE_MEMO_BITS];
};

/* addr's slot, filled for the current code map. */
static size_t native_slot(struct native_memo *m, uint64_t addr)
{
	uint64_t gen = m->map ? jf_codemap_generation(m->map) : 0;
	size_t i = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> (64 - NATIVE_MEMO_BITS));

	if (gen != m->generation) {
		memset(m->slot, 0, sizeof(m->slot));
		m->generation = gen;
	}
	if (m->slot[i].key != addr + 1) {
		m->slot[i].key = addr + 1;
		m->slot[i].cls = (uint8_t)classify_native(m->map, addr);
		m->slot[i].collector_entry =
			(uint8_t)jf_cli_collector_entry(m->collectors, m->map, addr);
	}
	return i;
}

static enum jf_code_class native_class(void *ctx, uint64_t addr)
{
	struct native_memo *m = ctx;

	return (enum jf_code_class)m->slot[native_slot(m, addr)].cls;
}

static int collector_entry(void *ctx, uint64_t addr)
{
	struct native_memo *m = ctx;

	return m->slot[native_slot(m, addr)].collector_entry;
}

static void native_memo_free(struct native_memo *m)
{
	jf_cli_collectors_free(m->collectors);
	m->collectors = NULL;
}

static int feed_record(void *ctx, const struct jf_zone_reader *reader,
		       const struct jf_zone_record *rec)
{
	return jf_analysis_zone_record(ctx, reader, rec);
}

/* The analysis of the flows pulled here, and (NULL: the decoder's blocks end there) what
 * cuts them at direct jumps, with the buffer the parts are written into (here, not on the
 * stack of analyse_flow, which runs for every record). */
struct consumer {
	struct jf_analysis *a;
	struct jf_jump_split *cut;
	struct jf_flow part;
};

static __attribute__((noinline)) int analyse_parts(struct consumer *c, const struct jf_flow *f,
						   uint32_t n, struct jf_error *err)
{
	uint32_t k;

	c->part = *f;
	for (k = 0; k < n; k++) {
		jf_jump_split_part(c->cut, f, k, &c->part);
		if (jf_analysis_flow(c->a, &c->part) < 0)
			return jf_fail(err, "out of memory");
	}
	return 0;
}

static int analyse_flow(void *ctx, const struct jf_flow *f, struct jf_error *err)
{
	struct consumer *c = ctx;
	uint32_t n = c->cut ? jf_jump_split_record(c->cut, f) : 1;

	if (n > 1)
		return analyse_parts(c, f, n, err);
	return jf_analysis_flow(c->a, f) < 0 ? jf_fail(err, "out of memory") : 0;
}

/* With -j N on a raw stream, the threads that decode the trace's segments analyse them
 * too, each into an analysis of its own (a part), which are merged in trace order
 * (jitflow/pt_parallel.h: jf_pt_parallel_run; jf_analysis_merge). */
struct part {
	struct jf_analysis *a;
};

struct parts {
	struct jf_analysis_config cfg;  /* as the whole's, but for map and native_ctx */
	struct jf_analysis *whole;
	struct jf_cli_inputs *in;
	struct jf_decoder *dec;         /* for the progress line */
	pthread_mutex_t lock;           /* parts are made on several threads: */
	struct native_memo *memos;      /* one per code map (so per thread) */
};

/* The memo of map's native classes (NULL: out of memory). */
static struct native_memo *memo_of(struct parts *parts, struct jf_codemap *map)
{
	struct native_memo *m;

	pthread_mutex_lock(&parts->lock);
	for (m = parts->memos; m && m->map != map; m = m->next)
		;
	if (!m && (m = calloc(1, sizeof(*m)))) {
		m->collectors = jf_cli_collectors_new();
		m->map = map;
		m->generation = (uint64_t)-1;
		m->next = parts->memos;
		parts->memos = m;
	}
	pthread_mutex_unlock(&parts->lock);
	return m;
}

static void part_free(void *self)
{
	struct part *part = self;

	jf_analysis_free(part->a);
	free(part);
}

static void *part_new(void *ctx, struct jf_codemap *map)
{
	struct parts *parts = ctx;
	struct jf_analysis_config cfg = parts->cfg;
	struct part *part = calloc(1, sizeof(*part));

	/* The analysis walks code only in pc-mapped regions, which come from zone files;
	 * parts are made only without them, so they need no instruction cache of their own
	 * (the memo asks the thread's own map). */
	cfg.map = NULL;
	cfg.native_ctx = memo_of(parts, map);
	if (!part || !cfg.native_ctx) {
		free(part);
		return NULL;
	}
	part->a = jf_analysis_new(&cfg);
	if (!part->a) {
		free(part);
		return NULL;
	}
	return part;
}

static int part_flow(void *self, const struct jf_flow *f)
{
	return jf_analysis_flow(((struct part *)self)->a, f);
}

static int part_take(void *ctx, void *self, uint64_t reached, struct jf_error *err)
{
	struct parts *parts = ctx;
	struct part *part = self;
	int rc = jf_analysis_merge(parts->whole, part->a);

	part_free(part);
	jf_progress(reached, jf_cli_trace_size(parts->in), jf_decoder_stats(parts->dec)->insns);
	return rc < 0 ? jf_fail(err, "out of memory") : 0;
}

static const struct jf_pt_part_ops part_ops = { part_new, part_flow, part_take, part_free,
						NULL };

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int parse(struct jf_cli_inputs *in, struct options *o, const char *cmd, const char *what,
		 int argc, char **argv, struct jf_error *err)
{
	int i, rc;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		rc = jf_cli_input_option(in, argc, argv, &i, err);
		if (rc == 0)
			rc = jf_cli_views_option(&o->views, argc, argv, &i, err);
		if (rc < 0)
			return rc;
		if (rc > 0)
			continue;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout, cmd, what);
			return 1;
		} else if (!strcmp(a, "--json")) {
			o->json = 1;
		} else if (!strcmp(a, "--csv") || !strcmp(a, "--top") || !strcmp(a, "--tolerance")) {
			char *end;

			if (i + 1 >= argc)
				return jf_fail(err, "%s: missing argument", a), JF_CLI_BAD_USAGE;
			if (!strcmp(a, "--csv")) {
				o->csv = argv[++i];
				continue;
			}
			errno = 0;
			if (!strcmp(a, "--top"))
				o->top = strtoul(argv[++i], &end, 10);
			else
				o->tolerance = strtod(argv[++i], &end);
			if (errno || *end || end == argv[i])
				return jf_fail(err, "%s: expected a number, got '%s'", a, argv[i]),
				       JF_CLI_BAD_USAGE;
		} else if (a[0] != '-' && !o->dir && !in->perf_path) {
			if (is_dir(a))
				o->dir = a;
			else
				in->perf_path = a;
		} else {
			return jf_fail(err, "unknown option or extra argument '%s' (see --help)", a),
			       JF_CLI_BAD_USAGE;
		}
	}
	if (jf_cli_views_check(&o->views, err))
		return JF_CLI_BAD_USAGE;
	if (o->stacks && (o->views.html || o->csv))
		return jf_fail(err, "%s: not an option of stacks (see --help)",
			       o->csv ? "--csv" : "--html"),
		       JF_CLI_BAD_USAGE;
	if (o->dir && jf_cli_open_recording(in, o->dir, err) < 0)
		return -1;
	return 0;
}

static int print(FILE *out, const struct options *o, jf_cli_view_fn view,
		 const struct jf_analysis_result *r, const struct jf_report_meta *m,
		 struct jf_cli_inputs *in, struct jf_error *err)
{
	if (o->stacks) {
		return jf_cli_stacks_print(out, r, m, in, o->views.folded, o->json, o->views.svg,
					   err);
	} else if (jf_cli_views_wanted(&o->views)) {
		struct jf_cli_views v = o->views;
		struct jf_stack_names names;

		if (v.stacks) {
			if (jf_cli_stack_names(in, &names, err) < 0)
				return -1;
			v.names = &names;
		}
		return jf_cli_views_write(&v, r, m, err);
	} else if (o->json) {
		jf_report_json(out, r, m);
	} else if (o->csv) {
		if (jf_report_csv(out, r, o->csv) < 0)
			return jf_fail(err, "--csv: no table '%s' (tables: %s)", o->csv,
				       jf_report_csv_tables);
	} else {
		view(out, r, m);
	}
	return 0;
}

/* Facts about the inputs that the report states, so it says what is missing. */
static void describe_inputs(const struct jf_cli_inputs *in, const struct jf_analysis_result *r,
			    const struct jf_jump_split *cut, struct jf_report_meta *m)
{
	static char code_note[512], filter_note[512], killed_note[512], cut_note[512];
	static char observed_note[512];

	m->zone_files_known = 1;
	if (in->zones) {
		const struct jf_zone_image_stats *zs = jf_zone_image_stats(in->zones);

		m->zone_files = zs->files;
		m->zone_ext_files = zs->ext_files;
		m->observed_changed = zs->observed_changed;
		m->observed_before_record = zs->observed_unmapped;
		m->observed_same = zs->observed_same;
	}
	if (m->observed_changed || m->observed_before_record) {
		snprintf(observed_note, sizeof(observed_note),
			 "code changed in place where the recorder saw it run: %" PRIu64 " blocks "
			 "ran with bytes other than the zone records' (applied there, and counted "
			 "as code changes), %" PRIu64 " ran before a record described their code",
			 m->observed_changed, m->observed_before_record);
		m->notes[m->nnotes++] = observed_note;
	}
	if (in->pypy && in->pypy->placement)
		m->notes[m->nnotes++] = in->pypy->placement;
	if (in->recording_dir && !in->recording_has_manifest)
		m->notes[m->nnotes++] = "the recording has no manifest.json: whether its clock is "
					"synthetic is not known, so time is given in ticks";
	if (in->recording_dir && in->recording_killed_by) {
		snprintf(killed_note, sizeof(killed_note),
			 "the recorded program was killed by signal %d (%s): the trace ends where "
			 "QEMU last reported, and unless the program raised the signal itself it "
			 "stopped inside the last block, which no trace can end (the recorder's "
			 "count holds that block whole)",
			 in->recording_killed_by, strsignal(in->recording_killed_by));
		m->notes[m->nnotes++] = killed_note;
	}
	if (in->recording_dir && in->recording_filter[0]) {
		snprintf(filter_note, sizeof(filter_note),
			 "recorded with --filter=%s: only the %" PRIu64 " of %" PRIu64 " instructions "
			 "inside it were traced; the time split and transitions cover traced code "
			 "only (code outside it, such as an interpreter, is not in the trace)",
			 in->recording_filter, in->recording_traced, in->recording_insns);
		m->notes[m->nnotes++] = filter_note;
	}
	if (in->recording_dir && !in->recording_has_code && (r->image_misses || r->decode_errors)) {
		snprintf(code_note, sizeof(code_note),
			 "the recording has no saved code (%s/code/ is missing), so the program's "
			 "files were read at their recorded paths; %" PRIu64 " blocks ran outside "
			 "any known code",
			 in->recording_dir, r->image_misses);
		m->notes[m->nnotes++] = code_note;
	}
	if (cut && jf_jump_split_unwalked(cut)) {
		snprintf(cut_note, sizeof(cut_note),
			 "%" PRIu64 " blocks could not be cut at their direct jumps (capstone could "
			 "not decode an instruction in them that libipt did): the instructions after "
			 "such a jump are counted where their block starts, and an arrival there "
			 "through the jump is not seen", jf_jump_split_unwalked(cut));
		m->notes[m->nnotes++] = cut_note;
	}
}

int jf_cli_analysis_main(const char *cmd, const char *what, jf_cli_view_fn view, int argc,
			 char **argv)
{
	struct jf_cli_inputs in;
	struct options o;
	struct jf_error err = { "" };
	struct jf_analysis_config cfg;
	struct jf_analysis *a = NULL;
	struct jf_analysis_result result;
	struct jf_report_meta meta;
	struct jf_decoder *dec = NULL;
	const struct jf_decode_stats *st;
	static struct native_memo natives;
	struct parts parts;
	struct consumer consumer = { 0 };
	int rc, status = JF_EXIT_FAIL;

	jf_cli_inputs_init(&in);
	memset(&o, 0, sizeof(o));
	memset(&parts, 0, sizeof(parts));
	pthread_mutex_init(&parts.lock, NULL);
	/* `timeline` is a view of the same analysis, written to -o FILE. */
	o.views.timeline_cmd = !strcmp(cmd, "timeline");
	o.stacks = !strcmp(cmd, "stacks");
	in.split_blocks = 1;
	in.cuts_jumps = 1;
	rc = parse(&in, &o, cmd, what, argc, argv, &err);
	if (rc == 1) {
		jf_cli_inputs_fini(&in);
		return JF_EXIT_OK;
	}
	if (rc < 0) {
		fprintf(stderr, "jitflow %s: %s\n", cmd, err.msg);
		jf_cli_inputs_fini(&in);
		return rc == JF_CLI_BAD_USAGE ? JF_EXIT_USAGE : JF_EXIT_FAIL;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.map = in.map;
	cfg.steady_tolerance = o.tolerance;
	cfg.native_class = native_class;
	cfg.collector_entry = collector_entry;
	cfg.views = !o.stacks && jf_cli_views_wanted(&o.views);
	cfg.call_stacks = o.stacks || o.views.stacks;
	natives.map = in.map;
	natives.collectors = jf_cli_collectors_new();
	natives.generation = (uint64_t)-1;
	cfg.native_ctx = &natives;
	a = jf_analysis_new(&cfg);
	if (!a) {
		jf_fail(&err, "out of memory");
		goto out;
	}
	parts.cfg = cfg;
	parts.whole = a;
	parts.in = &in;
	/* The views' timeline series are bucketed by a width that grows with the trace: a
	 * part's buckets do not fall on the whole's, so merged they would be spread by
	 * proportion, not exact. Call stacks do not join at a seam either (a part would start
	 * in the middle of stacks). With either, one analysis takes every flow. */
	in.parts = cfg.views || cfg.call_stacks ? NULL : &part_ops;
	in.parts_ctx = &parts;
	dec = jf_cli_open_decoder(&in, &err);
	if (!dec)
		goto out;
	parts.dec = dec;
	/* Records apply as flows are pulled, so the hook goes on after opening (which may
	 * create the zone image for files a perf.data names). */
	if (in.zones)
		jf_zone_image_on_apply(in.zones, feed_record, a);
	consumer.a = a;
	if (in.jumps_left_in_blocks && !(consumer.cut = jf_jump_split_new(in.map))) {
		jf_fail(&err, "out of memory");
		goto out;
	}
	if (jf_cli_drain(&in, dec, analyse_flow, &consumer, &err) < 0)
		goto out;
	st = jf_decoder_stats(dec);
	/* A recording folder without its manifest: perf's conversion is there, but whether
	 * it turns real or synthetic ticks into "ns" is not known. */
	jf_analysis_set_clock(a, st->time_is_ns && !(in.recording_dir && !in.recording_has_manifest),
			      st->time_is_synthetic);
	if (jf_analysis_result(a, &result) < 0) {
		jf_fail(&err, "out of memory");
		goto out;
	}
	memset(&meta, 0, sizeof(meta));
	meta.source = o.dir ? o.dir : in.perf_path ? in.perf_path : in.pt_path ? in.pt_path : in.cs_snapshot;
	meta.trace_bytes = st->trace_bytes;
	meta.top = o.top;
	describe_inputs(&in, &result, consumer.cut, &meta);
	if (print(stdout, &o, view, &result, &meta, &in, &err) == 0 && fflush(stdout) == 0)
		status = JF_EXIT_OK;
	else if (!err.msg[0])
		jf_fail(&err, "writing output failed");
	jf_analysis_result_free(&result);
out:
	if (status != JF_EXIT_OK)
		fprintf(stderr, "jitflow %s: %s\n", cmd, err.msg);
	jf_jump_split_free(consumer.cut);
	jf_decoder_free(dec);
	jf_analysis_free(a);
	while (parts.memos) {
		struct native_memo *m = parts.memos;

		parts.memos = m->next;
		native_memo_free(m);
		free(m);
	}
	native_memo_free(&natives);
	pthread_mutex_destroy(&parts.lock);
	jf_cli_inputs_fini(&in);
	return status;
}
