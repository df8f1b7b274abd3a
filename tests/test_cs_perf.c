/* CoreSight perf.data (cs_etm): a file built here (perf_builder.c) around the synthetic
 * ETMv4 trace (cs_synthetic.c) decodes to the program's path, in the library and in
 * `jitflow decode --perf`, and to exactly what Linux perf's own decoder (`perf script
 * --itrace=i1i`, OpenCSD inside) lists when perf is installed. The cs_etm metadata reader
 * takes perf's version 0 and 1 layouts and rejects malformed ones with the offset. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_synthetic.h"
#include "jitflow/perf_cs_etm.h"
#include "perf_builder.h"

enum { CS_PMU = 9, PID = 100, PERF_SAMPLE_IP = 1 };

#define MAGIC_ETMV3 0x3030303030303030ull
#define MAGIC_ETMV4 0x4040404040404040ull
#define MAGIC_ETE 0x5050505050505050ull

static char code_path[512];

/* AUXTRACE_INFO of type cs_etm with the given private words. */
static void auxtrace_info(struct pb *b, const uint64_t *priv, size_t n)
{
	uint8_t body[8 + 64 * 8];
	uint32_t type = JF_PERF_AUXTRACE_CS_ETM, pad = 0;

	memcpy(body, &type, 4);
	memcpy(body + 4, &pad, 4);
	memcpy(body + 8, priv, n * 8);
	pb_raw(b, JF_PERF_RECORD_AUXTRACE_INFO, 0, body, 8 + n * 8);
}

/* Version 0 metadata for one CPU with the synthetic ETM (perf's ETMv4 block: TRCCONFIGR,
 * TRCTRACEIDR, TRCIDR0, TRCIDR1, TRCIDR2, TRCIDR8, TRCAUTHSTATUS). */
static size_t etm_priv(uint64_t *priv)
{
	const uint64_t words[] = { 0, (uint64_t)CS_PMU << 32 | 1, 0, MAGIC_ETMV4, 0,
				   0x1, CS_SYN_TRACE_ID, 0x28000ea1, 0x4100f403, 0x488, 0, 0xcc };

	memcpy(priv, words, sizeof(words));
	return sizeof(words) / 8;
}

/* A process running version A of the program at 0x10000, traced by one ETM; the trace
 * in CoreSight frames (formatted) or raw (as TRBE writes it). */
static void write_perf(const char *path, int raw)
{
	struct pb b;
	struct pb_sid sid = { PID, PID, 1000, 0 };
	uint8_t code[4096], trace[256];
	uint64_t priv[64];
	size_t n;

	memset(code, 0, sizeof(code));
	memcpy(code, cs_syn_code_a, sizeof(cs_syn_code_a));
	snprintf(code_path, sizeof(code_path), "%s/code_a.bin", jf_test_tmpdir());
	jf_test_write_file(code_path, code, sizeof(code));
	if (raw) {
		memcpy(trace, cs_syn_trace, cs_syn_trace_size);
		n = cs_syn_trace_size;
	} else {
		n = cs_syn_frames(cs_syn_trace, cs_syn_trace_size, CS_SYN_TRACE_ID, trace,
				  sizeof(trace));
	}
	pb_init(&b);
	pb_add_attr(&b, CS_PMU, 0, PB_SAMPLE_STD | PERF_SAMPLE_IP, PB_ATTR_SAMPLE_ID_ALL, 1);
	pb_comm(&b, PID, PID, "syn", 1, &sid);
	pb_mmap2(&b, PID, PID, CS_SYN_BASE, sizeof(code), 0, 5, code_path, &sid);
	pb_itrace_start(&b, PID, PID, &sid);
	auxtrace_info(&b, priv, etm_priv(priv));
	sid.time = 2000;
	pb_aux(&b, 0, n, raw ? JF_PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW : 0, &sid);
	pb_auxtrace(&b, trace, n, 0, 0, PID, 0);
	pb_write(&b, path);
	pb_free(&b);
}

/* What version A does from 0x10000 in this trace (see cs_synthetic.c). */
static const char path_a[] =
	"0000000000010000\n0000000000010004\n0000000000010008\n"
	"0000000000010004\n0000000000010008\n"
	"0000000000010004\n0000000000010008\n"
	"000000000001000c\n"
	"0000000000010000\n0000000000010004\n0000000000010008\n"
	"0000000000010004\n0000000000010008\n";

static char *instruction_lines(const char *out)
{
	char *res = calloc(1, strlen(out) + 1);
	const char *p = out;

	assert_non_null(res);
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);

		if (len == 17 && p[0] != '[')
			strncat(res, p, len);
		p += len;
	}
	return res;
}

static void test_cli_decodes_the_program_path(void **state)
{
	char file[600], cmd[1400], *out, *insns;
	int raw;

	for (raw = 0; raw <= 1; raw++) {
		snprintf(file, sizeof(file), "%s/cs%d.data", jf_test_tmpdir(), raw);
		write_perf(file, raw);
		snprintf(cmd, sizeof(cmd), "'%s' decode --perf '%s'", jf_test_cli(), file);
		assert_int_equal(jf_test_run(cmd, &out), 0);
		insns = instruction_lines(out);
		assert_string_equal(insns, path_a);
		free(insns);
		free(out);
	}
}

static void test_same_as_linux_perf(void **state)
{
	char file[600], cmd[1400], *ours, *theirs, *insns, *p;
	struct jf_error err;
	unsigned long long ip;
	size_t len = 0;
	int n = 0;

	jf_test_require_tools("perf version", "perf (linux-perf)");
	(void)err;
	snprintf(file, sizeof(file), "%s/cs-perf.data", jf_test_tmpdir());
	write_perf(file, 0);
	snprintf(cmd, sizeof(cmd), "perf script -i '%s' --itrace=i1i -F ip 2>/dev/null", file);
	assert_int_equal(jf_test_run(cmd, &theirs), 0);
	/* perf prints each instruction's address in hex, right-aligned. */
	insns = calloc(1, strlen(theirs) * 2 + 1);
	assert_non_null(insns);
	for (p = theirs; sscanf(p, "%llx%n", &ip, &n) == 1; p += n)
		len += (size_t)sprintf(insns + len, "%016llx\n", ip);
	/* Debian's perf is linked with OpenCSD: an empty listing means a broken file. */
	if (!len)
		fail_msg("perf lists no instructions of %s:\n%s", file, theirs);
	snprintf(cmd, sizeof(cmd), "'%s' decode --perf '%s'", jf_test_cli(), file);
	assert_int_equal(jf_test_run(cmd, &ours), 0);
	p = instruction_lines(ours);
	assert_string_equal(p, insns);
	assert_string_equal(insns, path_a);
	free(p);
	free(insns);
	free(ours);
	free(theirs);
}

static const uint64_t two_cpus_priv[] = { 0, (uint64_t)CS_PMU << 32 | 2, 0,
	MAGIC_ETMV4, 0, 0x1, 0x10, 0x28000ea1, 0x4100f403, 0x488, 0, 0xcc,
	MAGIC_ETMV4, 1, 0x1, 0x12, 0x28000ea1, 0x4100f403, 0x488, 0, 0xcc };

/* Each CPU's listing of file is the program's path, in jitflow (with no error) and in
 * perf (when installed with OpenCSD). CPU 0 traces as 0x10, CPU 1 as 0x12. perf 6.1
 * decodes every raw (TRBE) buffer with the first CPU's ETM and names that CPU (fixed in
 * later perf): for raw buffers only its instructions, in order, are compared. */
static void assert_both_cpus_run_the_program(const char *file, int raw)
{
	char cmd[1400], *out, line[64];
	const char *p;
	char per_cpu[2][1024] = { "", "" };
	unsigned cpu;
	unsigned long long ip;
	int len;

	/* jitflow: the ranges of each trace ID are the program's (JSON lines). */
	snprintf(cmd, sizeof(cmd), "'%s' decode --perf '%s' --format=jsonl", jf_test_cli(), file);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_null(strstr(out, "\"kind\":\"error\""));
	for (p = out; (p = strstr(p, "{\"kind\":\"range\",\"source\":")); p++) {
		unsigned src;
		unsigned long long start, end;

		assert_int_equal(sscanf(p, "{\"kind\":\"range\",\"source\":%u,\"start\":\"%llx\","
					"\"end\":\"%llx\"", &src, &start, &end), 3);
		assert_true(src == 0x10 || src == 0x12);
		for (ip = start; ip < end; ip += 4) {
			snprintf(line, sizeof(line), "%016llx\n", ip);
			strcat(per_cpu[src == 0x12], line);
		}
	}
	free(out);
	assert_string_equal(per_cpu[0], path_a);
	assert_string_equal(per_cpu[1], path_a);

	if (jf_test_run("perf version >/dev/null 2>&1", NULL) != 0)
		return;
	per_cpu[0][0] = per_cpu[1][0] = 0;
	snprintf(cmd, sizeof(cmd), "perf script -i '%s' --itrace=i1i -F cpu,ip 2>/dev/null", file);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	for (p = out; sscanf(p, " [%u] %llx%n", &cpu, &ip, &len) == 2; p += len) {
		assert_true(cpu <= 1);
		snprintf(line, sizeof(line), "%016llx\n", ip);
		strcat(per_cpu[raw ? 0 : cpu], line);
	}
	free(out);
	if (!per_cpu[0][0] && !per_cpu[1][0])
		return; /* perf without OpenCSD */
	if (raw) {
		char both[1024];

		snprintf(both, sizeof(both), "%s%s", path_a, path_a);
		assert_string_equal(per_cpu[0], both);
		return;
	}
	assert_string_equal(per_cpu[0], path_a);
	assert_string_equal(per_cpu[1], path_a);
}

static void write_code_a(void)
{
	uint8_t code[4096];

	memset(code, 0, sizeof(code));
	memcpy(code, cs_syn_code_a, sizeof(cs_syn_code_a));
	snprintf(code_path, sizeof(code_path), "%s/code_a.bin", jf_test_tmpdir());
	jf_test_write_file(code_path, code, sizeof(code));
}

/* Two CPUs' ETMs (trace IDs 0x10 and 0x12) writing to one formatted buffer, both running
 * version A: each CPU's listing is the program's path, in jitflow and in perf. */
static void test_two_cpus_in_one_buffer(void **state)
{
	char file[600];
	struct pb b;
	struct pb_sid sid = { PID, PID, 1000, 0 };
	uint8_t trace[512];
	size_t n;

	write_code_a();
	n = cs_syn_frames(cs_syn_trace, cs_syn_trace_size, 0x10, trace, sizeof(trace));
	n += cs_syn_frames(cs_syn_trace, cs_syn_trace_size, 0x12, trace + n, sizeof(trace) - n);
	snprintf(file, sizeof(file), "%s/two.data", jf_test_tmpdir());
	pb_init(&b);
	pb_add_attr(&b, CS_PMU, 0, PB_SAMPLE_STD | PERF_SAMPLE_IP, PB_ATTR_SAMPLE_ID_ALL, 1);
	pb_comm(&b, PID, PID, "syn", 1, &sid);
	pb_mmap2(&b, PID, PID, CS_SYN_BASE, 4096, 0, 5, code_path, &sid);
	auxtrace_info(&b, two_cpus_priv, sizeof(two_cpus_priv) / 8);
	pb_aux(&b, 0, n, 0, &sid);
	pb_auxtrace(&b, trace, n, 0, 0, PID, 0);
	pb_write(&b, file);
	pb_free(&b);
	assert_both_cpus_run_the_program(file, 0);
}

/* As perf writes it when a thread starts late on another CPU: the AUX data of both CPUs
 * comes first in the file, the MMAP2 of the code they ran (earlier in time) after it.
 * Sideband applies at its time, so the code is there when each buffer decodes: in one
 * formatted buffer (ETR), and in one raw buffer per CPU (TRBE), where the other CPU's
 * stream is not missing but elsewhere. */
static void test_mmap_after_the_aux_data(void **state)
{
	char file[600];
	struct pb b;
	struct pb_sid sid = { PID, PID, 1000, 0 };
	uint8_t trace[512];
	size_t n, cpu;
	int raw;

	write_code_a();
	for (raw = 0; raw <= 1; raw++) {
		snprintf(file, sizeof(file), "%s/late%d.data", jf_test_tmpdir(), raw);
		pb_init(&b);
		/* perf reads the AUX flags (raw or formatted) only with the index. */
		b.auxtrace_index = 1;
		pb_add_attr(&b, CS_PMU, 0, PB_SAMPLE_STD | PERF_SAMPLE_IP, PB_ATTR_SAMPLE_ID_ALL,
			    1);
		pb_comm(&b, PID, PID, "syn", 1, &sid);
		auxtrace_info(&b, two_cpus_priv, sizeof(two_cpus_priv) / 8);
		if (!raw) {
			n = cs_syn_frames(cs_syn_trace, cs_syn_trace_size, 0x10, trace,
					  sizeof(trace));
			n += cs_syn_frames(cs_syn_trace, cs_syn_trace_size, 0x12, trace + n,
					   sizeof(trace) - n);
			sid.time = 3000;
			pb_aux(&b, 0, n, 0, &sid);
			pb_auxtrace(&b, trace, n, 0, 0, PID, 0);
		}
		for (cpu = 0; raw && cpu < 2; cpu++) {
			sid.time = 3000 + cpu;
			sid.cpu = (uint32_t)cpu;
			pb_aux(&b, 0, cs_syn_trace_size, JF_PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW,
			       &sid);
			pb_auxtrace(&b, cs_syn_trace, cs_syn_trace_size, 0, (uint32_t)cpu, PID,
				    (uint32_t)cpu);
		}
		sid.time = 2000;
		sid.cpu = 1;
		pb_mmap2(&b, PID, PID, CS_SYN_BASE, 4096, 0, 5, code_path, &sid);
		pb_write(&b, file);
		pb_free(&b);
		assert_both_cpus_run_the_program(file, raw);
	}
}

/* JIT-style code replacement between two AUX buffers: a second MMAP2 puts version B at
 * the same address. The first buffer runs A, the second (its own sync and address, as
 * every AUX buffer has) runs B: mov; (nop; nop; subs; b.ne) taken, then not taken. */
static void test_code_replaced_between_buffers(void **state)
{
	static const uint8_t part_b[] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,   /* A-Sync */
		0x01, 0x00,                                /* Trace Info */
		0x04,                                      /* Trace On */
		0x81, 0x31,                                /* Context: EL1, AArch64, NS */
		0x9d, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0,     /* Address 0x10000 */
		0xd9,                                      /* Atoms E N */
	};
	static const char want_b[] =
		"0000000000010000\n0000000000010004\n0000000000010008\n000000000001000c\n"
		"0000000000010010\n"
		"0000000000010004\n0000000000010008\n000000000001000c\n0000000000010010\n";
	char file[600], code_b_path[600], cmd[1400], *out, *insns, want[1024];
	struct pb b;
	struct pb_sid sid = { PID, PID, 1000, 0 };
	uint8_t code[4096], t1[256], t2[256];
	uint64_t priv[64];
	size_t n1, n2;

	memset(code, 0, sizeof(code));
	memcpy(code, cs_syn_code_a, sizeof(cs_syn_code_a));
	snprintf(code_path, sizeof(code_path), "%s/code_a.bin", jf_test_tmpdir());
	jf_test_write_file(code_path, code, sizeof(code));
	memset(code, 0, sizeof(code));
	memcpy(code, cs_syn_code_b, sizeof(cs_syn_code_b));
	snprintf(code_b_path, sizeof(code_b_path), "%s/code_b.bin", jf_test_tmpdir());
	jf_test_write_file(code_b_path, code, sizeof(code));
	n1 = cs_syn_frames(cs_syn_trace, cs_syn_trace_size, CS_SYN_TRACE_ID, t1, sizeof(t1));
	n2 = cs_syn_frames(part_b, sizeof(part_b), CS_SYN_TRACE_ID, t2, sizeof(t2));
	snprintf(file, sizeof(file), "%s/jit.data", jf_test_tmpdir());
	pb_init(&b);
	pb_add_attr(&b, CS_PMU, 0, PB_SAMPLE_STD | PERF_SAMPLE_IP, PB_ATTR_SAMPLE_ID_ALL, 1);
	pb_comm(&b, PID, PID, "syn", 1, &sid);
	pb_mmap2(&b, PID, PID, CS_SYN_BASE, sizeof(code), 0, 5, code_path, &sid);
	auxtrace_info(&b, priv, etm_priv(priv));
	sid.time = 2000;
	pb_aux(&b, 0, n1, 0, &sid);
	pb_auxtrace(&b, t1, n1, 0, 0, PID, 0);
	sid.time = 3000;
	pb_mmap2(&b, PID, PID, CS_SYN_BASE, sizeof(code), 0, 5, code_b_path, &sid);
	sid.time = 4000;
	pb_aux(&b, n1, n2, 0, &sid);
	pb_auxtrace(&b, t2, n2, n1, 0, PID, 0);
	pb_write(&b, file);
	pb_free(&b);
	snprintf(want, sizeof(want), "%s%s", path_a, want_b);

	snprintf(cmd, sizeof(cmd), "'%s' decode --perf '%s'", jf_test_cli(), file);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	insns = instruction_lines(out);
	assert_string_equal(insns, want);
	free(insns);
	free(out);

	/* No perf comparison here: perf decodes this file's AUX data after reading all of its
	 * sideband, with the last mapping (version B) for both buffers, so it cannot follow
	 * code replaced at the same address; the program's semantics are the oracle. */
}

/* Kernel code: an ETM trace at an EL1 address (code B at KBASE, as a JIT in the kernel or
 * any kernel function would run), a [kernel.kallsyms] MMAP like perf's. With --kernel
 * (an ELF, a vmlinux, holding B at KBASE) the path decodes; without it the gap is a
 * kernel loss, located and counted apart from user space by stat. */
#define KBASE 0xffff800010000000ull

/* n little-endian bytes of v at p. */
static void le(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* An ELF64 AArch64 executable with one loadable segment: code B at KBASE (file offset
 * 4096), as in a vmlinux. */
static void write_vmlinux(const char *path)
{
	uint8_t elf[4096 + sizeof(cs_syn_code_b)];

	memset(elf, 0, sizeof(elf));
	memcpy(elf, "\x7f" "ELF\x02\x01\x01", 7); /* 64-bit, little-endian, version 1 */
	le(elf + 16, 2, 2);                          /* ET_EXEC */
	le(elf + 18, 183, 2);                        /* EM_AARCH64 */
	le(elf + 20, 1, 4);
	le(elf + 24, KBASE, 8);                      /* entry */
	le(elf + 32, 64, 8);                         /* program headers at 64 */
	le(elf + 52, 64, 2);                         /* header size */
	le(elf + 54, 56, 2);                         /* program header size, count */
	le(elf + 56, 1, 2);
	le(elf + 64, 1, 4);                          /* PT_LOAD, R+X */
	le(elf + 68, 5, 4);
	le(elf + 72, 4096, 8);                       /* offset, vaddr, paddr */
	le(elf + 80, KBASE, 8);
	le(elf + 88, KBASE, 8);
	le(elf + 96, sizeof(cs_syn_code_b), 8);      /* file and memory size, align */
	le(elf + 104, sizeof(cs_syn_code_b), 8);
	le(elf + 112, 4096, 8);
	memcpy(elf + 4096, cs_syn_code_b, sizeof(cs_syn_code_b));
	jf_test_write_file(path, elf, sizeof(elf));
}

static void test_kernel_code(void **state)
{
	static const uint8_t trace_k[] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,   /* A-Sync */
		0x01, 0x00,                                /* Trace Info */
		0x04,                                      /* Trace On */
		0x81, 0x31,                                /* Context: EL1, AArch64, NS */
		0x9d, 0, 0, 0, 0x10, 0, 0x80, 0xff, 0xff,  /* Address KBASE */
		0xd9,                                      /* Atoms E N */
	};
	static const unsigned path_b[] = { 0, 4, 8, 0xc, 0x10, 4, 8, 0xc, 0x10 };
	char file[600], vmlinux[600], cmd[1400], want[512], *out, *insns;
	struct pb b;
	struct pb_sid sid = { PID, PID, 1000, 0 };
	uint8_t t[256];
	uint64_t priv[64];
	size_t n, i, len = 0;

	snprintf(vmlinux, sizeof(vmlinux), "%s/vmlinux", jf_test_tmpdir());
	write_vmlinux(vmlinux);
	n = cs_syn_frames(trace_k, sizeof(trace_k), CS_SYN_TRACE_ID, t, sizeof(t));
	snprintf(file, sizeof(file), "%s/kernel.data", jf_test_tmpdir());
	pb_init(&b);
	pb_add_attr(&b, CS_PMU, 0, PB_SAMPLE_STD | PERF_SAMPLE_IP, PB_ATTR_SAMPLE_ID_ALL, 1);
	pb_mmap(&b, -1, 0, KBASE, 0x1000000, KBASE, 1, "[kernel.kallsyms]_text", &sid);
	pb_comm(&b, PID, PID, "syn", 1, &sid);
	auxtrace_info(&b, priv, etm_priv(priv));
	sid.time = 2000;
	pb_aux(&b, 0, n, 0, &sid);
	pb_auxtrace(&b, t, n, 0, 0, PID, 0);
	pb_write(&b, file);
	pb_free(&b);
	for (i = 0; i < sizeof(path_b) / sizeof(path_b[0]); i++)
		len += (size_t)snprintf(want + len, sizeof(want) - len, "%016llx\n",
					KBASE + path_b[i]);

	snprintf(cmd, sizeof(cmd), "'%s' decode --perf '%s' --kernel '%s'", jf_test_cli(), file,
		 vmlinux);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	insns = instruction_lines(out);
	assert_string_equal(insns, want);
	free(insns);
	free(out);

	snprintf(cmd, sizeof(cmd), "'%s' stat --perf '%s' 2>&1", jf_test_cli(), file);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strstr(out, "no code for [kernel.kallsyms]_text"));
	assert_non_null(strstr(out, "kernel code: give it with --kernel vmlinux"));
	assert_non_null(strstr(out, "instructions    0\n"));
	assert_non_null(strstr(out, "  kernel addresses (--kernel): 1 gap (first at offset 0x"));
	assert_non_null(strstr(out, "ip 0xffff800010000000)"));
	free(out);
}

/* perf record --buildid-mmap: the MMAP2 carries the build-id, the file is not at its
 * recorded path, and the cache has perf's old layout (.build-id/ab/cdef... is the file). */
static void test_build_id_in_mmap2(void **state)
{
	static const uint8_t id[20] = { 0xab, 0xcd, 0xef, 1, 2, 3, 4, 5, 6, 7,
					8, 9, 10, 11, 12, 13, 14, 15, 16, 17 };
	char file[600], cache[600], cmd[2400], *out, *insns;
	struct pb b;
	struct pb_sid sid = { PID, PID, 1000, 0 };
	uint8_t trace[256];
	uint64_t priv[64];
	size_t n;

	write_code_a();
	snprintf(cache, sizeof(cache), "%s/cache", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/.build-id/ab' && cp '%s' "
		 "'%s/.build-id/ab/cdef0102030405060708090a0b0c0d0e0f1011'", cache, code_path,
		 cache);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	n = cs_syn_frames(cs_syn_trace, cs_syn_trace_size, CS_SYN_TRACE_ID, trace, sizeof(trace));
	snprintf(file, sizeof(file), "%s/bidmmap.data", jf_test_tmpdir());
	pb_init(&b);
	b.mmap2_build_id = id;
	b.mmap2_build_id_size = 20;
	pb_add_attr(&b, CS_PMU, 0, PB_SAMPLE_STD | PERF_SAMPLE_IP, PB_ATTR_SAMPLE_ID_ALL, 1);
	pb_comm(&b, PID, PID, "syn", 1, &sid);
	pb_mmap2(&b, PID, PID, CS_SYN_BASE, 4096, 0, 5, "/elsewhere/syn", &sid);
	auxtrace_info(&b, priv, etm_priv(priv));
	pb_aux(&b, 0, n, 0, &sid);
	pb_auxtrace(&b, trace, n, 0, 0, PID, 0);
	pb_write(&b, file);
	pb_free(&b);

	snprintf(cmd, sizeof(cmd), "'%s' decode --perf '%s' --buildid-dir '%s'", jf_test_cli(),
		 file, cache);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	insns = instruction_lines(out);
	assert_string_equal(insns, path_a);
	free(insns);
	free(out);
	snprintf(cmd, sizeof(cmd), "HOME='%s' '%s' decode --perf '%s' 2>&1 >/dev/null",
		 jf_test_tmpdir(), jf_test_cli(), file);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strstr(out, "no code for /elsewhere/syn, build-id "
				    "abcdef0102030405060708090a0b0c0d0e0f1011"));
	free(out);
}

static struct jf_codemap *test_map;

static struct jf_codemap *map_for_pid(void *ctx, int32_t pid)
{
	(void)ctx;
	return pid == PID ? test_map : NULL;
}

static void test_library_offsets_and_missing_code(void **state)
{
	char file[600];
	struct jf_perf_session_hooks hooks;
	struct jf_error err;
	struct jf_decoder *dec;
	struct jf_flow f;
	uint64_t first_block = 0, gaps = 0, blocks = 0;

	snprintf(file, sizeof(file), "%s/lib.data", jf_test_tmpdir());
	write_perf(file, 1);
	/* The process's code map from the hook: the program's ranges. */
	test_map = jf_codemap_new();
	assert_int_equal(jf_codemap_add_bytes(test_map, cs_syn_code_a, sizeof(cs_syn_code_a),
					      CS_SYN_BASE, "A", &err), 0);
	memset(&hooks, 0, sizeof(hooks));
	hooks.codemap_for_pid = map_for_pid;
	dec = jf_perf_cs_decoder_new(file, &hooks, &err);
	if (!dec)
		fail_msg("%s", err.msg);
	while (jf_decoder_next(dec, &f, &err) > 0) {
		if (f.kind == JF_FLOW_BLOCK && blocks++ == 0)
			first_block = f.offset;
		assert_int_equal(f.kind == JF_FLOW_ERROR, 0);
	}
	assert_int_equal(blocks, 6);
	assert_int_equal(jf_decoder_stats(dec)->insns, 13);
	assert_int_equal(jf_decoder_stats(dec)->trace_bytes, cs_syn_trace_size);
	/* Offsets are file offsets: the raw payload's start plus the atom packet's index. */
	assert_true(first_block > 26);
	jf_decoder_free(dec);
	jf_codemap_free(test_map);

	/* No hooks: no code; each address the trace gives is a located gap. */
	dec = jf_perf_cs_decoder_new(file, NULL, &err);
	assert_non_null(dec);
	while (jf_decoder_next(dec, &f, &err) > 0)
		if (f.kind == JF_FLOW_LOST && f.u.lost.reason == JF_LOST_NO_IMAGE) {
			assert_int_equal(f.ip, CS_SYN_BASE);
			gaps++;
		}
	assert_int_equal(gaps, 2);
	assert_int_equal(jf_decoder_stats(dec)->blocks, 0);
	jf_decoder_free(dec);
}

/* Parse the metadata of a file holding only an AUXTRACE_INFO with these words. */
static int parse(const uint64_t *priv, size_t n, struct jf_cs_source **src, uint32_t **cpus,
		 size_t *count, struct jf_error *err)
{
	char file[600];
	struct pb b;
	struct jf_perf_data *data;
	struct jf_perf_cursor cur;
	struct jf_perf_record rec;
	int rc;

	snprintf(file, sizeof(file), "%s/meta.data", jf_test_tmpdir());
	pb_init(&b);
	pb_add_attr(&b, CS_PMU, 0, PB_SAMPLE_STD, PB_ATTR_SAMPLE_ID_ALL, 1);
	auxtrace_info(&b, priv, n);
	pb_write(&b, file);
	pb_free(&b);
	data = jf_perf_data_open(file, err);
	assert_non_null(data);
	jf_perf_data_begin(data, &cur);
	assert_int_equal(jf_perf_data_next(data, &cur, &rec, err), 1);
	rc = jf_perf_cs_etm_sources(&rec, src, cpus, count, err);
	jf_perf_data_close(data);
	return rc;
}

static void test_metadata_layouts(void **state)
{
	/* Version 1: three CPUs, an ETMv4 with one register more than perf 5.x wrote
	 * (TS_SOURCE), an ETE, and a PTM (ETMv3 magic, ETMIDR architecture 3). */
	const uint64_t v1[] = {
		1, (uint64_t)CS_PMU << 32 | 3, 0,
		MAGIC_ETMV4, 2, 8, 0x1, 0x10, 0x28000ea1, 0x4100f403, 0x488, 0, 0xcc, 1,
		MAGIC_ETE, 5, 8, 0x1, 0x12, 0x2801cea1, 0x4100fff0, 0xd0001088, 0, 0xcc,
		0x47705a13,
		MAGIC_ETMV3, 7, 4, 0x10001000, 0x14, 0x34c01ac2, 0x411cf312,
	};
	struct jf_cs_source *src;
	uint32_t *cpus;
	size_t n;
	struct jf_error err;

	assert_int_equal(parse(v1, sizeof(v1) / 8, &src, &cpus, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_int_equal(cpus[0], 2);
	assert_int_equal(src[0].protocol, JF_CS_PROTO_ETMV4I);
	assert_int_equal(jf_cs_source_trace_id(&src[0]), 0x10);
	assert_int_equal(src[0].trcidr[2], 0x488);
	assert_int_equal(cpus[1], 5);
	assert_int_equal(src[1].protocol, JF_CS_PROTO_ETE);
	assert_int_equal(src[1].trcdevarch, 0x47705a13);
	assert_int_equal(jf_cs_source_trace_id(&src[1]), 0x12);
	assert_int_equal(cpus[2], 7);
	assert_int_equal(src[2].protocol, JF_CS_PROTO_PTM);
	assert_int_equal(jf_cs_source_trace_id(&src[2]), 0x14);
	free(src);
	free(cpus);
}

static void test_metadata_errors(void **state)
{
	uint64_t priv[64];
	struct jf_cs_source *src;
	uint32_t *cpus;
	size_t n, words = etm_priv(priv);
	struct jf_error err;

	/* Cut short inside the CPU block. */
	assert_int_equal(parse(priv, words - 3, &src, &cpus, &n, &err), -1);
	assert_non_null(strstr(err.msg, "offset 0x"));
	assert_non_null(strstr(err.msg, "registers"));
	/* A wrong magic number. */
	priv[3] = 0x1234;
	assert_int_equal(parse(priv, words, &src, &cpus, &n, &err), -1);
	assert_non_null(strstr(err.msg, "magic"));
	/* An unknown version, and no CPU. */
	etm_priv(priv);
	priv[0] = 7;
	assert_int_equal(parse(priv, words, &src, &cpus, &n, &err), -1);
	assert_non_null(strstr(err.msg, "version 7"));
	etm_priv(priv);
	priv[1] = (uint64_t)CS_PMU << 32;
	assert_int_equal(parse(priv, words, &src, &cpus, &n, &err), -1);
	assert_non_null(strstr(err.msg, "0 CPUs"));
	/* More CPUs announced than blocks present. */
	etm_priv(priv);
	priv[1] = (uint64_t)CS_PMU << 32 | 2;
	assert_int_equal(parse(priv, words, &src, &cpus, &n, &err), -1);
	assert_non_null(strstr(err.msg, "before CPU block 1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_decodes_the_program_path),
		cmocka_unit_test(test_same_as_linux_perf),
		cmocka_unit_test(test_two_cpus_in_one_buffer),
		cmocka_unit_test(test_mmap_after_the_aux_data),
		cmocka_unit_test(test_code_replaced_between_buffers),
		cmocka_unit_test(test_kernel_code),
		cmocka_unit_test(test_build_id_in_mmap2),
		cmocka_unit_test(test_library_offsets_and_missing_code),
		cmocka_unit_test(test_metadata_layouts),
		cmocka_unit_test(test_metadata_errors),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
