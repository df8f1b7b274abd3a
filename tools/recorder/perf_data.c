/* perf.data writer (see perf_data.h). */
#include "perf_data.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "pt_stream.h"

/* perf 6.1 refuses attributes larger than the ones it knows (PERF_ATTR_SIZE_VER7). */
enum { ATTR_SIZE = 128, FILE_ATTR_SIZE = ATTR_SIZE + 16, HEADER_SIZE = 104 };
enum { IDS_OFFSET = HEADER_SIZE, ATTRS_OFFSET = IDS_OFFSET + 8,
       DATA_OFFSET = ATTRS_OFFSET + FILE_ATTR_SIZE };
enum { EVENT_ID = 1 };

/* Record types perf adds to the kernel's (tools/lib/perf/include/perf/event.h). */
enum { REC_FINISHED_ROUND = 68, REC_AUXTRACE_INFO = 70, REC_AUXTRACE = 71 };
enum { AUXTRACE_INTEL_PT = 1, AUXTRACE_CS_ETM = 3 };

/* Header feature bits (tools/perf/util/header.h). */
enum { FEAT_HOSTNAME = 3, FEAT_OSRELEASE = 4, FEAT_VERSION = 5, FEAT_ARCH = 6,
       FEAT_NRCPUS = 7, FEAT_CPUDESC = 8, FEAT_CPUID = 9, FEAT_TOTAL_MEM = 10,
       FEAT_CMDLINE = 11, FEAT_EVENT_DESC = 12, FEAT_AUXTRACE = 18, FEAT_CLOCKID = 23 };

/* Intel PT configuration bits (/sys/bus/event_source/devices/intel_pt/format). */
#define PT_CFG_CYC (1ull << 1)
#define PT_CFG_MTC (1ull << 9)
#define PT_CFG_TSC (1ull << 10)
#define PT_CFG_NORETCOMP (1ull << 11)
#define PT_CFG_PTW (1ull << 12)
#define PT_CFG_BRANCH (1ull << 13)
#define PT_CFG_MTC_PERIOD_SHIFT 14
#define PT_CFG_MTC_PERIOD_MASK (0xfull << PT_CFG_MTC_PERIOD_SHIFT)
#define PT_CFG_PSB_PERIOD_SHIFT 24

/* The identity of the CPU the recording pretends to come from: a Kaby Lake laptop part,
 * which has PT with MTC, CYC and PTWRITE-free operation ("family,model,stepping"). */
static const char cpuid_string[] = "GenuineIntel,6,142,10";
static const char cpudesc_string[] = "jitflow recorder: synthetic Intel PT (QEMU emulation)";
static const char event_name[] = "intel_pt//u";

/* A cs_etm recording's machine: a Cortex-A53 r0p4 (MIDR_EL1, as perf writes it). */
static const char arm_cpuid_string[] = "0x00000000410fd034";
static const char arm_cpudesc_string[] = "jitflow recorder: synthetic ETMv4 (QEMU emulation)";
static const char arm_event_name[] = "cs_etm//u";

/* cs_etm configuration bits (/sys/bus/event_source/devices/cs_etm/format): contextid
 * (ETM_OPT_CTXTID) and timestamp (ETM_OPT_TS). */
#define ETM_CFG_CTXTID (1ull << 14)
#define ETM_CFG_TS (1ull << 28)

/* perf's cs_etm AUXTRACE_INFO (tools/perf/util/cs-etm.h): metadata version 1, whose CPU
 * blocks say how many registers follow; the ETMv4 block's magic number. */
enum { CS_HEADER_VERSION = 1, CS_ETMV4_NR_PARAMS = 7 };
#define CS_ETMV4_MAGIC 0x4040404040404040ull

static uint64_t pt_config(int timing)
{
	uint64_t config = PT_CFG_BRANCH |
			  ((uint64_t)JF_PT_PSB_PERIOD_CFG << PT_CFG_PSB_PERIOD_SHIFT);

	if (timing)
		config |= PT_CFG_CYC | PT_CFG_MTC | PT_CFG_TSC |
			  ((uint64_t)JF_PT_MTC_PERIOD << PT_CFG_MTC_PERIOD_SHIFT);
	return config;
}

/* After the first failed write (a full disk) the rest is not written: the file then ends
 * where the disk filled up, and the data after it is counted in pos but not kept. */
static void put(struct jf_perf_writer *w, const void *data, size_t size)
{
	if (size && !w->failed && fwrite(data, 1, size, w->f) != size) {
		w->failed = 1;
		w->write_errno = errno;
		w->failed_at = w->pos;
		fprintf(stderr, "jitflow record: %s: write failed at offset %llu: %s; the "
			"recording stops there (the program runs on)\n", w->path,
			(unsigned long long)w->pos, strerror(errno));
	}
	w->pos += size;
}

static void put_u64(struct jf_perf_writer *w, uint64_t v)
{
	put(w, &v, 8);
}

static void put_u32(struct jf_perf_writer *w, uint32_t v)
{
	put(w, &v, 4);
}

static void put_header(struct jf_perf_writer *w, uint32_t type, uint16_t misc, size_t size)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = (uint16_t)size };

	put(w, &h, sizeof(h));
	w->records++;
}

/* The sample_id_all trailer for sample_type TID|TIME|CPU|IDENTIFIER. */
enum { SAMPLE_ID_SIZE = 32 };
static void put_sample_id(struct jf_perf_writer *w, int pid, int tid, uint64_t time)
{
	put_u32(w, (uint32_t)pid);
	put_u32(w, (uint32_t)tid);
	put_u64(w, time);
	put_u32(w, (uint32_t)w->cpu); /* -1: per-thread buffers are not tied to a CPU */
	put_u32(w, 0);
	put_u64(w, EVENT_ID);
}

static size_t padded(size_t len)
{
	return (len + 1 + 7) & ~(size_t)7;
}

static void put_padded_string(struct jf_perf_writer *w, const char *s, size_t total)
{
	static const char zeros[64];
	size_t len = strlen(s);

	put(w, s, len);
	while (total > len) {
		size_t n = total - len > sizeof(zeros) ? sizeof(zeros) : total - len;

		put(w, zeros, n);
		len += n;
	}
}

static void fill_attr(struct perf_event_attr *attr, const struct jf_perf_writer *w)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = w->cs_etm ? JF_PERF_CS_ETM_TYPE : JF_PERF_INTEL_PT_TYPE;
	attr->size = ATTR_SIZE;
	attr->config = w->cs_etm ? ETM_CFG_CTXTID | ETM_CFG_TS : pt_config(w->timing);
	attr->sample_period = 1;
	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			    PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	attr->disabled = 1;
	attr->enable_on_exec = 1;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->sample_id_all = 1;
	/* The sideband rides on the same event (a real recording adds a dummy:u event). */
	attr->mmap = 1;
	attr->mmap2 = 1;
	attr->comm = 1;
	attr->comm_exec = 1;
	attr->task = 1;
	/* As `perf record -k mono`: perf inject --jit insists on it, and the zone files'
	 * timestamps are put on the same (synthetic) clock. */
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
}

int jf_perf_open(struct jf_perf_writer *w, const char *path, struct jf_error *err)
{
	static const uint8_t zeros[DATA_OFFSET];

	memset(w, 0, sizeof(*w));
	w->f = fopen(path, "wb");
	if (!w->f)
		return jf_fail(err, "%s: cannot create: %m", path);
	w->path = strdup(path);
	w->cpu = -1;
	/* 64 KiB: what a recorder killed (SIGKILL) loses of what it was given, at most */
	setvbuf(w->f, NULL, _IOFBF, 64 << 10);
	put(w, zeros, sizeof(zeros)); /* header, ids and attrs are written at close */
	w->data_start = w->pos;
	return 0;
}

void jf_perf_auxtrace_info(struct jf_perf_writer *w)
{
	enum { NPRIV = 17 };
	uint64_t priv[NPRIV] = { 0 };

	priv[0] = JF_PERF_INTEL_PT_TYPE;    /* PMU type */
	priv[1] = 3;                        /* time_shift: ns = TSC * mult >> shift ... */
	priv[2] = 1;                        /* time_mult: ... = TSC / 8 = instructions */
	priv[3] = 0;                        /* time_zero */
	priv[4] = 1;                        /* cap_user_time_zero */
	priv[5] = PT_CFG_TSC;               /* tsc bit */
	priv[6] = PT_CFG_NORETCOMP;         /* noretcomp bit (left clear in the config) */
	priv[7] = 0;                        /* no sched_switch events: per-thread buffers */
	priv[8] = 0;                        /* not snapshot mode */
	priv[9] = 0;                        /* per-thread, not per-CPU, buffers */
	priv[10] = PT_CFG_MTC;              /* mtc bit */
	priv[11] = PT_CFG_MTC_PERIOD_MASK;  /* mtc_period bits */
	priv[12] = JF_PT_TSC_PER_INSN;      /* TSC/CTC ratio numerator ... */
	priv[13] = 1;                       /* ... and denominator */
	priv[14] = PT_CFG_CYC;              /* cyc bit */
	priv[15] = JF_PT_NONTURBO_RATIO;    /* max non-turbo ratio */
	priv[16] = 0;                       /* no address filter string */

	put_header(w, REC_AUXTRACE_INFO, 0, 8 + 8 + sizeof(priv));
	put_u32(w, AUXTRACE_INTEL_PT);
	put_u32(w, 0);
	put(w, priv, sizeof(priv));
}

void jf_perf_cs_etm_auxtrace_info(struct jf_perf_writer *w, const struct jf_perf_etmv4 *etm)
{
	const uint64_t priv[] = {
		CS_HEADER_VERSION,
		(uint64_t)JF_PERF_CS_ETM_TYPE << 32 | 1, /* PMU type, number of CPUs */
		0,                                       /* not snapshot mode */
		CS_ETMV4_MAGIC, etm->cpu, CS_ETMV4_NR_PARAMS,
		etm->trcconfigr, etm->trctraceidr, etm->trcidr0, etm->trcidr1, etm->trcidr2,
		etm->trcidr8, etm->trcauthstatus,
	};

	w->cs_etm = 1;
	w->cpu = (int32_t)etm->cpu;
	put_header(w, REC_AUXTRACE_INFO, 0, 8 + 8 + sizeof(priv));
	put_u32(w, AUXTRACE_CS_ETM);
	put_u32(w, 0);
	put(w, priv, sizeof(priv));
}

void jf_perf_comm(struct jf_perf_writer *w, int pid, int tid, const char *comm, int exec,
		  uint64_t time)
{
	char name[16];
	size_t len;

	snprintf(name, sizeof(name), "%s", comm); /* the kernel keeps 15 characters */
	len = padded(strlen(name));
	put_header(w, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0,
		   8 + 8 + len + SAMPLE_ID_SIZE);
	put_u32(w, (uint32_t)pid);
	put_u32(w, (uint32_t)tid);
	put_padded_string(w, name, len);
	put_sample_id(w, pid, tid, time);
}

void jf_perf_mmap2(struct jf_perf_writer *w, int pid, int tid, uint64_t addr, uint64_t len,
		   uint64_t pgoff, uint32_t prot, uint32_t flags, const char *filename,
		   uint64_t time)
{
	struct stat st;
	size_t name_len = padded(strlen(filename));
	uint32_t maj = 0, min = 0;
	uint64_t ino = 0;

	if (stat(filename, &st) == 0) {
		maj = major(st.st_dev);
		min = minor(st.st_dev);
		ino = st.st_ino;
	}
	put_header(w, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER,
		   8 + 8 + 24 + 24 + 8 + name_len + SAMPLE_ID_SIZE);
	put_u32(w, (uint32_t)pid);
	put_u32(w, (uint32_t)tid);
	put_u64(w, addr);
	put_u64(w, len);
	put_u64(w, pgoff);
	put_u32(w, maj);
	put_u32(w, min);
	put_u64(w, ino);
	put_u64(w, 0); /* ino_generation */
	put_u32(w, prot);
	put_u32(w, flags);
	put_padded_string(w, filename, name_len);
	put_sample_id(w, pid, tid, time);
}

static void task_record(struct jf_perf_writer *w, uint32_t type, int pid, int ppid, int tid,
			int ptid, uint64_t time)
{
	put_header(w, type, 0, 8 + 16 + 8 + SAMPLE_ID_SIZE);
	put_u32(w, (uint32_t)pid);
	put_u32(w, (uint32_t)ppid);
	put_u32(w, (uint32_t)tid);
	put_u32(w, (uint32_t)ptid);
	put_u64(w, time);
	put_sample_id(w, pid, tid, time);
}

void jf_perf_fork(struct jf_perf_writer *w, int pid, int ppid, int tid, int ptid,
		  uint64_t time)
{
	task_record(w, PERF_RECORD_FORK, pid, ppid, tid, ptid, time);
}

void jf_perf_exit(struct jf_perf_writer *w, int pid, int ppid, int tid, int ptid,
		  uint64_t time)
{
	task_record(w, PERF_RECORD_EXIT, pid, ppid, tid, ptid, time);
}

void jf_perf_itrace_start(struct jf_perf_writer *w, int pid, int tid, uint64_t time)
{
	put_header(w, PERF_RECORD_ITRACE_START, 0, 8 + 8 + SAMPLE_ID_SIZE);
	put_u32(w, (uint32_t)pid);
	put_u32(w, (uint32_t)tid);
	put_sample_id(w, pid, tid, time);
}

void jf_perf_aux(struct jf_perf_writer *w, int pid, int tid, unsigned queue,
		 uint64_t aux_offset, const uint8_t *bytes, uint64_t size, uint64_t time)
{
	enum { AUXTRACE_HEADER = 48 };
	uint64_t padded_size = (size + 7) & ~7ull;
	static const uint8_t zeros[8];

	put_header(w, PERF_RECORD_AUX, 0, 8 + 24 + SAMPLE_ID_SIZE);
	put_u64(w, aux_offset);
	put_u64(w, size);
	put_u64(w, w->aux_flags); /* nothing truncated or overwritten */
	put_sample_id(w, pid, tid, time);

	if (w->index_len == w->index_cap) {
		size_t cap = w->index_cap ? w->index_cap * 2 : 256;
		struct jf_perf_index_entry *n = realloc(w->index, cap * sizeof(*n));

		if (!n) {
			w->failed = 1;
			return;
		}
		w->index = n;
		w->index_cap = cap;
	}
	w->index[w->index_len].offset = w->pos;
	w->index[w->index_len].size = AUXTRACE_HEADER;
	w->index_len++;

	put_header(w, REC_AUXTRACE, 0, AUXTRACE_HEADER);
	put_u64(w, padded_size);
	put_u64(w, aux_offset);
	put_u64(w, time * JF_PT_TSC_PER_INSN); /* reference: the TSC when it was written */
	put_u32(w, queue);
	put_u32(w, (uint32_t)tid);
	put_u32(w, (uint32_t)w->cpu);
	put_u32(w, 0);
	put(w, bytes, (size_t)size);
	/* As perf pads: PT PAD packets, or for ETMv4 the start of an A-Sync that the
	 * buffer's end cuts off. */
	put(w, zeros, (size_t)(padded_size - size));
	w->aux_bytes += size;
}

void jf_perf_finished_round(struct jf_perf_writer *w)
{
	put_header(w, REC_FINISHED_ROUND, 0, 8);
}

void jf_perf_abandon(struct jf_perf_writer *w)
{
	if (!w->f)
		return;
	fclose(w->f);
	w->f = NULL;
	unlink(w->path);
	free(w->index);
	free(w->path);
	w->index = NULL;
	w->path = NULL;
}

/* perf's header strings: u32 length (including NUL, padded to 64), then the bytes. */
static void put_feature_string(struct jf_perf_writer *w, const char *s)
{
	uint32_t len = (uint32_t)((strlen(s) + 1 + 63) & ~(size_t)63);

	put_u32(w, len);
	put_padded_string(w, s, len);
}

static void write_feature(struct jf_perf_writer *w, int feat, const struct jf_perf_info *info)
{
	struct perf_event_attr attr;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
	size_t i;

	switch (feat) {
	case FEAT_HOSTNAME:
		put_feature_string(w, info->hostname ? info->hostname : "localhost");
		break;
	case FEAT_OSRELEASE:
		put_feature_string(w, info->osrelease ? info->osrelease : "unknown");
		break;
	case FEAT_VERSION:
		put_feature_string(w, "6.1.jitflow-recorder");
		break;
	case FEAT_ARCH:
		put_feature_string(w, w->cs_etm ? "aarch64" : "x86_64");
		break;
	case FEAT_NRCPUS:
		put_u32(w, (uint32_t)(ncpu > 0 ? ncpu : 1));
		put_u32(w, (uint32_t)(ncpu > 0 ? ncpu : 1));
		break;
	case FEAT_CPUDESC:
		put_feature_string(w, w->cs_etm ? arm_cpudesc_string : cpudesc_string);
		break;
	case FEAT_CPUID:
		put_feature_string(w, w->cs_etm ? arm_cpuid_string : cpuid_string);
		break;
	case FEAT_TOTAL_MEM:
		put_u64(w, pages > 0 && page_size > 0 ? (uint64_t)pages * (uint64_t)page_size / 1024 : 0);
		break;
	case FEAT_CMDLINE:
		put_u32(w, (uint32_t)(info->argc + 2));
		put_feature_string(w, info->cmdline_argv0 ? info->cmdline_argv0 : "jitflow");
		put_feature_string(w, "record");
		for (i = 0; i < (size_t)info->argc; i++)
			put_feature_string(w, info->argv[i]);
		break;
	case FEAT_EVENT_DESC:
		fill_attr(&attr, w);
		put_u32(w, 1);
		put_u32(w, ATTR_SIZE);
		put(w, &attr, ATTR_SIZE);
		put_u32(w, 1);
		put_feature_string(w, w->cs_etm ? arm_event_name : event_name);
		put_u64(w, EVENT_ID);
		break;
	case FEAT_CLOCKID:
		put_u64(w, 1); /* clock resolution in ns: the synthetic clock counts 1 per ns */
		break;
	case FEAT_AUXTRACE:
		put_u64(w, w->index_len);
		for (i = 0; i < w->index_len; i++) {
			put_u64(w, w->index[i].offset);
			put_u64(w, w->index[i].size);
		}
		break;
	}
}

/* The file header, the event's id and its attribute, at the start of the file. */
static void write_file_header(struct jf_perf_writer *w, uint64_t data_size,
			      const uint64_t bits[4])
{
	struct perf_event_attr attr;

	if (fseek(w->f, 0, SEEK_SET) == 0) {
		uint64_t header[13] = { 0 };
		uint64_t ids_section[2] = { IDS_OFFSET, 8 };
		uint64_t id = EVENT_ID;

		memcpy(&header[0], "PERFILE2", 8);
		header[1] = HEADER_SIZE;
		header[2] = FILE_ATTR_SIZE;
		header[3] = ATTRS_OFFSET;
		header[4] = FILE_ATTR_SIZE;
		header[5] = w->data_start;
		header[6] = data_size;
		header[7] = 0; /* event_types: unused */
		header[8] = 0;
		memcpy(&header[9], bits, 4 * sizeof(bits[0]));
		fwrite(header, sizeof(header), 1, w->f);
		fwrite(&id, 8, 1, w->f);
		fill_attr(&attr, w);
		fwrite(&attr, ATTR_SIZE, 1, w->f);
		fwrite(ids_section, sizeof(ids_section), 1, w->f);
	} else {
		w->failed = 1;
	}
}

/* The header with this data size and no features, on disk before anything else is
 * written (the file position stays at the end). */
static void write_header_now(struct jf_perf_writer *w, uint64_t data_size)
{
	static const uint64_t no_features[4];

	if (fflush(w->f) && !w->failed) {
		w->failed = 1;
		w->write_errno = errno;
		w->failed_at = w->pos;
		return;
	}
	write_file_header(w, data_size, no_features);
	if (fseek(w->f, (long)w->pos, SEEK_SET) || fflush(w->f)) {
		if (!w->failed) {
			w->write_errno = errno;
			w->failed_at = 0;
		}
		w->failed = 1;
	}
}

void jf_perf_write_unfinished_header(struct jf_perf_writer *w)
{
	write_header_now(w, 0);
}

/* The disk filled up (or another write failed): only the header is rewritten, with the
 * data size the recording would have had and no features, so that a reader sees a file
 * cut at the failure and says how much is missing. */
static int close_failed(struct jf_perf_writer *w, uint64_t data_size, struct jf_error *err)
{
	static const uint64_t no_features[4];
	struct stat sb;
	long long written = -1;

	__fpurge(w->f); /* what the disk refused is not tried again by fseek's flush */
	write_file_header(w, data_size, no_features);
	fclose(w->f);
	w->f = NULL;
	if (stat(w->path, &sb) == 0)
		written = (long long)sb.st_size;
	jf_fail(err,
		"%s: write failed at offset %llu: %s; %lld of the recording's %llu bytes are in "
		"the file, and its records up to there decode (the rest is reported lost, as "
		"a cut file)",
		w->path, (unsigned long long)w->failed_at, strerror(w->write_errno), written,
		(unsigned long long)w->pos);
	free(w->index);
	free(w->path);
	w->index = NULL;
	w->path = NULL;
	return -1;
}

int jf_perf_close(struct jf_perf_writer *w, const struct jf_perf_info *info,
		  struct jf_error *err)
{
	static const int features[] = { FEAT_HOSTNAME, FEAT_OSRELEASE, FEAT_VERSION, FEAT_ARCH,
					FEAT_NRCPUS, FEAT_CPUDESC, FEAT_CPUID, FEAT_TOTAL_MEM,
					FEAT_CMDLINE, FEAT_EVENT_DESC, FEAT_AUXTRACE, FEAT_CLOCKID };
	enum { NFEAT = sizeof(features) / sizeof(features[0]) };
	uint64_t sections[NFEAT][2];
	uint64_t data_size = w->pos - w->data_start, table, bits[4] = { 0 };
	size_t i;
	int rc = 0;

	/* First the data size, on disk before the features follow the data: killed from
	 * here on, the file reads as a whole recording without features (with data size 0,
	 * the features would read as records after the last one). */
	if (!w->failed)
		write_header_now(w, data_size);
	if (w->failed)
		return close_failed(w, data_size, err);
	/* Feature table right after the data, then each feature's bytes. */
	table = w->pos;
	for (i = 0; i < NFEAT; i++) {
		sections[i][0] = sections[i][1] = 0;
		put_u64(w, 0);
		put_u64(w, 0);
	}
	for (i = 0; i < NFEAT; i++) {
		sections[i][0] = w->pos;
		write_feature(w, features[i], info);
		sections[i][1] = w->pos - sections[i][0];
		bits[features[i] / 64] |= 1ull << (features[i] % 64);
	}
	if (fseek(w->f, (long)table, SEEK_SET) == 0)
		fwrite(sections, sizeof(sections), 1, w->f);
	else
		w->failed = 1;

	write_file_header(w, data_size, bits);
	if (fclose(w->f) || w->failed)
		rc = jf_fail(err, "%s: write failed", w->path);
	free(w->index);
	free(w->path);
	w->f = NULL;
	return rc;
}
