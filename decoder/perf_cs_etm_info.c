/* The cs_etm AUXTRACE_INFO record: perf's private array of u64 (tools/perf/util/cs-etm.h).
 *
 *   [0] header version (0 or 1)   [1] PMU type << 32 | number of CPUs   [2] snapshot mode
 * then per CPU a block that starts with a magic number telling the protocol and the CPU:
 *   version 0: magic, cpu, then the protocol's fixed registers
 *   version 1: magic, cpu, number of registers n, then n registers
 * Registers, in order: ETMv3: ETMCR, ETMTRACEIDR, ETMCCER, ETMIDR; ETMv4: TRCCONFIGR,
 * TRCTRACEIDR, TRCIDR0, TRCIDR1, TRCIDR2, TRCIDR8, TRCAUTHSTATUS (+ later ones); ETE:
 * those of ETMv4, then TRCDEVARCH (+ later ones). */
#include "jitflow/perf_cs_etm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC_ETMV3 0x3030303030303030ull
#define MAGIC_ETMV4 0x4040404040404040ull
#define MAGIC_ETE 0x5050505050505050ull

enum { HEADER_WORDS = 3, MAX_CPUS = 4096 };

static int fill(struct jf_cs_source *src, uint64_t magic, const uint8_t *regs, uint64_t n,
		uint64_t at, struct jf_error *err)
{
	uint64_t need = magic == MAGIC_ETMV3 ? 4 : magic == MAGIC_ETMV4 ? 7 : 8;
	uint64_t r[8];
	uint64_t i;

	if (n < need)
		return jf_fail(err, "offset 0x%llx: cs_etm CPU block has %llu registers, expected "
			       "at least %llu", (unsigned long long)at, (unsigned long long)n,
			       (unsigned long long)need);
	for (i = 0; i < need; i++)
		r[i] = jf_perf_u64(regs, i);
	/* perf decodes with these architectures (it does not know the core): v7-A for
	 * ETMv3, v8-A for ETMv4, the newest AArch64 rules for ETE. */
	src->profile = JF_CS_PROFILE_A;
	if (magic == MAGIC_ETMV3) {
		src->protocol = JF_CS_PROTO_ETMV3;
		src->arch = JF_CS_ARCH_V7;
		src->etmcr = (uint32_t)r[0];
		src->etmtraceidr = (uint32_t)r[1];
		src->etmccer = (uint32_t)r[2];
		src->etmidr = (uint32_t)r[3];
		/* perf uses one magic for ETMv3 and PTM; a PTM (PFT) reports architecture
		 * 0x3 in ETMIDR bits [11:8] (ETMv3.x reports 0x2). */
		if (((src->etmidr >> 8) & 0xf) == 0x3)
			src->protocol = JF_CS_PROTO_PTM;
		return 0;
	}
	src->protocol = magic == MAGIC_ETE ? JF_CS_PROTO_ETE : JF_CS_PROTO_ETMV4I;
	src->arch = magic == MAGIC_ETE ? JF_CS_ARCH_AA64 : JF_CS_ARCH_V8;
	src->trcconfigr = (uint32_t)r[0];
	src->trctraceidr = (uint32_t)r[1];
	src->trcidr[0] = (uint32_t)r[2];
	src->trcidr[1] = (uint32_t)r[3];
	src->trcidr[2] = (uint32_t)r[4];
	src->trcidr[8] = (uint32_t)r[5];
	if (magic == MAGIC_ETE)
		src->trcdevarch = (uint32_t)r[7];
	return 0;
}

int jf_perf_cs_etm_sources(const struct jf_perf_record *info, struct jf_cs_source **sources,
			   uint32_t **cpus, size_t *count, struct jf_error *err)
{
	const uint8_t *p = info->u.auxtrace_info.priv;
	uint64_t n = info->u.auxtrace_info.nr_priv, at = HEADER_WORDS, version, ncpus, i;
	uint64_t base = info->offset + 16; /* header, type and reserved words */
	struct jf_cs_source *src = NULL;
	uint32_t *cpu = NULL;

	*sources = NULL;
	*cpus = NULL;
	*count = 0;
	if (info->u.auxtrace_info.type != JF_PERF_AUXTRACE_CS_ETM)
		return jf_fail(err, "offset 0x%llx: AUXTRACE_INFO of type %u, expected cs_etm (3)",
			       (unsigned long long)info->offset, info->u.auxtrace_info.type);
	if (n < HEADER_WORDS)
		return jf_fail(err, "offset 0x%llx: cs_etm AUXTRACE_INFO of %llu words, expected a "
			       "%d-word header", (unsigned long long)info->offset,
			       (unsigned long long)n, HEADER_WORDS);
	version = jf_perf_u64(p, 0);
	ncpus = jf_perf_u64(p, 1) & 0xffffffffu;
	if (version > 1)
		return jf_fail(err, "offset 0x%llx: cs_etm metadata version %llu, expected 0 or 1",
			       (unsigned long long)base, (unsigned long long)version);
	if (ncpus == 0 || ncpus > MAX_CPUS)
		return jf_fail(err, "offset 0x%llx: cs_etm metadata for %llu CPUs, expected 1..%d",
			       (unsigned long long)(base + 8), (unsigned long long)ncpus, MAX_CPUS);
	src = calloc(ncpus, sizeof(*src));
	cpu = calloc(ncpus, sizeof(*cpu));
	if (!src || !cpu) {
		jf_fail(err, "out of memory");
		goto fail;
	}
	for (i = 0; i < ncpus; i++) {
		uint64_t magic, nregs, fixed;
		uint64_t block_at = base + at * 8;

		if (at + 2 > n) {
			jf_fail(err, "offset 0x%llx: cs_etm metadata ends before CPU block %llu of "
				"%llu", (unsigned long long)block_at, (unsigned long long)i,
				(unsigned long long)ncpus);
			goto fail;
		}
		magic = jf_perf_u64(p, at);
		if (magic != MAGIC_ETMV3 && magic != MAGIC_ETMV4 && magic != MAGIC_ETE) {
			jf_fail(err, "offset 0x%llx: cs_etm CPU block starts with 0x%llx, expected "
				"an ETMv3, ETMv4 or ETE magic number", (unsigned long long)block_at,
				(unsigned long long)magic);
			goto fail;
		}
		cpu[i] = (uint32_t)jf_perf_u64(p, at + 1);
		fixed = magic == MAGIC_ETMV3 ? 4 : magic == MAGIC_ETMV4 ? 7 : 8;
		if (version == 0) {
			at += 2;
			nregs = fixed;
		} else {
			if (at + 3 > n) {
				jf_fail(err, "offset 0x%llx: cs_etm CPU block without its register "
					"count", (unsigned long long)block_at);
				goto fail;
			}
			nregs = jf_perf_u64(p, at + 2);
			at += 3;
		}
		if (nregs > n - at) {
			jf_fail(err, "offset 0x%llx: cs_etm CPU block of %llu registers runs past "
				"the record's end", (unsigned long long)block_at,
				(unsigned long long)nregs);
			goto fail;
		}
		snprintf(src[i].name, sizeof(src[i].name), "cpu %u", cpu[i]);
		if (fill(&src[i], magic, p + at * 8, nregs, block_at, err) < 0)
			goto fail;
		at += nregs;
	}
	*sources = src;
	*cpus = cpu;
	*count = (size_t)ncpus;
	return 0;
fail:
	free(src);
	free(cpu);
	return -1;
}

int jf_perf_auxtrace_type(const char *path, uint32_t *type, struct jf_error *err)
{
	struct jf_perf_data *data = jf_perf_data_open(path, err);
	struct jf_perf_cursor cur;
	struct jf_perf_record rec;
	int rc;

	*type = 0;
	if (!data)
		return -1;
	jf_perf_data_begin(data, &cur);
	while ((rc = jf_perf_data_next_header(data, &cur, &rec, err)) > 0) {
		if (rec.type != JF_PERF_RECORD_AUXTRACE_INFO)
			continue;
		/* The type is the record body's first word. */
		if (rec.size >= 12)
			*type = (uint32_t)rec.raw[8] | (uint32_t)rec.raw[9] << 8 |
				(uint32_t)rec.raw[10] << 16 | (uint32_t)rec.raw[11] << 24;
		break;
	}
	jf_perf_data_close(data);
	return rc < 0 ? -1 : 0;
}
