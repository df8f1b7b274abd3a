/* Writes DIR/manifest.json (see manifest.h). */
#include "manifest.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jitflow/json_out.h"
#include "record_filter.h"

static void packet_counts(FILE *f, const struct jf_pt_stats *s)
{
	fprintf(f, "{\"psb\": %llu, \"tnt_packets\": %llu, \"tnt_bits\": %llu, "
		"\"ret_compressed\": %llu, \"tip\": %llu, \"tip_pge\": %llu, \"tip_pgd\": %llu, "
		"\"fup\": %llu, \"mode_exec\": %llu, \"tsc\": %llu, \"mtc\": %llu, \"cyc\": %llu, "
		"\"ptw\": %llu, \"ovf\": %llu}",
		(unsigned long long)s->psb, (unsigned long long)s->tnt_packets,
		(unsigned long long)s->tnt_bits, (unsigned long long)s->ret_compressed,
		(unsigned long long)s->tip, (unsigned long long)s->tip_pge,
		(unsigned long long)s->tip_pgd, (unsigned long long)s->fup,
		(unsigned long long)s->mode_exec, (unsigned long long)s->tsc,
		(unsigned long long)s->mtc, (unsigned long long)s->cyc,
		(unsigned long long)s->ptw, (unsigned long long)s->ovf);
}

int jf_manifest_write(const struct jf_record_state *st, const struct jf_record_options *opt,
		      const struct jf_record_result *res, struct jf_error *err)
{
	char path[PATH_MAX];
	FILE *f;
	unsigned i;
	int first = 1;

	snprintf(path, sizeof(path), "%s/manifest.json", opt->out_dir);
	f = fopen(path, "w");
	if (!f)
		return jf_fail(err, "%s: cannot create: %m", path);
	fprintf(f, "{\n  \"format\": \"jitflow-recording\",\n  \"version\": 1,\n");
	fprintf(f, "  \"recorder\": \"jitflow record (%s)\",\n", res->backend == JF_RECORD_BACKEND_PLUGIN ?
		"qemu-x86_64 -plugin libjitflow_qemu.so" : "qemu-x86_64 -d in_asm,exec,nochain,strace");
	fprintf(f, "  \"backend\": \"%s\",\n", res->backend == JF_RECORD_BACKEND_PLUGIN ? "plugin" : "log");
	fprintf(f, "  \"program\": ");
	jf_json_string(f, st->program);
	fprintf(f, ",\n  \"args\": [");
	for (i = 1; i < (unsigned)opt->argc; i++) {
		if (i > 1)
			fputs(", ", f);
		jf_json_string(f, opt->argv[i]);
	}
	fprintf(f, "],\n  \"exit_status\": %d,\n  \"pid\": %d,\n", res->exit_status, st->pid);
	if (res->term_signal)
		fprintf(f, "  \"killed_by_signal\": %d,\n", res->term_signal);
	fprintf(f, "  \"instructions\": %llu,\n  \"blocks\": %llu,\n  \"pt_bytes\": %llu,\n",
		(unsigned long long)res->instructions, (unsigned long long)res->blocks,
		(unsigned long long)res->pt_bytes);
	fprintf(f, "  \"seconds\": %.3f,\n  \"recorder_cpu_seconds\": %.3f,\n"
		"  \"qemu_cpu_seconds\": %.3f,\n", res->seconds, res->recorder_cpu_seconds,
		res->qemu_cpu_seconds);
	if (st->filter) {
		fprintf(f, "  \"filter\": {\"spec\": ");
		jf_json_string(f, st->filter->spec);
		fprintf(f, ", \"traced_instructions\": %llu, \"jit_mappings\": %u, "
			"\"jit_mappings_dropped\": %llu},\n", (unsigned long long)st->traced,
			st->filter->nranges - st->filter->nfixed,
			(unsigned long long)st->filter->dropped);
	}
	fprintf(f, "  \"threads\": [");
	for (i = 0; i < st->nthreads; i++) {
		const struct jf_record_thread *t = st->threads[i];

		fprintf(f, "%s\n    {\"tid\": %d, \"queue\": %u, \"instructions\": %llu, "
			"\"traced_instructions\": %llu, \"blocks\": %llu, \"pt_bytes\": %llu, "
			"\"async_events\": %llu, \"lost_events\": %llu, \"hidden_instructions\": %llu, "
			"\"marker_calls\": %llu, \"handler_entries\": %llu, \"ended_in_block\": %s, "
			"\"packets\": ",
			first ? "" : ",", t->tid, t->queue, (unsigned long long)t->instructions,
			(unsigned long long)t->traced,
			(unsigned long long)t->blocks, (unsigned long long)t->stats.bytes,
			(unsigned long long)t->async_events, (unsigned long long)t->lost_events,
			(unsigned long long)t->hidden, (unsigned long long)t->marker_calls, (unsigned long long)t->handler_entries,
			t->ended_in_block ? "true" : "false");
		packet_counts(f, &t->stats);
		fputc('}', f);
		first = 0;
	}
	fprintf(f, "\n  ],\n");
	fprintf(f, "  \"sideband\": {\"mmap2\": %llu, \"syscalls\": %llu, \"signals\": %llu, "
		"\"fork_mixed_stretches\": %llu},\n",
		(unsigned long long)st->mmap_records, (unsigned long long)st->syscalls,
		(unsigned long long)st->signals, (unsigned long long)st->fork_mixed);
	/* How exactly signals were placed: handler entries known from rt_sigaction (plugin),
	 * deliveries whose interrupted branch target never ran (handler left by longjmp),
	 * deliveries written as an OVF, and transfers at no handler. */
	fprintf(f, "  \"signals\": {\"handlers_known\": %s, \"handlers\": %u, "
		"\"target_never_ran\": %llu, \"written_as_overflow\": %llu, "
		"\"unexplained_transfers\": %llu},\n", st->exact_signals ? "true" : "false",
		st->nhandler_set, (unsigned long long)st->signals_target_unknown,
		(unsigned long long)st->signals_lost, (unsigned long long)st->unexplained_transfers);
	/* What QEMU sent: log lines, or the plugin's records (which have no unparsed ones: a
	 * corrupt record stops the stream and is named in not_followed). */
	fprintf(f, "  \"%s\": {\"%s\": %llu, \"unparsed_lines\": %llu, "
		"\"blocks_stopped_before_running\": %llu, "
		"\"blocks_without_bytes\": %llu, \"undecodable_translations\": %llu},\n",
		res->backend == JF_RECORD_BACKEND_PLUGIN ? "plugin_stream" : "log",
		res->backend == JF_RECORD_BACKEND_PLUGIN ? "records" : "lines",
		(unsigned long long)st->log_lines, (unsigned long long)st->garbage_lines,
		(unsigned long long)st->stopped_blocks,
		(unsigned long long)st->unknown_blocks,
		(unsigned long long)jf_block_map_undecodable(st->blocks));
	fprintf(f, "  \"zone_files\": [");
	for (i = 0; i < st->nzone_files; i++) {
		fputs(i ? ", " : "", f);
		jf_json_string(f, st->zone_files[i]);
	}
	fprintf(f, "],\n  \"synthetic\": {\n");
	fprintf(f, "    \"timing\": \"%s\",\n", st->timing ?
		"TSC, MTC and CYC come from an instruction-count clock: 1 instruction = 8 TSC "
		"ticks = 1 CTC tick = 1 core cycle; perf time in ns = instructions executed "
		"by all threads before that point" : "no timing packets");
	fprintf(f, "    \"cpu\": \"CPUID GenuineIntel,6,142,10 and the intel_pt PMU type %d are "
		"made up; the program ran under QEMU user-mode emulation\",\n",
		JF_PERF_INTEL_PT_TYPE);
	fprintf(f, "    \"ptwrite\": \"%s\",\n", st->marker_ptw ?
		"PTW packets at jf_emitter_marker calls (--marker-ptw) are synthetic: no PTWRITE "
		"instruction ran there; payload = the call's ordinal on its thread (1, 2, ...), "
		"which is the k of the thread's k-th zone extension record" :
		"none: jf_emitter_marker calls show as blocks at its address");
	fprintf(f, "    \"interruptions\": \"signals delivered between blocks become FUP+TIP.PGD/"
		"TIP.PGE at the interrupted instruction, or OVF when the log cannot say where\"%s\n",
		st->filter ? "," : "");
	if (st->filter)
		fprintf(f, "    \"filter\": \"an IP filter as Intel PT's address ranges (--filter): only "
			"blocks that start inside it are traced ('jit': anonymous executable memory, "
			"each mapping from its mmap, or mprotect to executable, on); a branch leaving it writes TIP.PGD with its "
			"target (no TNT bit or TIP for the branch), the first block back inside TIP.PGE. "
			"Unlike hardware, no MTC is written outside the filter: a PSB+ before the next "
			"TIP.PGE dates it instead. Positions in jit-code.txt and instruction counts "
			"of the trace are of traced instructions only\"\n");
	fprintf(f, "  },\n  \"not_followed\": [");
	for (i = 0; i < st->nnotes; i++) {
		fputs(i ? ",\n    " : "\n    ", f);
		jf_json_string(f, st->notes[i]);
	}
	fprintf(f, "%s]\n}\n", st->nnotes ? "\n  " : "");
	if (ferror(f) | fclose(f)) {
		jf_fail(err, "%s: write failed: %m (removed: a half manifest is no manifest); the "
			"recording's perf.data and zone files decode without it", path);
		unlink(path);
		return -1;
	}
	return 0;
}
