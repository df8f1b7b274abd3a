/* A tiny perf.data writer, byte by byte, for tests only: a header, attrs, records with
 * sample_id trailers, AUXTRACE payloads, a HEADER_CPUID feature. It writes what
 * linux/perf_event.h and perf's header.h describe, independently of jitflow's reader. */
#ifndef JITFLOW_PERF_BUILDER_H
#define JITFLOW_PERF_BUILDER_H

#include <stddef.h>
#include <stdint.h>

/* sample_id fields of one record (used as the attr's sample_type says). */
struct pb_sid {
	int32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
};

struct pb_attr {
	uint32_t type;
	uint64_t config, sample_type, flags;
	uint64_t id;              /* one event id (0: none) */
};

struct pb {
	uint8_t *data;            /* the data section being built */
	size_t len, cap;
	struct pb_attr attrs[4];
	int nattrs;
	const char *cpuid;
	uint64_t sid_id;          /* the IDENTIFIER written in trailers */
	uint8_t *build_ids;       /* HEADER_BUILD_ID entries (pb_build_id) */
	size_t build_ids_len;
	int auxtrace_index;       /* write HEADER_AUXTRACE: where each AUXTRACE record is */
	const uint8_t *mmap2_build_id; /* MMAP2 records carry this id (perf --buildid-mmap) */
	uint8_t mmap2_build_id_size;
	uint64_t aux_at[64][2];   /* their offsets (in the data section) and sizes */
	int naux_at;
};

enum {
	PB_SAMPLE_STD = (1u << 1) | (1u << 2) | (1u << 7) | (1u << 16), /* TID TIME CPU IDENT */
	PB_ATTR_SAMPLE_ID_ALL = 1u << 18,
	PB_INTEL_PT_PMU = 8,
	PB_CFG_TSC = 1u << 10,
	PB_CFG_NORETCOMP = 1u << 11,
	PB_CFG_MTC = 1u << 9,
	PB_CFG_CYC = 1u << 1,
};

void pb_init(struct pb *b);
void pb_free(struct pb *b);
void pb_add_attr(struct pb *b, uint32_t type, uint64_t config, uint64_t sample_type,
		 uint64_t flags, uint64_t id);

/* Records; each returns the file offset the record will have. */
uint64_t pb_mmap2(struct pb *b, int32_t pid, int32_t tid, uint64_t addr, uint64_t len,
		  uint64_t pgoff, uint32_t prot, const char *filename, const struct pb_sid *sid);
uint64_t pb_mmap(struct pb *b, int32_t pid, int32_t tid, uint64_t addr, uint64_t len,
		 uint64_t pgoff, int exec, const char *filename, const struct pb_sid *sid);
uint64_t pb_comm(struct pb *b, int32_t pid, int32_t tid, const char *comm, int exec,
		 const struct pb_sid *sid);
uint64_t pb_fork(struct pb *b, int exit, int32_t pid, int32_t ppid, int32_t tid,
		 int32_t ptid, uint64_t time, const struct pb_sid *sid);
uint64_t pb_itrace_start(struct pb *b, int32_t pid, int32_t tid, const struct pb_sid *sid);
uint64_t pb_aux(struct pb *b, uint64_t offset, uint64_t size, uint64_t flags,
		const struct pb_sid *sid);
uint64_t pb_lost(struct pb *b, uint64_t id, uint64_t lost, const struct pb_sid *sid);
uint64_t pb_switch(struct pb *b, int out, const struct pb_sid *sid);
uint64_t pb_switch_cpu_wide(struct pb *b, int out, int32_t np_pid, int32_t np_tid,
			    const struct pb_sid *sid);
uint64_t pb_auxtrace_info_intel_pt(struct pb *b, const uint64_t *priv, size_t n);
/* The intel_pt private array perf writes, with the usual bit positions. */
void pb_intel_pt_priv(uint64_t priv[17], int per_cpu, uint64_t time_mult,
		      uint16_t time_shift, uint64_t time_zero);
uint64_t pb_auxtrace(struct pb *b, const void *payload, uint64_t size, uint64_t offset,
		     uint32_t idx, uint32_t tid, uint32_t cpu);
uint64_t pb_time_conv(struct pb *b, uint64_t shift, uint64_t mult, uint64_t zero);
uint64_t pb_finished_round(struct pb *b);
/* Any record: type, misc and a body (no trailer added). */
uint64_t pb_raw(struct pb *b, uint32_t type, uint16_t misc, const void *body, size_t len);

/* A HEADER_BUILD_ID entry (perf's build_id_event, with the id's size in misc bit 15). */
void pb_build_id(struct pb *b, int32_t pid, uint16_t cpumode, const uint8_t *id, size_t size,
		 const char *filename);

/* The whole file in a malloc'd buffer (*size bytes), or written to path. */
uint8_t *pb_image(const struct pb *b, size_t *size);
void pb_write(const struct pb *b, const char *path);

#endif
