/* Writes a perf.data file ("PERFILE2") that reads like `perf record -e intel_pt//u` with
 * per-thread AUX buffers, or like `perf record -e cs_etm//u` on one CPU (the AArch64
 * recorder: jf_perf_cs_etm_auxtrace_info instead of jf_perf_auxtrace_info, the ETMv4
 * stream in the AUX records, and an arm64 machine in the header features). For intel_pt: the intel_pt event attribute, AUXTRACE_INFO, sideband records
 * (COMM, MMAP2, FORK, EXIT, ITRACE_START), AUX + AUXTRACE records carrying the PT bytes,
 * and the header features perf looks for (CPUID of a PT-capable Intel CPU, NRCPUS, ARCH,
 * EVENT_DESC, the AUXTRACE index, ...). Layouts follow include/uapi/linux/perf_event.h and
 * perf's documented file format (tools/perf/Documentation/perf.data-file-format.txt).
 *
 * Records are written as they come; only the AUXTRACE index (one entry per chunk of PT
 * bytes) is kept until the end. Time is the recorder's synthetic clock, in nanoseconds. */
#ifndef JITFLOW_RECORDER_PERF_DATA_H
#define JITFLOW_RECORDER_PERF_DATA_H

#include <stdint.h>
#include <stdio.h>

#include <jitflow/error.h>

/* The PMU type a real system assigns to intel_pt is dynamic; this is what a typical Intel
 * machine shows in /sys/bus/event_source/devices/intel_pt/type. */
enum { JF_PERF_INTEL_PT_TYPE = 8 };
/* The same for cs_etm on an Arm machine (a Neoverse N1 server shows 10). */
enum { JF_PERF_CS_ETM_TYPE = 10 };

struct jf_perf_index_entry {
	uint64_t offset, size;
};

struct jf_perf_writer {
	FILE *f;
	char *path;
	uint64_t pos;                 /* file offset of the next byte */
	uint64_t data_start;
	struct jf_perf_index_entry *index;
	size_t index_len, index_cap;
	uint64_t records, aux_bytes;
	int failed;
	int write_errno;              /* why the first failed write failed (ENOSPC: disk full) */
	uint64_t failed_at;           /* the file offset of the first byte that failed */
	int timing;                   /* the PT config has tsc, mtc and cyc set */
	int cs_etm;                   /* a cs_etm recording (set by jf_perf_cs_etm_auxtrace_info) */
	int32_t cpu;                  /* the CPU records name: -1 (per-thread buffers) or the
	                               * one CPU a cs_etm recording traces */
	uint64_t aux_flags;           /* every AUX record's flags */
};

/* The cs_etm description of one trace unit (perf's AUXTRACE_INFO per-CPU block). */
struct jf_perf_etmv4 {
	uint32_t cpu;
	uint64_t trcconfigr, trctraceidr, trcidr0, trcidr1, trcidr2, trcidr8, trcauthstatus;
};

/* An AUX record flag: the buffer holds one trace unit's raw stream, not formatted frames
 * (include/uapi/linux/perf_event.h, PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW). */
#define JF_PERF_AUX_CORESIGHT_RAW 0x100ull

struct jf_perf_info {
	const char *cmdline_argv0;    /* "jitflow" */
	int argc;                     /* the recorded program's command line */
	char **argv;
	const char *hostname, *osrelease;
};

int jf_perf_open(struct jf_perf_writer *w, const char *path, struct jf_error *err);

/* The intel_pt configuration and time conversion (call once, first). */
void jf_perf_auxtrace_info(struct jf_perf_writer *w);

/* A cs_etm recording of one CPU whose trace unit is etm (call once, first): the
 * attribute, the features and every record then describe a cs_etm recording on that
 * CPU. */
void jf_perf_cs_etm_auxtrace_info(struct jf_perf_writer *w, const struct jf_perf_etmv4 *etm);

void jf_perf_comm(struct jf_perf_writer *w, int pid, int tid, const char *comm, int exec,
		  uint64_t time);
void jf_perf_mmap2(struct jf_perf_writer *w, int pid, int tid, uint64_t addr, uint64_t len,
		   uint64_t pgoff, uint32_t prot, uint32_t flags, const char *filename,
		   uint64_t time);
void jf_perf_fork(struct jf_perf_writer *w, int pid, int ppid, int tid, int ptid,
		  uint64_t time);
void jf_perf_exit(struct jf_perf_writer *w, int pid, int ppid, int tid, int ptid,
		  uint64_t time);
void jf_perf_itrace_start(struct jf_perf_writer *w, int pid, int tid, uint64_t time);
/* One chunk of a thread's PT stream: an AUX record, then AUXTRACE + the bytes. queue is
 * the thread's buffer index, aux_offset the chunk's offset within that thread's stream. */
void jf_perf_aux(struct jf_perf_writer *w, int pid, int tid, unsigned queue,
		 uint64_t aux_offset, const uint8_t *bytes, uint64_t size, uint64_t time);
void jf_perf_finished_round(struct jf_perf_writer *w);

/* No recording after all: close and remove the file. */
void jf_perf_abandon(struct jf_perf_writer *w);

/* A header that reads as an unfinished recording (data size 0: "read to the end of the
 * file", as perf and jitflow do), written as soon as the attribute is known, so that a
 * recorder killed before jf_perf_close leaves a file whose records up to the cut decode. */
void jf_perf_write_unfinished_header(struct jf_perf_writer *w);

/* Writes the header features and the file header; closes the file. After a failed write
 * (a full disk) nothing more is written but the header, which then promises the data size
 * the recording would have had: readers see the file as cut where the disk filled up and
 * report how much is missing. The error names the file, the offset, the reason and how
 * much of the file was written. */
int jf_perf_close(struct jf_perf_writer *w, const struct jf_perf_info *info,
		  struct jf_error *err);

#endif
