/* jitflow stat: what a trace holds and what decoding it lost. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "jitflow/pt_fast.h"

#include "cli_inputs.h"
#include "cli_output.h"
#include "commands.h"
#include "missing_code.h"

enum { MAX_KINDS = 32 };

/* Errors and losses by kind, in order of first appearance. */
struct tally {
	char name[64];
	uint64_t count, bytes;
	uint64_t first_offset;
};

struct stat_result {
	struct tally errors[MAX_KINDS], losses[MAX_KINDS];
	int nerrors, nlosses;
	double seconds;
	char jobs[160];
	struct jf_cli_inputs *in;
	struct jf_missing_code missing;
	struct jf_pt_fast_report fast; /* one thread on the fast path: how it went... */
	uint64_t fast_of;              /* ...over these bytes (jf_cli_decode_path) */
};

static void count(struct tally *t, int *n, const char *name, uint64_t bytes, uint64_t offset)
{
	int i;

	for (i = 0; i < *n; i++) {
		if (!strcmp(t[i].name, name))
			break;
	}
	if (i == *n) {
		if (*n == MAX_KINDS)
			i = MAX_KINDS - 1; /* the last slot collects the rest */
		else {
			snprintf(t[i].name, sizeof(t[i].name), "%s", name);
			t[i].first_offset = offset;
			(*n)++;
		}
	}
	t[i].count++;
	t[i].bytes += bytes;
}

static int tally_flow(void *ctx, const struct jf_flow *f, struct jf_error *err)
{
	struct stat_result *r = ctx;

	jf_missing_code_count(&r->missing, r->in, f);
	if (f->kind == JF_FLOW_ERROR)
		count(r->errors, &r->nerrors, f->u.error.text, 0, f->offset);
	else if (f->kind == JF_FLOW_LOST)
		count(r->losses, &r->nlosses, jf_lost_reason_name(f->u.lost.reason), f->u.lost.bytes,
		      f->offset);
	return 0;
}

static void print_text(const struct jf_decode_stats *s, const struct stat_result *r)
{
	int i;

	printf("trace bytes     %" PRIu64 "\n", s->trace_bytes);
	printf("instructions    %" PRIu64 "\n", s->insns);
	printf("blocks          %" PRIu64 "\n", s->blocks);
	printf("events          %" PRIu64 "\n", s->events);
	printf("errors          %" PRIu64 "\n", s->errors);
	for (i = 0; i < r->nerrors; i++)
		printf("  %-28s %" PRIu64 " (first at offset 0x%" PRIx64 ")\n", r->errors[i].name,
		       r->errors[i].count, r->errors[i].first_offset);
	printf("overflows       %" PRIu64 "\n", s->overflows);
	printf("bytes lost      %" PRIu64 "\n", s->lost_bytes);
	for (i = 0; i < r->nlosses; i++)
		printf("  %-28s %" PRIu64 " times, %" PRIu64 " bytes (first at offset 0x%" PRIx64
		       ")\n", r->losses[i].name, r->losses[i].count, r->losses[i].bytes,
		       r->losses[i].first_offset);
	jf_missing_code_print_text(&r->missing, stdout);
	if (s->has_time)
		printf("time span       %" PRIu64 " %s%s\n", s->last_time - s->first_time,
		       s->time_is_ns ? "ns" : "ticks",
		       s->time_is_synthetic ? " (synthetic: instruction-count clock)" : "");
	else
		printf("time span       unknown (no timing packets)\n");
	printf("decode threads  %s\n", r->jobs);
	if (r->fast.is_fast && r->fast_of) {
		printf("decode path     fast path %.1f%% of the trace bytes, libipt's block decoder "
		       "%.1f%% (%" PRIu64 " hand-overs; %" PRIu64 " errors resynchronised on the "
		       "fast path)\n",
		       100.0 * (double)r->fast.fast_bytes / (double)r->fast_of,
		       100.0 - 100.0 * (double)r->fast.fast_bytes / (double)r->fast_of,
		       r->fast.hand_overs, r->fast.resyncs);
		if (r->fast.changing_stretches || r->fast.rollbacks)
			printf("                %" PRIu64 " stretches decoded ahead over code that "
			       "changes; %" PRIu64 " rolled back where it changed, %" PRIu64
			       " of them to libipt's block decoder from the start\n",
			       r->fast.changing_stretches, r->fast.rollbacks,
			       r->fast.rollback_fallbacks);
	}
	printf("decode time     %.3f s\n", r->seconds);
	if (r->seconds > 0)
		printf("decode speed    %.1f MB/s, %.1f M instructions/s\n",
		       (double)s->trace_bytes / r->seconds / 1e6,
		       (double)s->insns / r->seconds / 1e6);
}

static void print_tallies(const char *key, const struct tally *t, int n)
{
	int i;

	printf(",\"%s\":[", key);
	for (i = 0; i < n; i++) {
		printf("%s{\"kind\":", i ? "," : "");
		jf_json_string(stdout, t[i].name);
		printf(",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"first_offset\":%" PRIu64 "}",
		       t[i].count, t[i].bytes, t[i].first_offset);
	}
	printf("]");
}

static void print_json(const struct jf_decode_stats *s, const struct stat_result *r)
{
	printf("{\"trace_bytes\":%" PRIu64 ",\"instructions\":%" PRIu64 ",\"blocks\":%" PRIu64
	       ",\"events\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"overflows\":%" PRIu64
	       ",\"lost_bytes\":%" PRIu64 ",\"lost_instructions\":%" PRIu64,
	       s->trace_bytes, s->insns, s->blocks, s->events, s->errors, s->overflows,
	       s->lost_bytes, s->lost_insns);
	print_tallies("errors_by_kind", r->errors, r->nerrors);
	print_tallies("losses_by_kind", r->losses, r->nlosses);
	jf_missing_code_print_json(&r->missing, stdout);
	if (s->has_time)
		printf(",\"time\":{\"first\":%" PRIu64 ",\"last\":%" PRIu64 ",\"unit\":\"%s\","
		       "\"synthetic\":%s}", s->first_time, s->last_time,
		       s->time_is_ns ? "ns" : "ticks", s->time_is_synthetic ? "true" : "false");
	else
		printf(",\"time\":null");
	printf(",\"decode_threads\":{\"threads\":%d,\"segments\":%llu,\"joined\":%llu,"
	       "\"serial\":%llu,\"not_applied\":", r->in->parallel.segments ? r->in->jobs_used : 1,
	       (unsigned long long)r->in->parallel.segments,
	       (unsigned long long)r->in->parallel.joins,
	       (unsigned long long)r->in->parallel.serial);
	if (r->in->serial_reason)
		jf_json_string(stdout, r->in->serial_reason);
	else
		printf("null");
	if (r->in->parallel.rest_one_thread)
		printf(",\"one_thread_from\":%llu", (unsigned long long)r->in->parallel.rest_from);
	else
		printf(",\"one_thread_from\":null");
	printf("}");
	if (r->fast.is_fast)
		printf(",\"decode_path\":{\"fast_bytes\":%" PRIu64 ",\"of_bytes\":%" PRIu64
		       ",\"hand_overs\":%" PRIu64 ",\"resumes\":%" PRIu64 ",\"resyncs\":%" PRIu64
		       ",\"changing_stretches\":%" PRIu64 ",\"rollbacks\":%" PRIu64
		       ",\"rollback_fallbacks\":%" PRIu64 "}",
		       r->fast.fast_bytes, r->fast_of, r->fast.hand_overs, r->fast.resumes,
		       r->fast.resyncs, r->fast.changing_stretches, r->fast.rollbacks,
		       r->fast.rollback_fallbacks);
	else
		printf(",\"decode_path\":null");
	printf(",\"decode_seconds\":%.6f}\n", r->seconds);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: jitflow stat INPUTS [--json]\n\n"
		"Decode a trace and count: instructions, blocks, events, trace bytes, errors by\n"
		"kind, overflows, bytes and instructions lost, time span, decode speed; where code\n"
		"was missing, the gaps by file (with the build-id to look for), kernel addresses\n"
		"and unmapped addresses. \"decode threads\" says how many threads decoded (with\n"
		"-j: segments, seams joined and seams decoded on serially, or why one thread);\n"
		"\"decode path\" (one thread) the share of trace bytes the fast path decoded, the\n"
		"rest libipt's block decoder's, how often it handed over to that decoder, and how\n"
		"many errors it reported and resynchronised after itself, as that decoder does\n"
		"(perf.data: of the bytes its AUX buffers' decoders got; the buffers before the\n"
		"sideband's last MMAP are the block decoder's; where code still changes, a second\n"
		"line: the stretches it decoded ahead over such code, and how often a block of them\n"
		"had changed when its record was due, so that it decoded again from there, and how\n"
		"many of those went to the block decoder from the start).\n\n"
		"  --json            one JSON object instead of the table\n"
		"  --decoder=KIND    as below; stat's fast decoder only counts the blocks (the same\n"
		"                    counts; its blocks are cut at every branch), with -j N on N\n"
		"                    threads, one thread from where it hands over\n\n%s",
		jf_cli_inputs_help);
}

int jf_cmd_stat(int argc, char **argv)
{
	struct jf_cli_inputs in;
	struct jf_decoder *dec;
	struct jf_error err = { "" };
	static struct stat_result result;
	struct timespec t0, t1;
	int i, rc, json = 0;

	jf_cli_inputs_init(&in);
	in.count_only = 1;
	/* tally_flow looks only at errors and losses: the counters count the other events
	 * (pt.h), which makes -j N cheaper (nothing to hand between threads for them). */
	in.pt.count_plain_events = 1;
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
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else {
			fprintf(stderr, "jitflow stat: unknown option '%s' (see --help)\n", argv[i]);
			jf_cli_inputs_fini(&in);
			return JF_EXIT_USAGE;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	dec = jf_cli_open_decoder(&in, &err);
	if (!dec)
		goto fail;
	result.in = &in;
	rc = jf_cli_drain(&in, dec, tally_flow, &result, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc < 0) {
		jf_decoder_free(dec);
		goto fail;
	}
	result.seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	jf_cli_describe_jobs(&in, result.jobs, sizeof(result.jobs));
	jf_cli_decode_path(&in, dec, &result.fast, &result.fast_of);
	if (json)
		print_json(jf_decoder_stats(dec), &result);
	else
		print_text(jf_decoder_stats(dec), &result);
	jf_decoder_free(dec);
	jf_cli_inputs_fini(&in);
	return JF_EXIT_OK;
fail:
	fprintf(stderr, "jitflow stat: %s\n", err.msg);
	jf_cli_inputs_fini(&in);
	return JF_EXIT_FAIL;
usage_error:
	fprintf(stderr, "jitflow stat: %s (see --help)\n", err.msg);
	jf_cli_inputs_fini(&in);
	return JF_EXIT_USAGE;
}
