/* Writes a perf.data file ("PERFILE2") that reads like `perf record -e intel_pt//u` with
 * per-thread AUX buffers: the intel_pt event attribute, AUXTRACE_INFO, sideband records
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
};

struct jf_perf_info {
	const char *cmdline_argv0;    /* "jitflow" */
	int argc;                     /* the recorded program's command line */
	char **argv;
	const char *hostname, *osrelease;
};

int jf_perf_open(struct jf_perf_writer *w, const char *path, struct jf_error *err);

/* The intel_pt configuration and time conversion (call once, first). */
void jf_perf_auxtrace_info(struct jf_perf_writer *w);

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
