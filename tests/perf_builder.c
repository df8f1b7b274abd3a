/* A tiny perf.data writer for tests (see perf_builder.h). Layout written:
 *   [header 104][attr entries: attr (ATTR_SIZE bytes) + ids {offset,size}][id arrays]
 *   [data section: records][feature table][feature data]
 * Attrs must be added before records (record offsets depend on the attrs' size). */
#include "perf_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

enum {
	HEADER_SIZE = 104, ATTR_SIZE = 128, ENTRY_SIZE = ATTR_SIZE + 16,
	FEAT_BUILD_ID = 2, FEAT_CPUID = 9, FEAT_AUXTRACE = 18,
};

void pb_init(struct pb *b)
{
	memset(b, 0, sizeof(*b));
}

void pb_free(struct pb *b)
{
	free(b->data);
	free(b->build_ids);
	memset(b, 0, sizeof(*b));
}

void pb_add_attr(struct pb *b, uint32_t type, uint64_t config, uint64_t sample_type,
		 uint64_t flags, uint64_t id)
{
	struct pb_attr *a = &b->attrs[b->nattrs++];

	a->type = type;
	a->config = config;
	a->sample_type = sample_type;
	a->flags = flags;
	a->id = id;
	if (b->nattrs == 1)
		b->sid_id = id;
}

static uint64_t data_offset(const struct pb *b)
{
	uint64_t off = HEADER_SIZE + (uint64_t)b->nattrs * ENTRY_SIZE;
	int i;

	for (i = 0; i < b->nattrs; i++)
		off += b->attrs[i].id ? 8 : 0;
	return off;
}

static void put(struct pb *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 256;
		b->data = realloc(b->data, b->cap);
		if (!b->data)
			fail_msg("out of memory");
	}
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void put64(struct pb *b, uint64_t v) { put(b, &v, 8); }
static void put32(struct pb *b, uint32_t v) { put(b, &v, 4); }
static void put16(struct pb *b, uint16_t v) { put(b, &v, 2); }

/* Start a record; returns its start index in data. */
static size_t begin(struct pb *b, uint32_t type, uint16_t misc)
{
	size_t at = b->len;
	uint16_t zero = 0;

	put32(b, type);
	put(b, &misc, 2);
	put(b, &zero, 2);
	return at;
}

static void put_string(struct pb *b, const char *s)
{
	size_t n = strlen(s) + 1, pad = (8 - n % 8) % 8;
	static const uint8_t zeros[8];

	put(b, s, n);
	put(b, zeros, pad);
}

static void put_sid(struct pb *b, const struct pb_sid *sid)
{
	uint64_t st = b->nattrs ? b->attrs[0].sample_type : 0;
	struct pb_sid none = { -1, -1, 0, 0 };

	if (!b->nattrs || !(b->attrs[0].flags & PB_ATTR_SAMPLE_ID_ALL))
		return;
	if (!sid)
		sid = &none;
	if (st & (1u << 1)) {
		put32(b, (uint32_t)sid->pid);
		put32(b, (uint32_t)sid->tid);
	}
	if (st & (1u << 2))
		put64(b, sid->time);
	if (st & (1u << 6))
		put64(b, b->sid_id);
	if (st & (1u << 9))
		put64(b, 0);
	if (st & (1u << 7)) {
		put32(b, sid->cpu);
		put32(b, 0);
	}
	if (st & (1u << 16))
		put64(b, b->sid_id);
}

static uint64_t end(struct pb *b, size_t at)
{
	uint16_t size = (uint16_t)(b->len - at);

	memcpy(b->data + at + 6, &size, 2);
	return data_offset(b) + at;
}

uint64_t pb_mmap2(struct pb *b, int32_t pid, int32_t tid, uint64_t addr, uint64_t len,
		  uint64_t pgoff, uint32_t prot, const char *filename, const struct pb_sid *sid)
{
	size_t at = begin(b, 10, b->mmap2_build_id ? 1 << 14 : 0);

	put32(b, (uint32_t)pid);
	put32(b, (uint32_t)tid);
	put64(b, addr);
	put64(b, len);
	put64(b, pgoff);
	if (b->mmap2_build_id) {
		uint8_t id[24] = { b->mmap2_build_id_size };

		memcpy(id + 4, b->mmap2_build_id, b->mmap2_build_id_size);
		put(b, id, sizeof(id));
	} else {
		put32(b, 8);      /* maj */
		put32(b, 1);      /* min */
		put64(b, 1234);   /* ino */
		put64(b, 0);      /* ino_generation */
	}
	put32(b, prot);
	put32(b, 2);      /* MAP_PRIVATE */
	put_string(b, filename);
	put_sid(b, sid);
	return end(b, at);
}

uint64_t pb_mmap(struct pb *b, int32_t pid, int32_t tid, uint64_t addr, uint64_t len,
		 uint64_t pgoff, int exec, const char *filename, const struct pb_sid *sid)
{
	size_t at = begin(b, 1, exec ? 0 : 1 << 13);

	put32(b, (uint32_t)pid);
	put32(b, (uint32_t)tid);
	put64(b, addr);
	put64(b, len);
	put64(b, pgoff);
	put_string(b, filename);
	put_sid(b, sid);
	return end(b, at);
}

uint64_t pb_comm(struct pb *b, int32_t pid, int32_t tid, const char *comm, int exec,
		 const struct pb_sid *sid)
{
	size_t at = begin(b, 3, exec ? 1 << 13 : 0);

	put32(b, (uint32_t)pid);
	put32(b, (uint32_t)tid);
	put_string(b, comm);
	put_sid(b, sid);
	return end(b, at);
}

uint64_t pb_fork(struct pb *b, int exit, int32_t pid, int32_t ppid, int32_t tid,
		 int32_t ptid, uint64_t time, const struct pb_sid *sid)
{
	size_t at = begin(b, exit ? 4 : 7, 0);

	put32(b, (uint32_t)pid);
	put32(b, (uint32_t)ppid);
	put32(b, (uint32_t)tid);
	put32(b, (uint32_t)ptid);
	put64(b, time);
	put_sid(b, sid);
	return end(b, at);
}

uint64_t pb_itrace_start(struct pb *b, int32_t pid, int32_t tid, const struct pb_sid *sid)
{
	size_t at = begin(b, 12, 0);

	put32(b, (uint32_t)pid);
	put32(b, (uint32_t)tid);
	put_sid(b, sid);
	return end(b, at);
}

uint64_t pb_aux(struct pb *b, uint64_t offset, uint64_t size, uint64_t flags,
		const struct pb_sid *sid)
{
	size_t at = begin(b, 11, 0);

	put64(b, offset);
	put64(b, size);
	put64(b, flags);
	put_sid(b, sid);
	return end(b, at);
}

uint64_t pb_lost(struct pb *b, uint64_t id, uint64_t lost, const struct pb_sid *sid)
{
	size_t at = begin(b, 2, 0);

	put64(b, id);
	put64(b, lost);
	put_sid(b, sid);
	return end(b, at);
}

uint64_t pb_switch(struct pb *b, int out, const struct pb_sid *sid)
{
	size_t at = begin(b, 14, out ? 1 << 13 : 0);

	put_sid(b, sid);
	return end(b, at);
}

uint64_t pb_switch_cpu_wide(struct pb *b, int out, int32_t np_pid, int32_t np_tid,
			    const struct pb_sid *sid)
{
	size_t at = begin(b, 15, out ? 1 << 13 : 0);

	put32(b, (uint32_t)np_pid);
	put32(b, (uint32_t)np_tid);
	put_sid(b, sid);
	return end(b, at);
}

void pb_intel_pt_priv(uint64_t priv[17], int per_cpu, uint64_t time_mult,
		      uint16_t time_shift, uint64_t time_zero)
{
	memset(priv, 0, 17 * sizeof(priv[0]));
	priv[0] = PB_INTEL_PT_PMU;        /* pmu type */
	priv[1] = time_shift;
	priv[2] = time_mult;
	priv[3] = time_zero;
	priv[4] = time_mult != 0;        /* cap_user_time_zero */
	priv[5] = PB_CFG_TSC;            /* tsc bit */
	priv[6] = PB_CFG_NORETCOMP;      /* noretcomp bit */
	priv[7] = 0;                     /* have_sched_switch (1 would need a sched_switch event) */
	priv[8] = 0;                     /* snapshot mode */
	priv[9] = (uint64_t)per_cpu;     /* per_cpu_mmaps */
	priv[10] = PB_CFG_MTC;           /* mtc bit */
	priv[11] = 0xfull << 14;         /* mtc_freq_bits */
	priv[12] = 84;                   /* tsc_ctc_ratio_n (CPUID.15H EBX) */
	priv[13] = 2;                    /* tsc_ctc_ratio_d (CPUID.15H EAX) */
	priv[14] = PB_CFG_CYC;           /* cyc bit */
	priv[15] = 24;                   /* max non-turbo ratio */
	priv[16] = 0;                    /* filter string length */
}

uint64_t pb_auxtrace_info_intel_pt(struct pb *b, const uint64_t *priv, size_t n)
{
	size_t at = begin(b, 70, 0);

	put32(b, 1); /* PERF_AUXTRACE_INTEL_PT */
	put32(b, 0);
	put(b, priv, n * 8);
	return end(b, at);
}

uint64_t pb_auxtrace(struct pb *b, const void *payload, uint64_t size, uint64_t offset,
		     uint32_t idx, uint32_t tid, uint32_t cpu)
{
	size_t at = begin(b, 71, 0);
	uint64_t rec;

	put64(b, size);
	put64(b, offset);
	put64(b, 0xfeedull); /* reference */
	put32(b, idx);
	put32(b, tid);
	put32(b, cpu);
	put32(b, 0);
	rec = end(b, at);
	put(b, payload, (size_t)size);
	if (b->naux_at < 64) {
		b->aux_at[b->naux_at][0] = at;
		b->aux_at[b->naux_at][1] = 48; /* perf indexes the record, not its payload */
		b->naux_at++;
	}
	return rec;
}

uint64_t pb_time_conv(struct pb *b, uint64_t shift, uint64_t mult, uint64_t zero)
{
	size_t at = begin(b, 79, 0);

	put64(b, shift);
	put64(b, mult);
	put64(b, zero);
	return end(b, at);
}

uint64_t pb_finished_round(struct pb *b)
{
	return end(b, begin(b, 68, 0));
}

uint64_t pb_raw(struct pb *b, uint32_t type, uint16_t misc, const void *body, size_t len)
{
	size_t at = begin(b, type, misc);

	put(b, body, len);
	return end(b, at);
}

void pb_build_id(struct pb *b, int32_t pid, uint16_t cpumode, const uint8_t *id, size_t size,
		 const char *filename)
{
	struct pb e;
	size_t name = (strlen(filename) + 1 + 7) / 8 * 8;
	uint8_t area[24] = { 0 };
	static const uint8_t zeros[8];

	pb_init(&e);
	put32(&e, 67);
	put16(&e, (uint16_t)(cpumode | 1u << 15));
	put16(&e, (uint16_t)(8 + 4 + 24 + name));
	put32(&e, (uint32_t)pid);
	memcpy(area, id, size);
	area[20] = (uint8_t)size;
	put(&e, area, sizeof(area));
	put(&e, filename, strlen(filename) + 1);
	put(&e, zeros, name - strlen(filename) - 1);
	b->build_ids = realloc(b->build_ids, b->build_ids_len + e.len);
	memcpy(b->build_ids + b->build_ids_len, e.data, e.len);
	b->build_ids_len += e.len;
	pb_free(&e);
}

/* The feature sections present, by bit (the table lists them in bit order). */
static void feature_bodies(const struct pb *b, struct pb body[3], int bits[3], int *n)
{
	static const uint8_t zeros[8];
	int i;

	*n = 0;
	if (b->build_ids_len) {
		pb_init(&body[*n]);
		put(&body[*n], b->build_ids, b->build_ids_len);
		bits[(*n)++] = FEAT_BUILD_ID;
	}
	if (b->cpuid) {
		size_t len = strlen(b->cpuid) + 1, pad = (len + 7) / 8 * 8;

		pb_init(&body[*n]);
		put32(&body[*n], (uint32_t)pad);
		put(&body[*n], b->cpuid, len);
		put(&body[*n], zeros, pad - len);
		bits[(*n)++] = FEAT_CPUID;
	}
	if (b->auxtrace_index) {
		pb_init(&body[*n]);
		put64(&body[*n], (uint64_t)b->naux_at);
		for (i = 0; i < b->naux_at; i++) {
			put64(&body[*n], data_offset(b) + b->aux_at[i][0]);
			put64(&body[*n], b->aux_at[i][1]);
		}
		bits[(*n)++] = FEAT_AUXTRACE;
	}
}

uint8_t *pb_image(const struct pb *b, size_t *size)
{
	struct pb f, body[3];
	uint64_t doff = data_offset(b), ids_at, feat_at;
	uint8_t features[32] = { 0 };
	int i, bits[3], nfeat;

	feature_bodies(b, body, bits, &nfeat);
	for (i = 0; i < nfeat; i++)
		features[bits[i] / 8] |= (uint8_t)(1u << (bits[i] % 8));
	pb_init(&f);
	put(&f, "PERFILE2", 8);
	put64(&f, HEADER_SIZE);
	put64(&f, ENTRY_SIZE);
	put64(&f, HEADER_SIZE);                                /* attrs */
	put64(&f, (uint64_t)b->nattrs * ENTRY_SIZE);
	put64(&f, doff);                                       /* data */
	put64(&f, b->len);
	put64(&f, 0);                                          /* event_types */
	put64(&f, 0);
	put(&f, features, sizeof(features));
	ids_at = HEADER_SIZE + (uint64_t)b->nattrs * ENTRY_SIZE;
	for (i = 0; i < b->nattrs; i++) {
		uint8_t attr[ATTR_SIZE] = { 0 };
		const struct pb_attr *a = &b->attrs[i];
		uint32_t asize = ATTR_SIZE;

		memcpy(attr, &a->type, 4);
		memcpy(attr + 4, &asize, 4);
		memcpy(attr + 8, &a->config, 8);
		memcpy(attr + 24, &a->sample_type, 8);
		memcpy(attr + 40, &a->flags, 8);
		put(&f, attr, sizeof(attr));
		put64(&f, a->id ? ids_at : 0);
		put64(&f, a->id ? 8 : 0);
		ids_at += a->id ? 8 : 0;
	}
	for (i = 0; i < b->nattrs; i++)
		if (b->attrs[i].id)
			put64(&f, b->attrs[i].id);
	put(&f, b->data, b->len);
	/* The table, then the sections in the same order. */
	feat_at = doff + b->len + 16ull * (uint64_t)nfeat;
	for (i = 0; i < nfeat; i++) {
		put64(&f, feat_at);
		put64(&f, body[i].len);
		feat_at += body[i].len;
	}
	for (i = 0; i < nfeat; i++) {
		put(&f, body[i].data, body[i].len);
		pb_free(&body[i]);
	}
	*size = f.len;
	return f.data;
}

void pb_write(const struct pb *b, const char *path)
{
	size_t size;
	uint8_t *img = pb_image(b, &size);

	jf_test_write_file(path, img, size);
	free(img);
}
