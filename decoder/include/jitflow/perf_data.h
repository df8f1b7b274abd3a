/* A streaming reader of perf.data files (perf record's output), for Intel PT sessions.
 *
 * The file is mapped, never copied: records are parsed in place and AUXTRACE payloads are
 * exposed as pointers into the mapping, so memory does not grow with the file. Only
 * little-endian "PERFILE2" files are read (the format of every x86 perf); byte-swapped
 * files are refused with a clear error. Both the normal layout (header, attrs, data, feature
 * sections) and pipe mode (`perf record -o -`: a 16-byte header, attrs and features as
 * records) are read.
 *
 * Every malformed size or offset is an error naming the file, the byte offset and what was
 * expected; nothing is read outside the mapping. */
#ifndef JITFLOW_PERF_DATA_H
#define JITFLOW_PERF_DATA_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#include "jitflow/error.h"
#include "jitflow/flow.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Record types (linux/perf_event.h and perf's tools/lib/perf/include/perf/event.h). */
enum jf_perf_record_type {
	JF_PERF_RECORD_MMAP = 1,
	JF_PERF_RECORD_LOST = 2,
	JF_PERF_RECORD_COMM = 3,
	JF_PERF_RECORD_EXIT = 4,
	JF_PERF_RECORD_THROTTLE = 5,
	JF_PERF_RECORD_UNTHROTTLE = 6,
	JF_PERF_RECORD_FORK = 7,
	JF_PERF_RECORD_READ = 8,
	JF_PERF_RECORD_SAMPLE = 9,
	JF_PERF_RECORD_MMAP2 = 10,
	JF_PERF_RECORD_AUX = 11,
	JF_PERF_RECORD_ITRACE_START = 12,
	JF_PERF_RECORD_LOST_SAMPLES = 13,
	JF_PERF_RECORD_SWITCH = 14,
	JF_PERF_RECORD_SWITCH_CPU_WIDE = 15,
	/* perf's own (user) records: no sample_id trailer. */
	JF_PERF_RECORD_USER_TYPE_START = 64,
	JF_PERF_RECORD_HEADER_ATTR = 64,
	JF_PERF_RECORD_FINISHED_ROUND = 68,
	JF_PERF_RECORD_ID_INDEX = 69,
	JF_PERF_RECORD_AUXTRACE_INFO = 70,
	JF_PERF_RECORD_AUXTRACE = 71,
	JF_PERF_RECORD_AUXTRACE_ERROR = 72,
	JF_PERF_RECORD_THREAD_MAP = 73,
	JF_PERF_RECORD_CPU_MAP = 74,
	JF_PERF_RECORD_TIME_CONV = 79,
	JF_PERF_RECORD_HEADER_FEATURE = 80,
	JF_PERF_RECORD_FINISHED_INIT = 82,
};

/* header.misc bits that matter here. */
enum {
	JF_PERF_MISC_MMAP_DATA = 1 << 13,     /* MMAP: not executable */
	JF_PERF_MISC_COMM_EXEC = 1 << 13,     /* COMM: from exec() */
	JF_PERF_MISC_SWITCH_OUT = 1 << 13,    /* SWITCH*: switching out (else in) */
	JF_PERF_MISC_SWITCH_OUT_PREEMPT = 1 << 14,
	JF_PERF_MISC_MMAP_BUILD_ID = 1 << 14, /* MMAP2 carries a build id, not dev/inode */
};

/* AUX record flags. */
enum {
	JF_PERF_AUX_FLAG_TRUNCATED = 0x01,
	JF_PERF_AUX_FLAG_OVERWRITE = 0x02,
	JF_PERF_AUX_FLAG_PARTIAL = 0x04,
	JF_PERF_AUX_FLAG_COLLISION = 0x08,
};

/* sample_type bits that make up the sample_id trailer. */
enum {
	JF_PERF_SAMPLE_IP = 1u << 0,
	JF_PERF_SAMPLE_TID = 1u << 1,
	JF_PERF_SAMPLE_TIME = 1u << 2,
	JF_PERF_SAMPLE_ADDR = 1u << 3,
	JF_PERF_SAMPLE_ID = 1u << 6,
	JF_PERF_SAMPLE_CPU = 1u << 7,
	JF_PERF_SAMPLE_STREAM_ID = 1u << 9,
	JF_PERF_SAMPLE_IDENTIFIER = 1u << 16,
};

/* Feature sections (perf's HEADER_* feature bits). */
enum {
	JF_PERF_FEAT_BUILD_ID = 2,
	JF_PERF_FEAT_HOSTNAME = 3,
	JF_PERF_FEAT_NRCPUS = 7,
	JF_PERF_FEAT_CPUID = 9,
	JF_PERF_FEAT_CPU_TOPOLOGY = 13,
	JF_PERF_FEAT_AUXTRACE = 18,
	JF_PERF_FEAT_MAX = 256,
};

/* One event's perf_event_attr, as much of it as jitflow uses. */
struct jf_perf_attr {
	uint32_t type;
	uint32_t size;            /* attr size as recorded (64 for the oldest perf) */
	uint64_t config;
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t flags;           /* the bit-field word (disabled, inherit, ..., sample_id_all) */
	int sample_id_all;
	uint64_t offset;          /* file offset of the attr */
	const uint8_t *ids;       /* nr_ids event ids (u64, unaligned: jf_perf_u64()) */
	uint64_t nr_ids;
};

/* The sample_id trailer of a kernel record (or the same fields of a SAMPLE). */
enum {
	JF_PERF_SID_TID = 1 << 0,
	JF_PERF_SID_TIME = 1 << 1,
	JF_PERF_SID_ID = 1 << 2,
	JF_PERF_SID_STREAM_ID = 1 << 3,
	JF_PERF_SID_CPU = 1 << 4,
};

struct jf_perf_sample_id {
	uint32_t present;         /* JF_PERF_SID_* */
	int32_t pid, tid;
	uint64_t time;
	uint64_t id, stream_id;
	uint32_t cpu;
};

/* A record, parsed in place. Strings and payloads point into the mapping. */
struct jf_perf_record {
	uint32_t type;
	uint16_t misc;
	uint16_t size;            /* header.size: the record, without an AUXTRACE payload */
	uint64_t offset;          /* file offset of the record header */
	const uint8_t *raw;       /* the record's bytes in the mapping (size bytes) */
	struct jf_perf_sample_id sid;
	union {
		struct {              /* MMAP and MMAP2 */
			int32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint32_t prot, flags;   /* MMAP2 only; MMAP: prot from misc */
			int exec;               /* mapped executable */
			uint32_t maj, min;      /* MMAP2 without build id */
			uint64_t ino, ino_generation;
			uint8_t build_id_size;  /* MMAP2 with JF_PERF_MISC_MMAP_BUILD_ID */
			const uint8_t *build_id;
			const char *filename;   /* NUL-terminated inside the record */
		} mmap;
		struct {
			int32_t pid, tid;
			const char *comm;
			int exec;
		} comm;
		struct {              /* FORK and EXIT */
			int32_t pid, ppid, tid, ptid;
			uint64_t time;
		} fork;
		struct {              /* LOST (id, lost) and LOST_SAMPLES (lost) */
			uint64_t id, lost;
		} lost;
		struct {
			uint64_t aux_offset, aux_size, flags;
		} aux;
		struct {
			int32_t pid, tid;
		} itrace_start;
		struct {              /* SWITCH and SWITCH_CPU_WIDE */
			int out, preempt;
			int32_t next_prev_pid, next_prev_tid; /* SWITCH_CPU_WIDE only, else -1 */
		} cswitch;
		struct {
			uint32_t type;          /* 1 = intel_pt, 2 = intel_bts, 3 = cs_etm, ... */
			uint64_t nr_priv;
			const uint8_t *priv;    /* nr_priv little-endian u64: jf_perf_u64() */
		} auxtrace_info;
		struct {
			uint64_t size, offset, reference;
			uint32_t idx, tid, cpu;
			uint64_t payload_offset;  /* file offset of the payload's first byte */
			const uint8_t *payload;   /* size bytes in the mapping */
			uint64_t cut;             /* bytes missing at its end (a cut file) */
		} auxtrace;
		struct {
			uint64_t time_shift, time_mult, time_zero;
			uint64_t time_cycles, time_mask;  /* when extended */
			uint8_t cap_user_time_zero, cap_user_time_short;
			int extended;
		} time_conv;
		struct {
			uint64_t nr;            /* entries of 4 u64: id, idx, cpu, tid */
			const uint8_t *entries;
		} id_index;
		struct {
			uint64_t feature;
			const uint8_t *data;
			uint64_t size;
		} feature;                  /* HEADER_FEATURE (pipe mode) */
	} u;
};

/* Where the next record is read from; start with jf_perf_data_begin(). */
struct jf_perf_cursor {
	uint64_t pos;
};

struct jf_perf_data;

/* Open and check the header, the attrs and the feature table. */
struct jf_perf_data *jf_perf_data_open(const char *path, struct jf_error *err);
void jf_perf_data_close(struct jf_perf_data *data);

const char *jf_perf_data_path(const struct jf_perf_data *data);
int jf_perf_data_is_pipe(const struct jf_perf_data *data);
/* The file's bytes [data offset, data end) hold the records. */
void jf_perf_data_range(const struct jf_perf_data *data, uint64_t *begin, uint64_t *end);
/* A file that ends before its data section does (a recorder killed, a disk full, a copy
 * cut short): 1 with the file offset where the file ends (*at) and the bytes of the data
 * section the header promised beyond it (*missing; 0 when perf never wrote the size, or
 * when only the feature sections after the data are cut), 0 for a whole file.
 * Records before the cut are read as usual; a record cut in half ends the data, and an
 * AUXTRACE payload cut in half is returned with the bytes that are there (its size
 * shortened; jf_perf_record.u.auxtrace.cut says by how much). */
int jf_perf_data_cut(const struct jf_perf_data *data, uint64_t *at, uint64_t *missing);
/* The loss a decoder reports once, after the last record, for a cut file: 1 with *flow a
 * JF_FLOW_LOST (JF_LOST_FILE_CUT, offset where the file ends), 0 for a whole file. */
int jf_perf_data_cut_flow(const struct jf_perf_data *data, struct jf_flow *flow);

size_t jf_perf_data_nattrs(const struct jf_perf_data *data);
const struct jf_perf_attr *jf_perf_data_attr(const struct jf_perf_data *data, size_t i);

/* A feature section: 1 and its bytes if present, 0 if absent. */
int jf_perf_data_feature(const struct jf_perf_data *data, unsigned feature,
			 const uint8_t **bytes, uint64_t *size, uint64_t *offset);
/* The HEADER_CPUID string (e.g. "GenuineIntel,6,142,10"), or NULL. */
const char *jf_perf_data_cpuid(const struct jf_perf_data *data);

/* Read the next record at cur and advance cur past it (and past an AUXTRACE payload).
 * Returns 1 with *rec filled, 0 at the end of the data, -1 with err set on a malformed
 * record. After -1, cur->pos is unchanged if the record's framing (header size) is broken;
 * otherwise cur is past the bad record and the caller may go on. */
void jf_perf_data_begin(const struct jf_perf_data *data, struct jf_perf_cursor *cur);
int jf_perf_data_next(const struct jf_perf_data *data, struct jf_perf_cursor *cur,
		      struct jf_perf_record *rec, struct jf_error *err);
/* Only the header (type, misc, size, offset, raw) and the AUXTRACE fields; cheaper, for
 * scans that look for one kind of record. Same return values. */
int jf_perf_data_next_header(const struct jf_perf_data *data, struct jf_perf_cursor *cur,
			     struct jf_perf_record *rec, struct jf_error *err);

/* 1 if jitflow parses records of this type; others are returned with their header only,
 * for callers to skip and count. */
int jf_perf_record_known(uint32_t type);

/* 1 for the records that change which code a process has (MMAP, MMAP2, FORK, COMM: a
 * COMM may be an exec). */
int jf_perf_record_maps_code(uint32_t type);

/* Tell the kernel the whole pages inside [offset, offset + size) of the mapping are done
 * with (an AUXTRACE payload once decoded), so resident memory does not grow with the file.
 * Reading them again later is still correct: they come back from the file. */
void jf_perf_data_release(const struct jf_perf_data *data, uint64_t offset, uint64_t size);

/* Little-endian u64 number i of an unaligned array. */
uint64_t jf_perf_u64(const uint8_t *p, uint64_t i);

/* A name for a record type ("MMAP2", "AUXTRACE", ... or "unknown"). */
const char *jf_perf_record_name(uint32_t type);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
