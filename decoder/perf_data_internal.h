/* Internal: the perf.data reader's state, shared by perf_data.c (header, attrs, features)
 * and perf_data_records.c (records). */
#ifndef JITFLOW_PERF_DATA_INTERNAL_H
#define JITFLOW_PERF_DATA_INTERNAL_H

#include "jitflow/mapped_file.h"
#include "jitflow/perf_data.h"

struct jf_perf_feature {
	int present;
	uint64_t offset, size;
};

/* How to find the sample_id trailer of a kernel record. */
enum jf_perf_sid_mode {
	JF_SID_NONE,        /* no attr has sample_id_all: no trailers */
	JF_SID_FIRST_ATTR,  /* every record uses attrs[0]'s layout */
	JF_SID_BY_ID,       /* the last u64 (SAMPLE_IDENTIFIER) picks the attr */
};

struct jf_perf_data {
	struct jf_mapped_file file;
	int pipe;
	uint64_t data_begin, data_end;
	int cut;                   /* the file ends inside the data section */
	uint64_t cut_missing;      /* bytes of it the header promised beyond the end */
	uint64_t cut_at;           /* where the file ends (with cut) */
	struct jf_perf_attr *attrs;
	size_t nattrs, cap_attrs;
	struct jf_perf_feature feat[JF_PERF_FEAT_MAX];
	char *cpuid;
	enum jf_perf_sid_mode sid_mode;
};

uint32_t jf_perf_u32(const uint8_t *p);

/* Decide how sample_id trailers are found (after all attrs are known). */
void jf_perf_data_index_attrs(struct jf_perf_data *d);

#endif
