/* jitflow zone dump FILE [--json]: every record of a zone file (jitdump + jitflow's
 * extension records), decoded; a human listing or JSON lines. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli_output.h"
#include "commands.h"
#include "jitflow/zone.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: jitflow zone dump FILE [--json]\n\n"
		"List every record of a zone file: a perf jitdump file (jit-PID.dump, as V8\n"
		"--perf-prof, CPython -X perf_jit or jitflow's emitter write it) with jitflow's\n"
		"extension records (docs/zone-format.md). Both byte orders are read. Records\n"
		"are listed in sequence order (threads' records reach the file out of order),\n"
		"each with its file offset; when that is not the file's order, or seqs repeat\n"
		"or are missing, a last line says how often and where first.\n\n"
		"  --json, --format=jsonl   one JSON object per line: a \"header\" object, one per\n"
		"                           record (\"record\": its type), a \"summary\" object,\n"
		"                           and an \"order\" object when the above applies\n\n"
		"Code bytes are summarised (size and file offset), not printed. Exit status 1\n"
		"with a one-line reason (file, offset, what was expected) on a malformed file;\n"
		"the records before it are still listed.\n");
}

struct dump {
	FILE *out;
	int json;
	struct jf_zone_reader *r;
};

/* One "key=value" (text) or "\"key\":value" (JSON) field; strings are quoted in JSON. */
static void field_u(struct dump *d, const char *key, uint64_t v)
{
	if (d->json)
		fprintf(d->out, ",\"%s\":%" PRIu64, key, v);
	else
		fprintf(d->out, " %s=%" PRIu64, key, v);
}

static void field_x(struct dump *d, const char *key, uint64_t v)
{
	if (d->json)
		fprintf(d->out, ",\"%s\":\"0x%" PRIx64 "\"", key, v);
	else
		fprintf(d->out, " %s=0x%" PRIx64, key, v);
}

static void field_s(struct dump *d, const char *key, const char *s)
{
	if (d->json) {
		fprintf(d->out, ",\"%s\":", key);
		jf_json_string(d->out, s ? s : "");
	} else {
		/* quoted so that names with spaces stay one field */
		fprintf(d->out, " %s=\"%s\"", key, s ? s : "");
	}
}

static void print_pc_map(struct dump *d, const struct jf_zone_record *rec)
{
	struct jf_zone_pc_entry e;
	uint32_t i;

	if (d->json)
		fprintf(d->out, ",\"entries\":[");
	for (i = 0; i < rec->u.pc_map.count; i++) {
		jf_zone_pc_map_entry(d->r, rec, i, &e);
		if (d->json)
			fprintf(d->out, "%s{\"code_offset\":%" PRIu32 ",\"bytecode_pc\":%" PRIu32
				",\"op_index\":%" PRIu32 ",\"inline_depth\":%u,\"op_kind\":%u}",
				i ? "," : "", e.code_offset, e.bytecode_pc, e.op_index,
				e.inline_depth, e.op_kind);
		else
			fprintf(d->out, "\n    +0x%" PRIx32 " pc=%" PRIu32 " op=%" PRIu32
				" depth=%u kind=%u", e.code_offset, e.bytecode_pc, e.op_index,
				e.inline_depth, e.op_kind);
	}
	if (d->json)
		fprintf(d->out, "]");
}

static void print_debug_info(struct dump *d, const struct jf_zone_record *rec)
{
	struct jf_zone_debug_iter it = { 0, 0 };
	struct jf_zone_debug_entry e;
	int first = 1;

	if (d->json)
		fprintf(d->out, ",\"entries\":[");
	while (jf_zone_debug_entries(d->r, rec, &it, &e)) {
		/* V8 writes "\xff" for "same file as the previous entry" */
		const char *file = strcmp(e.file, "\xff") ? e.file : "(same)";

		if (d->json) {
			fprintf(d->out, "%s{\"addr\":\"0x%" PRIx64 "\",\"line\":%" PRIu32
				",\"discrim\":%" PRIu32 ",\"file\":", first ? "" : ",", e.addr,
				e.line, e.discrim);
			jf_json_string(d->out, file);
			fprintf(d->out, "}");
		} else {
			fprintf(d->out, "\n    0x%" PRIx64 " %s:%" PRIu32, e.addr, file, e.line);
			if (e.discrim)
				fprintf(d->out, " discrim=%" PRIu32, e.discrim);
		}
		first = 0;
	}
	if (d->json)
		fprintf(d->out, "]");
}

static void print_fields(struct dump *d, const struct jf_zone_record *rec)
{
	switch (rec->id) {
	case JF_JITDUMP_CODE_LOAD:
		field_u(d, "pid", rec->u.code_load.pid);
		field_u(d, "tid", rec->u.code_load.tid);
		field_x(d, "vma", rec->u.code_load.vma);
		field_x(d, "addr", rec->u.code_load.addr);
		field_u(d, "size", rec->u.code_load.size);
		field_u(d, "index", rec->u.code_load.index);
		field_s(d, "name", rec->u.code_load.name);
		field_u(d, "code_offset", rec->u.code_load.code_offset);
		break;
	case JF_JITDUMP_CODE_MOVE:
		field_u(d, "pid", rec->u.code_move.pid);
		field_u(d, "tid", rec->u.code_move.tid);
		field_x(d, "vma", rec->u.code_move.vma);
		field_x(d, "old_addr", rec->u.code_move.old_addr);
		field_x(d, "new_addr", rec->u.code_move.new_addr);
		field_u(d, "size", rec->u.code_move.size);
		field_u(d, "index", rec->u.code_move.index);
		break;
	case JF_JITDUMP_CODE_DEBUG_INFO:
		field_x(d, "addr", rec->u.debug_info.addr);
		field_u(d, "entries_count", rec->u.debug_info.count);
		print_debug_info(d, rec);
		break;
	case JF_ZONE_CLOCK:
		field_s(d, "clock", jf_zone_clock_name(rec->u.clock.clock));
		field_u(d, "tick_hz", rec->u.clock.tick_hz);
		field_u(d, "mono_ns", rec->u.clock.mono_ns);
		field_u(d, "ticks", rec->u.clock.ticks);
		break;
	case JF_ZONE_REGION_LOAD:
		field_x(d, "addr", rec->u.region_load.addr);
		field_u(d, "size", rec->u.region_load.size);
		field_s(d, "kind", jf_zone_region_kind_name(rec->u.region_load.kind));
		field_u(d, "trace", rec->u.region_load.trace_id);
		field_u(d, "generation", rec->u.region_load.generation);
		field_u(d, "parent_trace", rec->u.region_load.parent_trace);
		field_u(d, "parent_guard", rec->u.region_load.parent_guard);
		field_u(d, "code_object", rec->u.region_load.code_object);
		field_u(d, "code_index", rec->u.region_load.code_index);
		field_s(d, "name", rec->u.region_load.name);
		break;
	case JF_ZONE_REGION_FREE:
		field_x(d, "addr", rec->u.region_free.addr);
		field_u(d, "size", rec->u.region_free.size);
		break;
	case JF_ZONE_REGION_MOVE:
		field_x(d, "old_addr", rec->u.region_move.old_addr);
		field_x(d, "new_addr", rec->u.region_move.new_addr);
		field_u(d, "size", rec->u.region_move.size);
		break;
	case JF_ZONE_PATCH: {
		char hex[3 * 16 + 4] = "";
		uint32_t i, n = rec->u.patch.size < 16 ? rec->u.patch.size : 16;

		for (i = 0; i < n; i++)
			snprintf(hex + 2 * i, sizeof(hex) - 2 * i, "%02x", rec->u.patch.bytes[i]);
		if (n < rec->u.patch.size)
			strcat(hex, "...");
		field_x(d, "addr", rec->u.patch.addr);
		field_u(d, "size", rec->u.patch.size);
		field_s(d, "bytes", hex);
		field_s(d, "reason", rec->u.patch.reason);
		break;
	}
	case JF_ZONE_GUARD:
		field_u(d, "guard", rec->u.guard.guard_id);
		field_u(d, "trace", rec->u.guard.trace_id);
		field_x(d, "branch", rec->u.guard.branch_addr);
		field_x(d, "stub", rec->u.guard.stub_addr);
		field_u(d, "resume_pc", rec->u.guard.resume_pc);
		if (rec->u.guard.flags)
			field_u(d, "flags", rec->u.guard.flags);
		break;
	case JF_ZONE_PC_MAP:
	case JF_ZONE_INLINE_FRAMES:
		field_x(d, "region", rec->u.pc_map.region_addr);
		field_u(d, "count", rec->u.pc_map.count);
		print_pc_map(d, rec);
		break;
	case JF_ZONE_OP_NAME:
		field_u(d, "op_kind", rec->u.op_name.op_kind);
		field_s(d, "name", rec->u.op_name.name);
		break;
	case JF_ZONE_CODE_OBJECT:
		field_u(d, "id", rec->u.code_object.id);
		field_s(d, "name", rec->u.code_object.name);
		field_s(d, "file", rec->u.code_object.file);
		field_u(d, "line", rec->u.code_object.line);
		break;
	case JF_ZONE_INTERP_RANGE:
		field_s(d, "kind", jf_zone_interp_kind_name(rec->u.interp_range.kind));
		field_x(d, "start", rec->u.interp_range.start);
		field_x(d, "end", rec->u.interp_range.end);
		field_s(d, "name", rec->u.interp_range.name);
		break;
	case JF_ZONE_THREAD_NAME:
		field_u(d, "thread", rec->u.thread_name.tid);
		field_s(d, "name", rec->u.thread_name.name);
		break;
	case JF_ZONE_EVENT:
		field_s(d, "kind", jf_zone_event_kind_name(rec->u.event.kind));
		field_u(d, "arg", rec->u.event.arg);
		break;
	case JF_ZONE_MARKER:
		field_x(d, "marker_addr", rec->u.marker.addr);
		field_s(d, "methods", rec->u.marker.methods == 3 ? "calls+ptwrite"
				      : rec->u.marker.methods == 2 ? "ptwrite"
				      : rec->u.marker.methods == 1 ? "calls" : "none");
		break;
	}
}

static void print_record(struct dump *d, const struct jf_zone_record *rec)
{
	int ext = rec->id > JF_ZONE_ID_BASE && rec->id <= JF_ZONE_ID_LAST;

	if (d->json) {
		fprintf(d->out, "{\"record\":\"%s\",\"offset\":%" PRIu64 ",\"type_id\":%" PRIu32
			",\"size\":%" PRIu32 ",\"timestamp\":%" PRIu64, jf_zone_record_name(rec->id),
			rec->offset, rec->id, rec->size, rec->timestamp);
		if (ext)
			fprintf(d->out, ",\"seq\":%" PRIu64 ",\"tid\":%" PRIu32, rec->seq, rec->tid);
	} else {
		fprintf(d->out, "%08" PRIx64 " %-19s ts=%" PRIu64, rec->offset,
			jf_zone_record_name(rec->id), rec->timestamp);
		if (ext)
			fprintf(d->out, " seq=%" PRIu64 " tid=%" PRIu32, rec->seq, rec->tid);
		if (rec->id == JF_JITDUMP_CODE_UNWINDING_INFO || !strcmp(
			    jf_zone_record_name(rec->id), "UNKNOWN"))
			fprintf(d->out, " id=0x%" PRIx32 " size=%" PRIu32 " (skipped)", rec->id,
				rec->size);
	}
	print_fields(d, rec);
	fprintf(d->out, d->json ? "}\n" : "\n");
}

static void print_header(struct dump *d)
{
	const struct jf_zone_header *h = jf_zone_reader_header(d->r);

	if (d->json) {
		fprintf(d->out, "{\"header\":true,\"file\":");
		jf_json_string(d->out, jf_zone_reader_path(d->r));
		fprintf(d->out, ",\"version\":%" PRIu32 ",\"pid\":%" PRIu32 ",\"elf_mach\":%" PRIu32
			",\"timestamp\":%" PRIu64 ",\"clock\":\"%s\",\"byte_order\":\"%s\"}\n",
			h->version, h->pid, h->elf_mach, h->timestamp,
			h->arch_timestamp ? "arch" : "monotonic", h->swapped ? "swapped" : "native");
	} else {
		fprintf(d->out, "%s: jitdump version %" PRIu32 ", pid %" PRIu32 ", elf_mach %" PRIu32
			", timestamp %" PRIu64 ", clock %s, byte order %s\n",
			jf_zone_reader_path(d->r), h->version, h->pid, h->elf_mach, h->timestamp,
			h->arch_timestamp ? "arch (TSC)" : "monotonic",
			h->swapped ? "swapped" : "native");
	}
}

static void print_summary(struct dump *d)
{
	const struct jf_zone_stats *s = jf_zone_reader_stats(d->r);

	if (d->json)
		fprintf(d->out, "{\"summary\":true,\"records\":%" PRIu64 ",\"code_loads\":%" PRIu64
			",\"unknown_skipped\":%" PRIu64 ",\"unwinding_skipped\":%" PRIu64
			",\"time_backwards\":%" PRIu64 ",\"free_unknown\":%" PRIu64 "}\n",
			s->records, s->by_id[JF_JITDUMP_CODE_LOAD], s->unknown,
			s->unwinding_skipped, s->time_backwards, s->free_unknown);
	else
		fprintf(d->out, "records %" PRIu64 ", code loads %" PRIu64 ", unknown skipped %"
			PRIu64 ", unwinding info skipped %" PRIu64 ", timestamps going back %"
			PRIu64 ", frees of unknown ranges %" PRIu64 "\n", s->records,
			s->by_id[JF_JITDUMP_CODE_LOAD], s->unknown, s->unwinding_skipped,
			s->time_backwards, s->free_unknown);
	/* Records are listed in seq order; say when that is not the file's order, and where
	 * seqs repeat or are missing (records lost or damaged). */
	if (s->runs <= 1 && !s->seq_duplicates && !s->seq_gaps)
		return;
	if (d->json)
		fprintf(d->out, "{\"order\":true,\"runs\":%" PRIu64 ",\"seq_duplicates\":%" PRIu64
			",\"first_duplicate_offset\":%" PRIu64 ",\"seq_gaps\":%" PRIu64
			",\"seq_missing\":%" PRIu64 ",\"first_gap_offset\":%" PRIu64
			",\"first_gap_after_seq\":%" PRIu64 "}\n", s->runs, s->seq_duplicates,
			s->first_duplicate_offset, s->seq_gaps, s->seq_missing, s->first_gap_offset,
			s->first_gap_after);
	if (d->json)
		return;
	fprintf(d->out, "listed in seq order from %" PRIu64 " runs of the file", s->runs);
	if (s->seq_duplicates)
		fprintf(d->out, "; seq duplicates %" PRIu64 " (first at offset %" PRIu64 ")",
			s->seq_duplicates, s->first_duplicate_offset);
	if (s->seq_gaps)
		fprintf(d->out, "; seqs missing %" PRIu64 " in %" PRIu64 " gaps (first after seq %"
			PRIu64 ", before offset %" PRIu64 ")", s->seq_missing, s->seq_gaps,
			s->first_gap_after, s->first_gap_offset);
	fputc('\n', d->out);
}

static int zone_dump(int argc, char **argv)
{
	struct dump d = { stdout, 0, NULL };
	struct jf_zone_record rec;
	struct jf_error err = { "" };
	const char *path = NULL;
	int i, rc;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return JF_EXIT_OK;
		} else if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "--format=jsonl")) {
			d.json = 1;
		} else if (!strcmp(argv[i], "--format=text")) {
			d.json = 0;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "jitflow zone dump: unknown option '%s' (see --help)\n",
				argv[i]);
			return JF_EXIT_USAGE;
		} else if (path) {
			fprintf(stderr, "jitflow zone dump: one file at a time ('%s' and '%s')\n",
				path, argv[i]);
			return JF_EXIT_USAGE;
		} else {
			path = argv[i];
		}
	}
	if (!path) {
		fprintf(stderr, "jitflow zone dump: no file given (see --help)\n");
		return JF_EXIT_USAGE;
	}
	if (jf_zone_reader_open(&d.r, path, &err)) {
		fprintf(stderr, "jitflow zone dump: %s\n", err.msg);
		return JF_EXIT_FAIL;
	}
	print_header(&d);
	while ((rc = jf_zone_next(d.r, &rec, &err)) > 0)
		print_record(&d, &rec);
	print_summary(&d);
	jf_zone_reader_close(d.r);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "jitflow zone dump: writing output failed\n");
		return JF_EXIT_FAIL;
	}
	if (rc < 0) {
		fprintf(stderr, "jitflow zone dump: %s\n", err.msg);
		return JF_EXIT_FAIL;
	}
	return JF_EXIT_OK;
}

int jf_cmd_zone(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "dump"))
		return zone_dump(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return JF_EXIT_OK;
	}
	fprintf(stderr, "jitflow zone: expected a subcommand: dump (see jitflow zone --help)\n");
	return JF_EXIT_USAGE;
}
