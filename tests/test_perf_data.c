/* The perf.data reader on files built byte by byte (perf_builder.c): every record read back
 * exactly, sample_id trailers, the intel_pt AUXTRACE_INFO, pipe mode, and malformed files
 * (every truncation, corrupted sizes, byte-swapped) giving errors that name the file and
 * the offset. perf itself checks the same files in test_perf_session.c. */
#include "test_support.h"
#include "perf_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/perf_data.h"
#include "jitflow/perf_intel_pt.h"

static const char payload[] = "0123456789abcdef"; /* 16 bytes of "trace" */

struct offsets {
	uint64_t info, conv, comm, mmap2, mmap, itrace, aux, auxtrace, lost, fork, exit, sw,
		swcpu, round, unknown, end;
};

static void build(struct pb *b, struct offsets *o)
{
	static const uint8_t unknown_body[16] = { 1, 2, 3 };
	struct pb_sid sid = { 100, 101, 5000, 3 };
	uint64_t priv[17];

	pb_init(b);
	b->cpuid = "GenuineIntel,6,142,10";
	pb_add_attr(b, PB_INTEL_PT_PMU, PB_CFG_TSC | PB_CFG_MTC | (3ull << 14), PB_SAMPLE_STD,
		    PB_ATTR_SAMPLE_ID_ALL, 77);
	pb_intel_pt_priv(priv, 1, 1 << 20, 20, 42);
	priv[7] = 2; /* have_sched_switch: context switch events */
	o->info = pb_auxtrace_info_intel_pt(b, priv, 17);
	o->conv = pb_time_conv(b, 20, 1 << 20, 42);
	o->comm = pb_comm(b, 100, 101, "minivm", 1, &sid);
	sid.time++;
	o->mmap2 = pb_mmap2(b, 100, 101, 0x400000, 0x2000, 0x1000, 5, "/usr/bin/minivm", &sid);
	sid.time++;
	o->mmap = pb_mmap(b, 100, 101, 0x600000, 0x1000, 0, 0, "/data", &sid);
	sid.time++;
	o->itrace = pb_itrace_start(b, 100, 101, &sid);
	o->aux = pb_aux(b, 4096, 16, 0x1 | 0x8, &sid);
	o->auxtrace = pb_auxtrace(b, payload, 16, 4096, 2, 101, 3);
	o->lost = pb_lost(b, 77, 12, &sid);
	o->fork = pb_fork(b, 0, 102, 100, 102, 101, 6000, &sid);
	o->exit = pb_fork(b, 1, 102, 100, 102, 101, 7000, &sid);
	o->sw = pb_switch(b, 1, &sid);
	o->swcpu = pb_switch_cpu_wide(b, 1, 200, 201, &sid);
	o->round = pb_finished_round(b);
	o->unknown = pb_raw(b, 200, 0, unknown_body, sizeof(unknown_body));
	o->end = pb_finished_round(b) + 8;
}

static const char *tmp_path(const char *name)
{
	static char path[4][512];
	static int n;
	char *p = path[n++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%s", jf_test_tmpdir(), name);
	return p;
}

static void next_ok(struct jf_perf_data *d, struct jf_perf_cursor *cur,
		    struct jf_perf_record *r, uint32_t type, uint64_t offset)
{
	struct jf_error err;

	if (jf_perf_data_next(d, cur, r, &err) != 1)
		fail_msg("record at %llu: %s", (unsigned long long)offset, err.msg);
	assert_int_equal(r->type, type);
	assert_int_equal(r->offset, offset);
}

static void check_sid(const struct jf_perf_record *r, uint64_t time)
{
	assert_int_equal(r->sid.present, JF_PERF_SID_TID | JF_PERF_SID_TIME | JF_PERF_SID_CPU |
						 JF_PERF_SID_ID);
	assert_int_equal(r->sid.pid, 100);
	assert_int_equal(r->sid.tid, 101);
	assert_int_equal(r->sid.time, time);
	assert_int_equal(r->sid.cpu, 3);
	assert_int_equal(r->sid.id, 77);
}

static void test_records_read_back(void **state)
{
	struct pb b;
	struct offsets o;
	const char *path = tmp_path("all.data");
	struct jf_perf_data *d;
	struct jf_perf_cursor cur;
	struct jf_perf_record r;
	struct jf_error err;
	const struct jf_perf_attr *a;

	build(&b, &o);
	pb_write(&b, path);
	d = jf_perf_data_open(path, &err);
	if (!d)
		fail_msg("%s", err.msg);
	assert_int_equal(jf_perf_data_nattrs(d), 1);
	a = jf_perf_data_attr(d, 0);
	assert_int_equal(a->type, PB_INTEL_PT_PMU);
	assert_int_equal(a->size, 128);
	assert_int_equal(a->sample_type, PB_SAMPLE_STD);
	assert_true(a->sample_id_all);
	assert_int_equal(a->nr_ids, 1);
	assert_int_equal(jf_perf_u64(a->ids, 0), 77);
	assert_string_equal(jf_perf_data_cpuid(d), "GenuineIntel,6,142,10");

	jf_perf_data_begin(d, &cur);
	next_ok(d, &cur, &r, JF_PERF_RECORD_AUXTRACE_INFO, o.info);
	assert_int_equal(r.u.auxtrace_info.type, 1);
	assert_int_equal(r.u.auxtrace_info.nr_priv, 17);
	assert_int_equal(jf_perf_u64(r.u.auxtrace_info.priv, 0), PB_INTEL_PT_PMU);

	next_ok(d, &cur, &r, JF_PERF_RECORD_TIME_CONV, o.conv);
	assert_int_equal(r.u.time_conv.time_shift, 20);
	assert_int_equal(r.u.time_conv.time_mult, 1 << 20);
	assert_int_equal(r.u.time_conv.time_zero, 42);
	assert_false(r.u.time_conv.extended);

	next_ok(d, &cur, &r, JF_PERF_RECORD_COMM, o.comm);
	assert_string_equal(r.u.comm.comm, "minivm");
	assert_int_equal(r.u.comm.pid, 100);
	assert_int_equal(r.u.comm.tid, 101);
	assert_true(r.u.comm.exec);
	check_sid(&r, 5000);

	next_ok(d, &cur, &r, JF_PERF_RECORD_MMAP2, o.mmap2);
	assert_string_equal(r.u.mmap.filename, "/usr/bin/minivm");
	assert_int_equal(r.u.mmap.addr, 0x400000);
	assert_int_equal(r.u.mmap.len, 0x2000);
	assert_int_equal(r.u.mmap.pgoff, 0x1000);
	assert_int_equal(r.u.mmap.prot, 5);
	assert_int_equal(r.u.mmap.maj, 8);
	assert_int_equal(r.u.mmap.min, 1);
	assert_int_equal(r.u.mmap.ino, 1234);
	assert_true(r.u.mmap.exec);
	check_sid(&r, 5001);

	next_ok(d, &cur, &r, JF_PERF_RECORD_MMAP, o.mmap);
	assert_string_equal(r.u.mmap.filename, "/data");
	assert_false(r.u.mmap.exec);
	check_sid(&r, 5002);

	next_ok(d, &cur, &r, JF_PERF_RECORD_ITRACE_START, o.itrace);
	assert_int_equal(r.u.itrace_start.pid, 100);
	assert_int_equal(r.u.itrace_start.tid, 101);
	check_sid(&r, 5003);

	next_ok(d, &cur, &r, JF_PERF_RECORD_AUX, o.aux);
	assert_int_equal(r.u.aux.aux_offset, 4096);
	assert_int_equal(r.u.aux.aux_size, 16);
	assert_int_equal(r.u.aux.flags, JF_PERF_AUX_FLAG_TRUNCATED | JF_PERF_AUX_FLAG_COLLISION);
	check_sid(&r, 5003);

	next_ok(d, &cur, &r, JF_PERF_RECORD_AUXTRACE, o.auxtrace);
	assert_int_equal(r.size, 48);
	assert_int_equal(r.u.auxtrace.size, 16);
	assert_int_equal(r.u.auxtrace.offset, 4096);
	assert_int_equal(r.u.auxtrace.reference, 0xfeed);
	assert_int_equal(r.u.auxtrace.idx, 2);
	assert_int_equal(r.u.auxtrace.tid, 101);
	assert_int_equal(r.u.auxtrace.cpu, 3);
	assert_int_equal(r.u.auxtrace.payload_offset, o.auxtrace + 48);
	assert_memory_equal(r.u.auxtrace.payload, payload, 16);
	/* The payload is read in place: the pointer is the file's bytes at payload_offset. */
	assert_ptr_equal(r.u.auxtrace.payload, r.raw + 48);

	next_ok(d, &cur, &r, JF_PERF_RECORD_LOST, o.lost);
	assert_int_equal(r.u.lost.id, 77);
	assert_int_equal(r.u.lost.lost, 12);

	next_ok(d, &cur, &r, JF_PERF_RECORD_FORK, o.fork);
	assert_int_equal(r.u.fork.pid, 102);
	assert_int_equal(r.u.fork.ppid, 100);
	assert_int_equal(r.u.fork.tid, 102);
	assert_int_equal(r.u.fork.ptid, 101);
	assert_int_equal(r.u.fork.time, 6000);
	next_ok(d, &cur, &r, JF_PERF_RECORD_EXIT, o.exit);
	assert_int_equal(r.u.fork.time, 7000);

	next_ok(d, &cur, &r, JF_PERF_RECORD_SWITCH, o.sw);
	assert_true(r.u.cswitch.out);
	check_sid(&r, 5003);
	next_ok(d, &cur, &r, JF_PERF_RECORD_SWITCH_CPU_WIDE, o.swcpu);
	assert_true(r.u.cswitch.out);
	assert_int_equal(r.u.cswitch.next_prev_pid, 200);
	assert_int_equal(r.u.cswitch.next_prev_tid, 201);

	next_ok(d, &cur, &r, JF_PERF_RECORD_FINISHED_ROUND, o.round);
	next_ok(d, &cur, &r, 200, o.unknown);
	assert_false(jf_perf_record_known(r.type));
	assert_int_equal(r.size, 24);
	next_ok(d, &cur, &r, JF_PERF_RECORD_FINISHED_ROUND, o.end - 8);
	assert_int_equal(jf_perf_data_next(d, &cur, &r, &err), 0);
	jf_perf_data_close(d);
	pb_free(&b);
}

static void test_intel_pt_info(void **state)
{
	struct pb b;
	struct offsets o;
	const char *path = tmp_path("info.data");
	struct jf_perf_data *d;
	struct jf_perf_cursor cur;
	struct jf_perf_record r;
	struct jf_error err;
	struct jf_perf_intel_pt pt;
	struct jf_pt_config cfg;

	build(&b, &o);
	pb_write(&b, path);
	d = jf_perf_data_open(path, &err);
	assert_non_null(d);
	jf_perf_data_begin(d, &cur);
	assert_int_equal(jf_perf_data_next(d, &cur, &r, &err), 1);
	assert_int_equal(jf_perf_intel_pt_parse(d, &r, &pt, &err), 0);
	assert_int_equal(pt.pmu_type, PB_INTEL_PT_PMU);
	assert_int_equal(pt.conv.time_shift, 20);
	assert_int_equal(pt.conv.time_mult, 1 << 20);
	assert_int_equal(pt.conv.time_zero, 42);
	assert_true(pt.conv.valid);
	assert_true(pt.per_cpu_mmaps);
	assert_int_equal(pt.have_sched_switch, 2);
	assert_false(pt.snapshot_mode);
	assert_int_equal(pt.tsc_ctc_ratio_n, 84);
	assert_int_equal(pt.tsc_ctc_ratio_d, 2);
	assert_int_equal(pt.max_non_turbo_ratio, 24);
	assert_null(pt.filter);
	/* From the attr config TSC | MTC | period 3, noretcomp not set. */
	assert_true(pt.have_attr);
	assert_true(pt.tsc);
	assert_true(pt.mtc);
	assert_false(pt.cyc);
	assert_true(pt.return_compression);
	assert_int_equal(pt.mtc_period, 3);
	assert_false(pt.timeless);
	assert_int_equal(pt.family, 6);
	assert_int_equal(pt.model, 142);
	assert_int_equal(pt.stepping, 10);

	memset(&cfg, 0, sizeof(cfg));
	jf_perf_intel_pt_config(&pt, &cfg);
	assert_int_equal(cfg.cpu_family, 6);
	assert_int_equal(cfg.cpu_model, 142);
	assert_int_equal(cfg.cpu_stepping, 10);
	assert_int_equal(cfg.cpuid_0x15_eax, 2);
	assert_int_equal(cfg.cpuid_0x15_ebx, 84);
	assert_int_equal(cfg.mtc_freq, 3);
	assert_int_equal(cfg.nom_freq, 24);
	/* ns = 42 + (tsc * 2^20) >> 20 */
	assert_int_equal(jf_tsc_to_ns(&cfg.conv, 1000), 1042);

	/* A shorter array, as an older perf writes (up to PER_CPU_MMAPS): no MTC/CYC. */
	r.u.auxtrace_info.nr_priv = 10;
	assert_int_equal(jf_perf_intel_pt_parse(d, &r, &pt, &err), 0);
	assert_int_equal(pt.mtc_bit, 0);
	assert_false(pt.mtc);
	/* Too short for perf. */
	r.u.auxtrace_info.nr_priv = 9;
	assert_int_equal(jf_perf_intel_pt_parse(d, &r, &pt, &err), -1);
	assert_non_null(strstr(err.msg, "info.data: offset "));
	assert_non_null(strstr(err.msg, "expected at least 10"));
	jf_perf_data_close(d);
	pb_free(&b);
}

/* perf's own dump of the AUXTRACE_INFO (perf report -D) shows the values we decode. */
static void test_perf_dumps_same_info(void **state)
{
	static const struct {
		const char *label;
		int index;
	} fields[] = {
		{ "PMU Type", 0 }, { "Time Shift", 1 }, { "Time Muliplier", 2 },
		{ "Time Zero", 3 }, { "Cap Time Zero", 4 }, { "Have sched_switch", 7 },
		{ "Snapshot mode", 8 }, { "Per-cpu maps", 9 }, { "TSC:CTC numerator", 12 },
		{ "TSC:CTC denominator", 13 }, { "Max non-turbo ratio", 15 },
	};
	const char *path = tmp_path("perf-info.data");
	char cmd[1024], *out = NULL;
	struct jf_perf_data *d;
	struct jf_perf_cursor cur;
	struct jf_perf_record r;
	struct jf_perf_intel_pt pt;
	struct jf_error err;
	uint64_t priv[17], ours[17];
	struct pb b;
	size_t i;

	jf_test_require_tools("perf --version", "perf (linux-perf)");
	pb_init(&b);
	pb_add_attr(&b, PB_INTEL_PT_PMU, PB_CFG_TSC, PB_SAMPLE_STD | 1u, PB_ATTR_SAMPLE_ID_ALL, 1);
	pb_intel_pt_priv(priv, 1, 123456, 17, 987654321);
	pb_auxtrace_info_intel_pt(&b, priv, 17);
	pb_write(&b, path);

	d = jf_perf_data_open(path, &err);
	assert_non_null(d);
	jf_perf_data_begin(d, &cur);
	assert_int_equal(jf_perf_data_next(d, &cur, &r, &err), 1);
	assert_int_equal(jf_perf_intel_pt_parse(d, &r, &pt, &err), 0);
	ours[0] = pt.pmu_type;
	ours[1] = pt.conv.time_shift;
	ours[2] = pt.conv.time_mult;
	ours[3] = pt.conv.time_zero;
	ours[4] = (uint64_t)pt.cap_user_time_zero;
	ours[7] = (uint64_t)pt.have_sched_switch;
	ours[8] = (uint64_t)pt.snapshot_mode;
	ours[9] = (uint64_t)pt.per_cpu_mmaps;
	ours[12] = pt.tsc_ctc_ratio_n;
	ours[13] = pt.tsc_ctc_ratio_d;
	ours[15] = pt.max_non_turbo_ratio;
	jf_perf_data_close(d);

	snprintf(cmd, sizeof(cmd), "perf report -D -i %s 2>&1", path);
	jf_test_run(cmd, &out);
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const char *at = strstr(out, fields[i].label);
		unsigned long long v;

		if (!at)
			fail_msg("perf report -D does not show '%s':\n%s", fields[i].label, out);
		assert_int_equal(sscanf(at + strlen(fields[i].label), " %llu", &v), 1);
		if (v != ours[fields[i].index])
			fail_msg("%s: perf says %llu, jitflow %llu", fields[i].label, v,
				 (unsigned long long)ours[fields[i].index]);
	}
	free(out);
	pb_free(&b);
}

/* Read the whole file; 0 if all records read, -1 (err set) on the first error. */
static int read_all(const char *path, struct jf_error *err)
{
	struct jf_perf_data *d = jf_perf_data_open(path, err);
	struct jf_perf_cursor cur;
	struct jf_perf_record r;
	int rc;

	if (!d)
		return -1;
	jf_perf_data_begin(d, &cur);
	while ((rc = jf_perf_data_next(d, &cur, &r, err)) > 0)
		;
	jf_perf_data_close(d);
	return rc;
}

/* Records of the whole file that end at or before offset n (an AUXTRACE record counts
 * once its 48 header bytes are there: its payload may be cut). */
static size_t whole_records_before(const char *path, size_t n)
{
	struct jf_perf_data *d = jf_perf_data_open(path, NULL);
	struct jf_perf_cursor cur;
	struct jf_perf_record r;
	size_t count = 0;

	assert_non_null(d);
	jf_perf_data_begin(d, &cur);
	while (jf_perf_data_next(d, &cur, &r, NULL) > 0)
		count += r.offset + r.size <= n;
	jf_perf_data_close(d);
	return count;
}

/* A file cut anywhere: cut in the header or attrs it fails naming the file and offset;
 * cut later (the data, the features after it) it reads exactly the records that are whole
 * before the cut, says where the file ends and how much data its header promised beyond
 * that, and returns no error. */
static void test_every_truncation(void **state)
{
	struct pb b;
	struct offsets o;
	const char *path = tmp_path("cut.data"), *whole = tmp_path("whole.data");
	size_t size, n, cut_reads = 0;
	uint8_t *img;
	struct jf_error err;
	uint64_t begin, end;

	build(&b, &o);
	img = pb_image(&b, &size);
	jf_test_write_file(whole, img, size);
	{
		struct jf_perf_data *d = jf_perf_data_open(whole, &err);

		assert_non_null(d);
		jf_perf_data_range(d, &begin, &end);
		assert_int_equal(jf_perf_data_cut(d, NULL, NULL), 0);
		jf_perf_data_close(d);
	}
	for (n = 0; n < size; n++) {
		struct jf_perf_data *d;
		struct jf_perf_cursor cur;
		struct jf_perf_record r;
		uint64_t at, missing;
		size_t count = 0;
		int rc;

		jf_test_write_file(path, img, n);
		memset(&err, 0, sizeof(err));
		d = jf_perf_data_open(path, &err);
		if (!d) {
			/* Only the header and the attrs are needed whole. */
			assert_true(n < begin);
			if (!strstr(err.msg, path) || !strstr(err.msg, ": offset "))
				fail_msg("prefix of %zu bytes: unclear error: %s", n, err.msg);
			continue;
		}
		assert_true(n >= begin);
		assert_int_equal(jf_perf_data_cut(d, &at, &missing), 1);
		assert_int_equal(at, n);
		/* Past the data only features are lost: no data bytes are missing. */
		assert_int_equal(missing, n < end ? end - n : 0);
		jf_perf_data_begin(d, &cur);
		while ((rc = jf_perf_data_next(d, &cur, &r, &err)) > 0)
			count++;
		jf_perf_data_close(d);
		if (rc != 0)
			fail_msg("prefix of %zu bytes: %s", n, err.msg);
		assert_int_equal(count, whole_records_before(whole, n));
		cut_reads++;
	}
	assert_int_equal(cut_reads, size - begin);
	assert_int_equal(read_all(whole, &err), 0);
	free(img);
	pb_free(&b);
}

static void put_u16(uint8_t *img, uint64_t at, uint16_t v)
{
	memcpy(img + at, &v, 2);
}

static void test_corrupt_sizes(void **state)
{
	struct pb b;
	struct offsets o;
	const char *path = tmp_path("bad.data");
	uint64_t recs[6], doff;
	size_t size, i, k;
	uint8_t *img, *bad;
	struct jf_error err;
	char want[64];
	static const uint16_t sizes[] = { 0, 1, 7, 0xffff };

	build(&b, &o);
	recs[0] = o.info; recs[1] = o.comm; recs[2] = o.mmap2;
	recs[3] = o.auxtrace; recs[4] = o.aux; recs[5] = o.unknown;
	img = pb_image(&b, &size);
	bad = malloc(size);
	for (i = 0; i < 6; i++) {
		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			memcpy(bad, img, size);
			put_u16(bad, recs[i] + 6, sizes[k]);
			jf_test_write_file(path, bad, size);
			assert_int_equal(read_all(path, &err), -1);
			snprintf(want, sizeof(want), "bad.data: offset %llu:",
				 (unsigned long long)recs[i]);
			if (!strstr(err.msg, want))
				fail_msg("size %u at %llu: %s", sizes[k],
					 (unsigned long long)recs[i], err.msg);
		}
	}
	/* Sizes that still frame but cut a record's own fields: named, and readable on. */
	memcpy(bad, img, size);
	put_u16(bad, o.comm + 6, 16); /* COMM body too short for its trailer */
	jf_test_write_file(path, bad, size);
	assert_int_equal(read_all(path, &err), -1);
	assert_non_null(strstr(err.msg, "offset"));
	/* The AUXTRACE payload size beyond the end of the data. */
	memcpy(bad, img, size);
	bad[o.auxtrace + 8 + 7] = 0x7f;
	jf_test_write_file(path, bad, size);
	assert_int_equal(read_all(path, &err), -1);
	snprintf(want, sizeof(want), "offset %llu: AUXTRACE payload", (unsigned long long)o.auxtrace);
	assert_non_null(strstr(err.msg, want));
	/* Header fields: a data section said to run past the end of the file is taken as a
	 * cut file (what is there is read, the feature table is not trusted); one that starts
	 * past the end is an error; attr size wrong. */
	memcpy(bad, img, size);
	memset(bad + 48, 0xff, 8);
	jf_test_write_file(path, bad, size);
	{
		struct jf_perf_data *d = jf_perf_data_open(path, &err);
		uint64_t at;

		assert_non_null(d);
		assert_int_equal(jf_perf_data_cut(d, &at, NULL), 1);
		assert_int_equal(at, size);
		assert_int_equal(jf_perf_data_feature(d, JF_PERF_FEAT_CPUID, NULL, NULL, NULL), 0);
		jf_perf_data_close(d);
	}
	memcpy(bad, img, size);
	memset(bad + 40, 0x7f, 8);
	jf_test_write_file(path, bad, size);
	assert_int_equal(read_all(path, &err), -1);
	assert_non_null(strstr(err.msg, "data section"));
	memcpy(bad, img, size);
	bad[16] = 3;
	jf_test_write_file(path, bad, size);
	assert_int_equal(read_all(path, &err), -1);
	assert_non_null(strstr(err.msg, "attr entry size"));
	memcpy(bad, img, size);
	memcpy(&doff, img + 24, 8);
	bad[doff + 4] = 0xff; /* attr.size of the first attr */
	jf_test_write_file(path, bad, size);
	assert_int_equal(read_all(path, &err), -1);
	assert_non_null(strstr(err.msg, "perf_event_attr size"));
	/* Byte-swapped and version 1 files. */
	memcpy(bad, img, size);
	memcpy(bad, "2ELIFREP", 8);
	jf_test_write_file(path, bad, size);
	assert_int_equal(read_all(path, &err), -1);
	assert_non_null(strstr(err.msg, "big-endian"));
	memcpy(bad, "PERFFILE", 8);
	jf_test_write_file(path, bad, size);
	assert_int_equal(read_all(path, &err), -1);
	assert_non_null(strstr(err.msg, "version 1"));
	free(bad);
	free(img);
	pb_free(&b);
}

/* Pipe mode: a 16-byte header, then the attr as a HEADER_ATTR record, then the records. */
static void test_pipe_mode(void **state)
{
	struct pb b, p;
	struct offsets o;
	const char *path = tmp_path("pipe.data");
	uint8_t attr[128 + 8] = { 0 };
	uint32_t asize = 128;
	uint64_t sample_type = PB_SAMPLE_STD, flags = PB_ATTR_SAMPLE_ID_ALL, id = 77, shift;
	uint32_t type = PB_INTEL_PT_PMU;
	struct jf_perf_data *d;
	struct jf_perf_cursor cur;
	struct jf_perf_record r;
	struct jf_error err;
	size_t size;
	uint8_t *img, *file;
	int n = 0;

	build(&b, &o);
	memcpy(attr, &type, 4);
	memcpy(attr + 4, &asize, 4);
	memcpy(attr + 24, &sample_type, 8);
	memcpy(attr + 40, &flags, 8);
	memcpy(attr + 128, &id, 8);
	pb_init(&p);
	pb_raw(&p, JF_PERF_RECORD_HEADER_ATTR, 0, attr, sizeof(attr));
	/* File: "PERFILE2", 16, the HEADER_ATTR record, then b's records. */
	img = pb_image(&b, &size);
	file = malloc(16 + p.len + b.len);
	memcpy(file, "PERFILE2", 8);
	shift = 16;
	memcpy(file + 8, &shift, 8);
	memcpy(file + 16, p.data, p.len);
	memcpy(file + 16 + p.len, b.data, b.len);
	jf_test_write_file(path, file, 16 + p.len + b.len);

	d = jf_perf_data_open(path, &err);
	if (!d)
		fail_msg("%s", err.msg);
	assert_true(jf_perf_data_is_pipe(d));
	assert_int_equal(jf_perf_data_nattrs(d), 1);
	assert_int_equal(jf_perf_data_attr(d, 0)->sample_type, PB_SAMPLE_STD);
	assert_int_equal(jf_perf_u64(jf_perf_data_attr(d, 0)->ids, 0), 77);
	jf_perf_data_begin(d, &cur);
	while (jf_perf_data_next(d, &cur, &r, &err) > 0) {
		if (r.type == JF_PERF_RECORD_COMM) {
			assert_string_equal(r.u.comm.comm, "minivm");
			check_sid(&r, 5000);
		}
		n++;
	}
	assert_int_equal(n, 17); /* HEADER_ATTR + the 16 records */
	jf_perf_data_close(d);
	free(file);
	free(img);
	pb_free(&p);
	pb_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records_read_back),
		cmocka_unit_test(test_intel_pt_info),
		cmocka_unit_test(test_perf_dumps_same_info),
		cmocka_unit_test(test_every_truncation),
		cmocka_unit_test(test_corrupt_sizes),
		cmocka_unit_test(test_pipe_mode),
	};
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
