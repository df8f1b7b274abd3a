/* Snapshot folders that are missing parts or malformed: one clear error naming the file,
 * the line and what was expected; sources that cannot be decoded are reported, not fatal. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cs_synthetic.h"
#include "jitflow/coresight.h"

/* A fresh copy of the synthetic snapshot in its own folder. */
static const char *fresh(void)
{
	static char dir[512];
	static int n;
	char cmd[600];

	snprintf(dir, sizeof(dir), "%s/snap%d", jf_test_tmpdir(), n++);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
	assert_int_equal(system(cmd), 0);
	cs_syn_write_snapshot(dir);
	return dir;
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	jf_test_write_file(path, text, strlen(text));
}

/* Opening dir must fail with a message containing every one of the NULL-terminated
 * fragments. */
static void expect_error(const char *dir, ...)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err = { { 0 } };
	struct jf_decoder *dec = jf_cs_snapshot_decoder_new(dir, map, &err);
	const char *frag;
	va_list ap;

	if (dec)
		fail_msg("snapshot %s opened, expected an error", dir);
	assert_null(strchr(err.msg, '\n'));
	va_start(ap, dir);
	while ((frag = va_arg(ap, const char *)))
		if (!strstr(err.msg, frag))
			fail_msg("error '%s' does not mention '%s'", err.msg, frag);
	va_end(ap);
	jf_codemap_free(map);
}

struct outcome {
	uint64_t blocks, decode_errors, setup_errors;
	char setup_text[64];
};

static struct outcome decode(const char *dir)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err = { { 0 } };
	struct jf_decoder *dec = jf_cs_snapshot_decoder_new(dir, map, &err);
	struct outcome o;
	struct jf_flow f;
	int rc;

	memset(&o, 0, sizeof(o));
	if (!dec)
		fail_msg("%s", err.msg);
	while ((rc = jf_decoder_next(dec, &f, &err)) > 0) {
		if (f.kind == JF_FLOW_BLOCK)
			o.blocks++;
		if (f.kind == JF_FLOW_ERROR && f.u.error.phase == JF_PHASE_CONTAINER) {
			o.setup_errors++;
			memcpy(o.setup_text, f.u.error.text, sizeof(o.setup_text));
		} else if (f.kind == JF_FLOW_ERROR) {
			o.decode_errors++;
		}
	}
	assert_int_equal(rc, 0);
	jf_decoder_free(dec);
	jf_codemap_free(map);
	return o;
}

static void test_good_snapshot(void **state)
{
	struct outcome o = decode(fresh());

	/* A's loop, ret, and A's loop again (the snapshot holds only version A). */
	assert_int_equal(o.blocks, 6);
	assert_int_equal(o.decode_errors + o.setup_errors, 0);
}

static void test_missing_files(void **state)
{
	const char *dir = fresh();
	char path[1024];

	snprintf(path, sizeof(path), "%s/snapshot.ini", dir);
	unlink(path);
	expect_error(dir, "snapshot.ini", "cannot open", NULL);

	dir = fresh();
	snprintf(path, sizeof(path), "%s/etm.ini", dir);
	unlink(path);
	expect_error(dir, "snapshot.ini:6", "device1", "etm.ini", NULL);

	dir = fresh();
	snprintf(path, sizeof(path), "%s/trace.bin", dir);
	unlink(path);
	expect_error(dir, "trace.ini", "buffer0", "trace.bin", NULL);

	dir = fresh();
	snprintf(path, sizeof(path), "%s/code_a.bin", dir);
	unlink(path);
	expect_error(dir, "cpu.ini:9", "dump1", "code_a.bin", NULL);

	dir = fresh();
	snprintf(path, sizeof(path), "%s/trace.ini", dir);
	unlink(path);
	expect_error(dir, "trace.ini", "cannot open", NULL);
}

static void test_malformed_ini(void **state)
{
	const char *dir = fresh();

	put(dir, "snapshot.ini", "[snapshot]\nversion=1.0\n[trace]\nmetadata=trace.ini\n");
	expect_error(dir, "snapshot.ini", "[device_list]", NULL);

	dir = fresh();
	put(dir, "snapshot.ini", "[device_list]\ndevice0=cpu.ini\ndevice1=etm.ini\n");
	expect_error(dir, "snapshot.ini", "metadata", NULL);

	dir = fresh();
	put(dir, "etm.ini", "[device]\nname=ETM_0\nclass=trace_source\ntype=ETM4\n[regs]\n"
			    "TRCCONFIGR 0x1\n");
	expect_error(dir, "etm.ini:6", "expected 'key=value'", NULL);

	dir = fresh();
	put(dir, "etm.ini", "[device\nname=ETM_0\n");
	expect_error(dir, "etm.ini:1", "section header", NULL);

	dir = fresh();
	put(dir, "etm.ini", "name=ETM_0\n");
	expect_error(dir, "etm.ini:1", "before any [section]", NULL);

	dir = fresh();
	put(dir, "cpu.ini", "[device]\nname=cpu_0\nclass=core\n");
	expect_error(dir, "cpu.ini", "type=", NULL);

	dir = fresh();
	{
		char path[1024];
		static const char bin[] = "[device]\nname=ETM\0\x01\x02";

		snprintf(path, sizeof(path), "%s/etm.ini", dir);
		jf_test_write_file(path, bin, sizeof(bin));
		expect_error(dir, "etm.ini", "NUL byte", NULL);
	}
}

static void test_bad_registers(void **state)
{
	const char *dir = fresh();

	put(dir, "etm.ini", "[device]\nname=ETM_0\nclass=trace_source\ntype=ETM4\n[regs]\n"
			    "TRCCONFIGR=0x1\nTRCTRACEIDR=banana\nTRCIDR0=0x28000EA1\n"
			    "TRCIDR2=0x488\n");
	expect_error(dir, "etm.ini:7", "TRCTRACEIDR", "expected a number", "banana", NULL);

	dir = fresh();
	put(dir, "etm.ini", "[device]\nname=ETM_0\nclass=trace_source\ntype=ETM4\n[regs]\n"
			    "TRCCONFIGR=0x1\nTRCTRACEIDR=0x10\nTRCIDR2=0x488\n");
	expect_error(dir, "etm.ini", "TRCIDR0", NULL);

	dir = fresh();
	put(dir, "etm.ini", "[device]\nname=ETM_0\nclass=trace_source\ntype=ETM4\n[regs]\n"
			    "TRCCONFIGR=0x1\nTRCTRACEIDR=0x1ffffffff\nTRCIDR0=0x28000EA1\n"
			    "TRCIDR2=0x488\n");
	expect_error(dir, "etm.ini:7", "32-bit", NULL);
}

static void test_bad_trace_ini(void **state)
{
	const char *dir = fresh();

	put(dir, "trace.ini", "[trace_buffers]\nbuffers=buffer0,buffer1\n[buffer0]\nname=ETB_0\n"
			      "file=trace.bin\nformat=source_data\n[source_buffers]\nETM_0=ETB_0\n");
	expect_error(dir, "trace.ini:2", "buffer1", "no [buffer1] section", NULL);

	dir = fresh();
	put(dir, "trace.ini", "[trace_buffers]\nbuffers=buffer0\n[buffer0]\nname=ETB_0\n"
			      "file=trace.bin\nformat=weird\n[source_buffers]\nETM_0=ETB_0\n");
	expect_error(dir, "trace.ini:6", "format=weird", "source_data", NULL);

	dir = fresh();
	put(dir, "trace.ini", "[trace_buffers]\nbuffers=buffer0\n[buffer0]\nname=ETB_0\n"
			      "file=trace.bin\nformat=source_data\n[source_buffers]\nETM_9=ETB_0\n");
	expect_error(dir, "trace.ini:8", "ETM_9", "[device_list]", NULL);

	dir = fresh();
	put(dir, "trace.ini", "[trace_buffers]\nbuffers=buffer0\n[buffer0]\nname=ETB_0\n"
			      "file=trace.bin\nformat=source_data\n");
	expect_error(dir, "trace.ini", "ETB_0", "[source_buffers]", NULL);

	dir = fresh();
	put(dir, "trace.ini", "[trace_buffers]\nbuffers= , \n");
	expect_error(dir, "trace.ini:2", "no buffer", NULL);
}

static void test_undecodable_sources_are_reported(void **state)
{
	const char *dir = fresh();
	struct outcome o;

	/* The core's type is unknown: its source cannot be decoded, the rest goes on. */
	put(dir, "cpu.ini", "[device]\nname=cpu_0\nclass=core\ntype=Pentium-4\n\n"
			    "[dump1]\nfile=code_a.bin\naddress=0x10000\nlength=0x10\n");
	o = decode(dir);
	assert_int_equal(o.blocks, 0);
	assert_int_equal(o.setup_errors, 1);
	assert_non_null(strstr(o.setup_text, "ETM_0"));
	assert_non_null(strstr(o.setup_text, "Pentium-4"));

	/* An ITM source in a formatted buffer beside the ETM: reported and skipped. */
	dir = fresh();
	put(dir, "snapshot.ini", "[device_list]\ndevice0=cpu.ini\ndevice1=etm.ini\n"
				 "device2=itm.ini\n[trace]\nmetadata=trace.ini\n");
	put(dir, "itm.ini", "[device]\nname=ITM_0\nclass=trace_source\ntype=ITM\n[regs]\n"
			    "ITMTCR(0x3A0)=0x00200006\n");
	put(dir, "trace.ini", "[trace_buffers]\nbuffers=buffer0\n[buffer0]\nname=ETB_0\n"
			      "file=trace.bin\nformat=coresight\n[source_buffers]\nETM_0=ETB_0\n"
			      "ITM_0=ETB_0\n[core_trace_sources]\ncpu_0=ETM_0\n");
	o = decode(dir);
	assert_int_equal(o.setup_errors, 1);
	assert_non_null(strstr(o.setup_text, "ITM_0"));
}

static void test_empty_and_short_buffers(void **state)
{
	const char *dir = fresh();
	struct outcome o;

	put(dir, "trace.bin", "");
	o = decode(dir);
	assert_int_equal(o.blocks, 0);

	dir = fresh();
	put(dir, "trace.bin", "\x01");
	o = decode(dir);
	assert_int_equal(o.blocks, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_snapshot),
		cmocka_unit_test(test_missing_files),
		cmocka_unit_test(test_malformed_ini),
		cmocka_unit_test(test_bad_registers),
		cmocka_unit_test(test_bad_trace_ini),
		cmocka_unit_test(test_undecodable_sources_are_reported),
		cmocka_unit_test(test_empty_and_short_buffers),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
