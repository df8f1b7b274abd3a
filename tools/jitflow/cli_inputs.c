#include "cli_inputs.h"
#include "cli_pypylog.h"
#include "jitflow/isolate.h"
#include "jitflow/pt_fast.h"
#include "cli_output.h"
#include "code_pieces.h"
#include "cli_perf_files.h"

#include "jitflow/perf_cs_etm.h"
#include "jitflow/zone_format.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <unistd.h>

const char jf_cli_inputs_help[] =
	"inputs:\n"
	"  --pt FILE                   a raw Intel PT stream (starts with or contains a PSB)\n"
	"  --perf FILE                 an Intel PT perf.data file (perf record -e intel_pt//);\n"
	"                              code from its MMAP sideband, AUX buffers of all CPUs\n"
	"                              merged in time order; or a CoreSight one (cs_etm//):\n"
	"                              its AUX buffers in file order\n"
	"  --image-dir DIR             with --perf: look for mapped files missing at their\n"
	"                              recorded path in DIR too (DIR/full/path, DIR/name)\n"
	"  --buildid-dir DIR           with --perf: perf's build-id cache (default ~/.debug)\n"
	"  --archive FILE.tar.bz2      with --perf: a `perf archive` tarball of its files\n"
	"                              (PERF.DATA.tar.bz2 beside the perf.data: found anyway)\n"
	"  --symfs DIR                 with --perf: recorded paths lie under DIR (a sysroot)\n"
	"  --kernel FILE               the kernel's code (vmlinux) for kernel addresses\n"
	"  --cs-snapshot DIR           a CoreSight snapshot folder (snapshot.ini, trace.ini,\n"
	"                              device .ini files, memory dumps): ETMv4, ETE, PTM, ETMv3\n"
	"  --raw FILE[:FROM[-TO]]:BASE  code bytes FROM..TO (exclusive) of FILE at address BASE\n"
	"  --elf FILE[:BASE]           the loadable segments of an ELF file (moved to BASE)\n"
	"  --cpu FAMILY/MODEL[/STEPPING]|none  the CPU that recorded the trace (errata)\n"
	"  --recording DIR             a folder written by `jitflow record`: its perf.data,\n"
	"                              zone files (jit-*.dump; observed-code-*.dump: code the\n"
	"                              recorder saw run with new bytes, applied where it\n"
	"                              first ran), saved code (code/) and PyPy's\n"
	"                              JIT log (pypylog.log, placed with jit-code.txt)\n"
	"  --zone FILE                 a JIT code-zone file (jit-PID.dump: jitdump with or\n"
	"                              without jitflow's records), repeatable; its code is\n"
	"                              applied at each record's marker (or by time);\n"
	"                              with --perf, the jit-PID.dump files its sideband maps\n"
	"                              are found next to the perf.data or at their path\n"
	"  --pypylog FILE              PyPy's JIT log (PYPYLOG=" "jit-backend-dump,jit-backend-addr,\n"
	"                              jit-log-opt,jit-backend-counts:FILE): loops, bridges,\n"
	"                              guards and counters; its code writes apply at PyPy's\n"
	"                              TSC stamps, converted with the trace's TSC conversion\n"
	"                              (as fine as the trace's timing)\n"
	"  --mtc-freq N, --nom-freq N, --cpuid-0x15.eax N, --cpuid-0x15.ebx N\n"
	"                              timing parameters (as libipt names them)\n"
	"  -j N, --jobs N              decode with N threads (0: the cores available): a raw\n"
	"                              Intel PT stream (--pt without --zone) is cut at PSBs\n"
	"                              and its segments decoded at once, with the same output\n"
	"                              as one thread; other inputs use one thread. Default:\n"
	"                              the cores available for stat (each thread counts its\n"
	"                              segments), report, guards, split, bytecodes (each\n"
	"                              thread also analyses its segments), except with\n"
	"                              --html, --svg, --folded and timeline; 1 for the other\n"
	"                              commands and for stat --decoder=libipt-block\n"
	"  --segment-size BYTES        with -j: trace bytes per segment (default 64K; 256K\n"
	"                              for stat's fast path and where the analysis is split;\n"
	"                              K, M)\n"
	"  --decoder=fast|libipt-block  for a raw Intel PT stream (--pt without --zone), and\n"
	"                              for a perf.data once its code no longer changes (no\n"
	"                              MMAP or code-changing zone record left; stat counts\n"
	"                              those buffers): fast (default) follows it with libipt's\n"
	"                              packet or query decoder and a block cache, handing over\n"
	"                              to libipt's block decoder at the last PSB for anything\n"
	"                              it does not model (the same records); libipt-block:\n"
	"                              libipt's block decoder throughout\n";

void jf_cli_inputs_init(struct jf_cli_inputs *in)
{
	memset(in, 0, sizeof(*in));
	in->map = jf_codemap_new();
	in->symtab = jf_symtab_new();
	in->perf_images = jf_perf_images_new();
}

/* Mapped files the decode could not load are only known once the sideband has been read,
 * so they are reported when the inputs are released, after the output. */
static void warn_missing_images(const struct jf_cli_inputs *in)
{
	size_t i, n = in->perf_path ? jf_perf_images_nmissing(in->perf_images) : 0;

	for (i = 0; i < n; i++) {
		const struct jf_perf_missing_image *m = jf_perf_images_missing(in->perf_images, i);

		fprintf(stderr,
			"jitflow: warning: %s: offset %llu: no code for %s%s%s (pid %d, "
			"0x%llx-0x%llx, %llu mapping%s): %s\n",
			in->perf_path, (unsigned long long)m->record_offset, m->name,
			m->build_id[0] ? ", build-id " : "", m->build_id, m->pid,
			(unsigned long long)m->addr, (unsigned long long)(m->addr + m->len),
			(unsigned long long)m->count, m->count == 1 ? "" : "s", m->reason);
	}
}

void jf_cli_inputs_fini(struct jf_cli_inputs *in)
{
	warn_missing_images(in);
	jf_cli_perf_files_fini(in);
	jf_perf_images_free(in->perf_images);
	jf_unmap_file(&in->pt_file);
	jf_cli_zone_discovery_free(in->zone_discovery);
	jf_zone_image_free(in->zones);
	jf_cli_pypy_free(in->pypy); /* after the zone image: it maps the zone file */
	while (in->nzone_names)
		free(in->zone_names[--in->nzone_names]);
	free(in->zone_names);
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

/* A byte count with an optional K or M suffix, at least 4096 (a PSB interval or so). */
static int parse_size(const char *opt, const char *s, uint64_t *out, struct jf_error *err)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	if (errno || end == s || *end || v < 4096 || v > (1ull << 40))
		return jf_fail(err, "%s: expected a size from 4096 bytes (K, M suffixes), got '%s'",
			       opt, s);
	*out = v;
	return 0;
}

/* The cores this process may run on (for -j 0). */
static int cores_available(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	return 1;
}

int jf_cli_input_option(struct jf_cli_inputs *in, int argc, char **argv, int *i,
			struct jf_error *err)
{
	const char *opt = argv[*i], *val;
	uint32_t v = 0;
	int rc;

	/* Which Intel PT decoder gives the blocks (stat: which counts). */
	if (!strcmp(opt, "--decoder=fast") || !strcmp(opt, "--decoder=libipt-block")) {
		in->libipt_block = !strcmp(opt, "--decoder=libipt-block");
		return 1;
	}
	if (!strcmp(opt, "--pt") || !strcmp(opt, "--raw") || !strcmp(opt, "--elf") ||
	    !strcmp(opt, "--perf") || !strcmp(opt, "--image-dir") || !strcmp(opt, "--cs-snapshot") ||
	    !strcmp(opt, "--cpu") || !strcmp(opt, "--mtc-freq") || !strcmp(opt, "--nom-freq") ||
	    !strcmp(opt, "--cpuid-0x15.eax") || !strcmp(opt, "--cpuid-0x15.ebx") ||
	    !strcmp(opt, "--zone") || !strcmp(opt, "--recording") || !strcmp(opt, "--pypylog") ||
	    !strcmp(opt, "--buildid-dir") || !strcmp(opt, "--archive") ||
	    !strcmp(opt, "--symfs") || !strcmp(opt, "--kernel") || !strcmp(opt, "-j") ||
	    !strcmp(opt, "--jobs") || !strcmp(opt, "--segment-size")) {
		val = value_of(argc, argv, i, err);
		if (!val)
			return JF_CLI_BAD_USAGE;
	} else {
		return 0;
	}
	if (!strcmp(opt, "-j") || !strcmp(opt, "--jobs")) {
		if (parse_u32(opt, val, 1024, &v, err) < 0)
			return JF_CLI_BAD_USAGE;
		in->jobs = v ? (int)v : cores_available();
		in->jobs_given = 1;
		return 1;
	}
	if (!strcmp(opt, "--segment-size"))
		return parse_size(opt, val, &in->segment_size, err) < 0 ? JF_CLI_BAD_USAGE : 1;
	rc = jf_cli_perf_files_option(in, opt, val, err);
	if (rc)
		return rc;
	if (!strcmp(opt, "--pt")) {
		if (in->pt_path) {
			jf_fail(err, "--pt given twice ('%s' and '%s')", in->pt_path, val);
			return JF_CLI_BAD_USAGE;
		}
		in->pt_path = val;
		return 1;
	}
	if (!strcmp(opt, "--perf")) {
		if (in->perf_path)
			return jf_fail(err, "--perf given twice ('%s' and '%s')", in->perf_path,
				       val);
		in->perf_path = val;
		return 1;
	}
	if (!strcmp(opt, "--image-dir"))
		return jf_perf_images_add_dir(in->perf_images, val, err) < 0 ? -1 : 1;
	if (!strcmp(opt, "--cs-snapshot")) {
		if (in->cs_snapshot)
			return jf_fail(err, "--cs-snapshot given twice ('%s' and '%s')",
				       in->cs_snapshot, val);
		in->cs_snapshot = val;
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
	if (!strcmp(opt, "--cpu")) {
		in->cpu_given = 1;
		return jf_pt_parse_cpu(val, &in->pt, err) < 0 ? JF_CLI_BAD_USAGE : 1;
	}
	if (!strcmp(opt, "--zone"))
		return jf_cli_add_zone(in, val, err) < 0 ? -1 : 1;
	if (!strcmp(opt, "--recording"))
		return jf_cli_open_recording(in, val, err) < 0 ? -1 : 1;
	if (!strcmp(opt, "--pypylog")) {
		if (in->pypylog_path || in->pypy)
			return jf_fail(err, "%s: one PyPy log at a time", val);
		in->pypylog_path = val;
		return 1;
	}
	if (!strcmp(opt, "--mtc-freq") || !strcmp(opt, "--nom-freq")) {
		if (parse_u32(opt, val, 0xff, &v, err) < 0)
			return JF_CLI_BAD_USAGE;
		if (!strcmp(opt, "--mtc-freq"))
			in->pt.mtc_freq = (uint8_t)v;
		else
			in->pt.nom_freq = (uint8_t)v;
		return 1;
	}
	if (parse_u32(opt, val, UINT32_MAX, &v, err) < 0)
		return JF_CLI_BAD_USAGE;
	if (!strcmp(opt, "--cpuid-0x15.eax"))
		in->pt.cpuid_0x15_eax = v;
	else
		in->pt.cpuid_0x15_ebx = v;
	return 1;
}

/* Whether libipt's block decoder ends blocks at direct jumps: when the consumer needs
 * them cut there and does not cut them itself. */
static int libipt_ends_at_jumps(struct jf_cli_inputs *in)
{
	in->jumps_left_in_blocks = in->split_blocks && in->cuts_jumps;
	return in->split_blocks && !in->cuts_jumps;
}

/* A perf.data session. Its images go into the same code map as --raw/--elf ones, which
 * is the map the listings read instructions from (see jf_perf_images_use_one_map). */
static struct jf_decoder *open_perf(struct jf_cli_inputs *in, struct jf_error *err)
{
	struct jf_perf_session_hooks hooks;
	struct jf_perf_session_options opts;
	struct jf_decoder *dec;
	uint32_t auxtrace = 0;
	size_t i;

	memset(&opts, 0, sizeof(opts));
	memset(&hooks, 0, sizeof(hooks));
	if (in->cpu_given) {
		opts.cpu_override = 1;
		opts.cpu_family = in->pt.cpu_family;
		opts.cpu_model = in->pt.cpu_model;
		opts.cpu_stepping = in->pt.cpu_stepping;
	}
	opts.end_on_call = in->split_blocks || in->zones;
	opts.end_on_jump = libipt_ends_at_jumps(in);
	/* Where the code no longer changes, the fast path decodes the buffers: its records
	 * are libipt's with blocks ended at every branch and the block cache's splits joined,
	 * which the commands that split blocks take (cut at jumps here or by the consumer);
	 * stat's counting takes its counts, as on a raw stream. */
	opts.fast_when_settled = (in->split_blocks || in->count_only) && !in->libipt_block;
	opts.count_when_fast = in->count_only;
	opts.decode_ahead_changing = 1;
	opts.join_cache_splits = in->split_blocks;
	if (jf_cli_perf_files_prepare(in, err) < 0)
		return NULL;
	jf_perf_images_use_one_map(in->perf_images, in->map);
	jf_perf_images_hooks(in->perf_images, &hooks);
	/* JIT code: --zone files, and the jit-PID.dump files the sideband names. */
	if (!in->zones && !(in->zones = jf_zone_image_new(in->map, NULL, err)))
		return NULL;
	in->zone_discovery = jf_cli_zone_discovery_new(in->perf_path, in->zones, &hooks);
	if (!in->zone_discovery) {
		jf_fail(err, "out of memory");
		return NULL;
	}
	/* Zone files given already (a recording folder's) are not added again. */
	for (i = 0; i < in->nzone_names; i++)
		jf_cli_zone_discovery_seen(in->zone_discovery, in->zone_names[i]);
	if (jf_perf_auxtrace_type(in->perf_path, &auxtrace, err) < 0)
		return NULL;
	/* CoreSight (cs_etm) recordings go through the CoreSight backend, same hooks. */
	if (auxtrace == JF_PERF_AUXTRACE_CS_ETM)
		dec = jf_perf_cs_decoder_new(in->perf_path, &hooks, err);
	else
		dec = jf_perf_pt_decoder_new_opts(in->perf_path, &hooks, &opts, err);
	if (dec && in->time_synthetic)
		jf_decoder_stats_mut(dec)->time_is_synthetic = 1;
	in->perf_session = dec;
	return jf_zone_filter_new(dec, in->zones, err);
}

int jf_cli_add_recording_zones(struct jf_cli_inputs *in, const char *dir, struct jf_error *err)
{
	char path[4096];
	struct dirent *e;
	DIR *d = opendir(dir);
	int rc = 0;

	if (!d)
		return jf_fail(err, "%s: cannot open recording folder: %s", dir, strerror(errno));
	while (rc == 0 && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if ((strncmp(e->d_name, "jit-", 4) &&
		     strncmp(e->d_name, JF_OBSERVED_CODE_PREFIX, strlen(JF_OBSERVED_CODE_PREFIX))) ||
		    n < 9 || strcmp(e->d_name + n - 5, ".dump"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		rc = jf_cli_add_zone(in, path, err);
	}
	closedir(d);
	return rc;
}

/* A count in manifest.json: a whole number from 0 to limit, else 0 (a damaged manifest's
 * -1e300 or NaN is no count; converting it to an integer would be undefined). */
static uint64_t manifest_count(const cJSON *n, double limit)
{
	if (!cJSON_IsNumber(n) || !(n->valuedouble >= 0 && n->valuedouble <= limit))
		return 0;
	return (uint64_t)n->valuedouble;
}

/* What the recording's manifest says about the trace: whether its timing packets are
 * synthetic (`jitflow record` under QEMU derives them from an instruction count), and
 * whether an IP filter (--filter) left code out of it. */
static void read_manifest(struct jf_cli_inputs *in, const char *dir)
{
	char path[4096];
	struct jf_mapped_file f;
	cJSON *doc, *synthetic, *filter, *spec, *n;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	if (jf_map_file(&f, path, NULL) < 0)
		return;
	doc = f.data ? cJSON_ParseWithLength((const char *)f.data, f.size) : NULL;
	synthetic = cJSON_GetObjectItemCaseSensitive(doc, "synthetic");
	in->time_synthetic = cJSON_GetObjectItemCaseSensitive(synthetic, "timing") != NULL;
	filter = cJSON_GetObjectItemCaseSensitive(doc, "filter");
	spec = cJSON_GetObjectItemCaseSensitive(filter, "spec");
	if (cJSON_IsString(spec)) {
		snprintf(in->recording_filter, sizeof(in->recording_filter), "%s", spec->valuestring);
		n = cJSON_GetObjectItemCaseSensitive(filter, "traced_instructions");
		in->recording_traced = manifest_count(n, 0x1p63);
		n = cJSON_GetObjectItemCaseSensitive(doc, "instructions");
		in->recording_insns = manifest_count(n, 0x1p63);
	}
	n = cJSON_GetObjectItemCaseSensitive(doc, "killed_by_signal");
	in->recording_killed_by = (int)manifest_count(n, 1024);
	cJSON_Delete(doc);
	jf_unmap_file(&f);
}

static int has_file(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* PyPy's log that `jitflow record` wrote (pypylog.log), placed with the blocks the
 * recorder saw run (jit-code.txt), its marks with the TSC reads (clock-reads.txt). */
static int add_recording_pypylog(struct jf_cli_inputs *in, const char *dir, struct jf_error *err)
{
	char log[4096], code[4096], clock[4096];

	snprintf(log, sizeof(log), "%s/pypylog.log", dir);
	snprintf(code, sizeof(code), "%s/jit-code.txt", dir);
	if (access(log, R_OK))
		return 0;
	if (in->cs_snapshot && access(code, R_OK)) {
		/* PyPy's stamps are the host's TSC, which an ETM recording does not have */
		fprintf(stderr, "jitflow: %s: not read: placing its code writes in a CoreSight "
			"recording needs the recorder's jit-code.txt, which %s lacks\n", log, dir);
		return 0;
	}
	snprintf(clock, sizeof(clock), "%s/clock-reads.txt", dir);
	return jf_cli_add_pypylog(in, log, access(code, R_OK) ? NULL : code,
				  access(clock, R_OK) ? NULL : clock, err);
}

int jf_cli_open_recording(struct jf_cli_inputs *in, const char *dir, struct jf_error *err)
{
	if (in->perf_path || in->pt_path)
		return jf_fail(err, "%s: a recording folder and another trace given: one at a time", dir);
	/* `jitflow record` of an AArch64 program: a CoreSight snapshot folder, with the zone
	 * files its runtimes wrote beside it. */
	if (!has_file(dir, "perf.data") && has_file(dir, "snapshot.ini")) {
		if (in->cs_snapshot)
			return jf_fail(err, "%s: a recording folder and --cs-snapshot given: one at a "
				       "time", dir);
		in->cs_snapshot = dir;
		in->recording_dir = dir;
		return jf_cli_add_recording_zones(in, dir, err) < 0 ? -1 :
		       add_recording_pypylog(in, dir, err);
	}
	snprintf(in->recording_perf, sizeof(in->recording_perf), "%s/perf.data", dir);
	in->perf_path = in->recording_perf;
	read_manifest(in, dir);
	in->recording_dir = dir;
	in->recording_has_manifest = has_file(dir, "manifest.json");
	in->recording_has_code = has_file(dir, "code");
	if (jf_cli_add_recording_zones(in, dir, err) < 0 || add_recording_pypylog(in, dir, err) < 0)
		return -1;
	return jf_load_code_pieces(in, dir, err);
}

int jf_cli_add_zone(struct jf_cli_inputs *in, const char *path, struct jf_error *err)
{
	const char *slash = strrchr(path, '/');
	char **names;

	if (!in->zones && !(in->zones = jf_zone_image_new(in->map, NULL, err)))
		return -1;
	if (jf_zone_image_add_file(in->zones, path, err) < 0)
		return -1;
	/* Remember it, so that the perf sideband's mapping of it is not added a second time. */
	names = realloc(in->zone_names, (in->nzone_names + 1) * sizeof(*names));
	if (!names || !(names[in->nzone_names] = strdup(slash ? slash + 1 : path))) {
		if (names)
			in->zone_names = names;
		return jf_fail(err, "out of memory");
	}
	in->zone_names = names;
	in->nzone_names++;
	return 0;
}

/* -j N asked for threads that this input cannot use. */
static void fall_back(struct jf_cli_inputs *in, const char *why)
{
	in->jobs_used = 1;
	if (in->jobs > 1 && in->jobs_given)
		in->serial_reason = why;
}

/* -j N on a raw stream: stat counts with the fast path on each thread; the other commands
 * decode blocks, which end at every direct call and jump whatever the thread count, so
 * that where they end does not depend on how the trace was split (pt_parallel.h). */
static struct jf_decoder *open_pt_parallel(struct jf_cli_inputs *in, struct jf_error *err)
{
	struct jf_pt_parallel_options opt;

	memset(&opt, 0, sizeof(opt));
	opt.jobs = in->jobs;
	opt.segment_size = in->segment_size;
	/* For tests of the path taken where segments do not join (docs/performance.md). */
	opt.no_joins = getenv("JITFLOW_PT_NO_JOINS") != NULL;
	in->jobs_used = in->jobs;
	if (in->count_only && !in->libipt_block)
		return jf_pt_parallel_counter_new(&in->pt, in->map, &opt, &in->parallel, err);
	in->pt.end_on_call = 1;
	in->pt.end_on_jump = 1;
	in->pt.join_cache_splits = 1;
	/* The fast path returns the block decoder's records (pt_fast.h), on each segment. */
	opt.fast = !in->libipt_block;
	opt.parts = in->parts;
	opt.parts_ctx = in->parts_ctx;
	return jf_pt_parallel_decoder_new(&in->pt, in->map, &opt, &in->parallel, err);
}

void jf_cli_describe_jobs(const struct jf_cli_inputs *in, char *buf, size_t size)
{
	const struct jf_pt_parallel_report *r = &in->parallel;

	if (in->serial_reason) {
		snprintf(buf, size, "1 (-j %d not applied: %s)", in->jobs, in->serial_reason);
	} else if (r->segments) {
		int n = snprintf(buf, size, "%d (%llu segments, %llu seams joined, %llu decoded on "
				 "serially", in->jobs_used, (unsigned long long)r->segments,
				 (unsigned long long)r->joins, (unsigned long long)r->serial);
		size_t at = n > 0 && (size_t)n < size ? (size_t)n : size;

		if (r->local_hand_overs && at < size)
			at += (size_t)snprintf(buf + at, size - at,
					       ", %llu hand-overs decoded in place, %llu of them "
					       "by the workers",
					       (unsigned long long)r->local_hand_overs,
					       (unsigned long long)r->ahead_hand_overs);
		if (r->rest_one_thread && at < size)
			snprintf(buf + at, size - at, "; one thread from offset 0x%llx on: the fast "
				 "path hands over there)", (unsigned long long)r->rest_from);
		else if (at < size)
			snprintf(buf + at, size - at, ")");
	} else {
		snprintf(buf, size, "1");
	}
}

struct jf_decoder *jf_cli_open_decoder(struct jf_cli_inputs *in, struct jf_error *err)
{
	/* Where the consumer's work is split too (parts: report and the analysis commands
	 * without views) or there is next to none (stat's counting: its threads hand over
	 * only errors and losses), N threads cost little more CPU than one (1.03x and 1.11x
	 * on foo x2400) and the default is the cores available; elsewhere each flow crosses
	 * threads and two cost ~1.4x the CPU of one (docs/performance.md, "Parallel
	 * decode"), so they only pay on idle cores: one thread unless asked. */
	if (!in->jobs)
		in->jobs = in->parts || (in->count_only && !in->libipt_block) ? cores_available() : 1;
	if (!!in->pt_path + !!in->perf_path + !!in->cs_snapshot > 1) {
		jf_fail(err, "more than one of --pt, --perf and --cs-snapshot given: decode one trace at a time");
		return NULL;
	}
	if (in->pypylog_path) {
		const char *log = in->pypylog_path;

		in->pypylog_path = NULL; /* read once */
		if (jf_cli_add_pypylog(in, log, NULL, NULL, err) < 0)
			return NULL;
	}
	if (in->perf_path) {
		fall_back(in, "perf.data inputs are decoded by one thread");
		return open_perf(in, err);
	}
	if (jf_cli_load_kernel(in, err) < 0)
		return NULL;
	if (in->cs_snapshot) {
		fall_back(in, "CoreSight is decoded by one thread");
		/* The snapshot's memory dumps join the images of --raw/--elf in one code map.
		 * Zone files change that map as the trace goes: then OpenCSD must not decode
		 * ahead of the records that apply (lookahead 1). */
		struct jf_decoder *dec = jf_cs_snapshot_decoder_open(
			in->cs_snapshot, in->map, in->zones ? 1 : JF_CS_SNAPSHOT_LOOKAHEAD, err);

		if (!dec)
			return NULL;
		in->trace_bytes = jf_decoder_stats(dec)->trace_bytes;
		/* OpenCSD 1.3.3 crashes on some corrupt streams: decode in a child process so
		 * that such a trace gives a located error and goes on after it, not a crash.
		 * Zone files change the code map while decoding: then the child decodes in
		 * lockstep and reads this process's map (see isolate.h). */
		if (in->zones)
			return jf_zone_filter_new(jf_isolated_decoder_lockstep(dec, in->map,
									      "OpenCSD", err),
						  in->zones, err);
		return jf_isolated_decoder_new(dec, "OpenCSD", err);
	}
	if (!in->pt_path) {
		jf_fail(err, "no trace given (use --pt FILE, --perf FILE or --cs-snapshot DIR; see --help)");
		return NULL;
	}
	if (jf_map_file(&in->pt_file, in->pt_path, err) < 0)
		return NULL;
	if (in->pt_file.size == 0) {
		/* Most likely a capture that failed; say so rather than print nothing. */
		jf_fail(err, "%s: empty trace file (expected Intel PT data with a PSB)",
			in->pt_path);
		return NULL;
	}
	jf_mapped_file_sequential(&in->pt_file);
	in->pt.trace = in->pt_file.data;
	in->pt.size = in->pt_file.size;
	in->pt.release_consumed = 1;
	/* stat counts with the fast path (decoder/pt_fast.c), on N threads with -j N. */
	if (!in->zones && in->count_only && !in->libipt_block && in->jobs <= 1)
		return jf_pt_fast_counter_new(&in->pt, in->map, err);
	if (!in->zones)
		return open_pt_parallel(in, err);
	in->pt.end_on_call = 1;
	in->pt.end_on_jump = libipt_ends_at_jumps(in);
	/* A marker call must start a block of its own for the zone filter to see it. */
	fall_back(in, "zone files change the code map as the trace goes");
	return jf_zone_filter_new(jf_pt_decoder_new(&in->pt, in->map, err), in->zones, err);
}

void jf_cli_decode_path(const struct jf_cli_inputs *in, struct jf_decoder *dec,
			struct jf_pt_fast_report *out, uint64_t *of)
{
	struct jf_perf_session_report r;

	jf_pt_fast_counter_report(dec, out);
	*of = jf_decoder_stats(dec)->trace_bytes;
	if (!in->perf_session)
		return;
	jf_perf_session_fast_report(in->perf_session, &r);
	if (!r.fast_buffers)
		return;
	out->is_fast = 1;
	out->fast_bytes = r.fast_path_bytes;
	out->hand_overs = r.hand_overs;
	out->resumes = r.resumes;
	out->resyncs = r.resyncs;
	out->changing_stretches = r.changing_stretches;
	out->rollbacks = r.rollbacks;
	out->rollback_fallbacks = r.rollback_fallbacks;
	*of = r.decoded_bytes;
}

uint64_t jf_cli_trace_size(const struct jf_cli_inputs *in)
{
	struct stat st;

	/* perf.data flows are located by file offset: progress is against the file. */
	if (in->perf_path)
		return stat(in->perf_path, &st) == 0 ? (uint64_t)st.st_size : 0;
	if (in->cs_snapshot)
		return in->trace_bytes;
	return in->pt_file.size;
}

/* The flows carry a short error for a damaged zone file; the whole message goes here. */
static void warn_damaged_zones(const struct jf_cli_inputs *in)
{
	const char *msg;
	size_t i;

	for (i = 0; in->zones && (msg = jf_zone_image_damage(in->zones, i)); i++)
		fprintf(stderr, "jitflow: warning: %s; the records before it were used, none after "
			"it\n", msg);
}

/* Decoders that return few records (stat's counters) say how far they are. */
static void show_progress(void *ctx, uint64_t offset, const struct jf_decode_stats *stats)
{
	jf_progress(offset, jf_cli_trace_size(ctx), stats->insns);
}

int jf_cli_drain(struct jf_cli_inputs *in, struct jf_decoder *dec,
		 int (*fn)(void *ctx, const struct jf_flow *f, struct jf_error *err), void *ctx,
		 struct jf_error *err)
{
	const struct jf_flow *flows;
	uint64_t n = 0;
	size_t count, i;
	int rc;

	jf_decoder_on_progress(dec, show_progress, in);
	rc = in->parts ? jf_pt_parallel_run(dec, err) : 1;
	/* In bulk: the fast decoder hands out a stretch between two PSBs at once. */
	while (rc > 0 && (rc = jf_decoder_next_batch(dec, &flows, &count, err)) > 0) {
		for (i = 0; i < count && rc > 0; i++) {
			if (fn(ctx, &flows[i], err) < 0)
				rc = -1;
			else if ((++n & 0xffff) == 0)
				jf_progress(flows[i].offset, jf_cli_trace_size(in),
					    jf_decoder_stats(dec)->insns);
		}
	}
	jf_progress_done();
	warn_damaged_zones(in);
	return rc < 0 ? -1 : 0;
}
