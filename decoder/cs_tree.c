/* One OpenCSD decode tree per trace buffer: the frame demultiplexer (or a single raw
 * source), one packet decoder per source configured from its registers, and code bytes
 * from the code map through a callback accessor. */
#include "cs_internal.h"
#include "isolate_child.h"

#include <stdio.h>
#include <string.h>

static ocsd_arch_version_t ocsd_arch(uint8_t arch)
{
	switch (arch) {
	case JF_CS_ARCH_V7: return ARCH_V7;
	case JF_CS_ARCH_V8: return ARCH_V8;
	case JF_CS_ARCH_V8R3: return ARCH_V8r3;
	case JF_CS_ARCH_AA64: return ARCH_AA64;
	default: return ARCH_UNKNOWN;
	}
}

static ocsd_core_profile_t ocsd_profile(uint8_t profile)
{
	switch (profile) {
	case JF_CS_PROFILE_A: return profile_CortexA;
	case JF_CS_PROFILE_R: return profile_CortexR;
	case JF_CS_PROFILE_M: return profile_CortexM;
	default: return profile_Unknown;
	}
}

static void errstr(ocsd_err_t e, char *buf, int size)
{
	ocsd_err_str(e, buf, size);
}

/* OpenCSD asks for a few bytes at a time and caches whole pages; sections that touch are
 * read as one so an instruction may straddle two dumps. */
static uint32_t read_code(const void *ctx, const ocsd_vaddr_t address,
			  const ocsd_mem_space_acc_t space, const uint32_t want, uint8_t *buf)
{
	struct jf_codemap *map = (struct jf_codemap *)ctx;
	uint32_t got = 0;

	(void)space;
	while (got < want) {
		/* A child decoding in lockstep reads the parent's map as it is now. */
		size_t n = jf_isolate_child && jf_isolate_child->remote
				   ? jf_isolate_child->read(address + got, buf + got, want - got)
				   : jf_codemap_read(map, address + got, buf + got, want - got);

		if (n == 0)
			break;
		got += (uint32_t)n;
	}
	return got;
}

int jf_cs_tree_open(struct jf_cs_tree *tree, const struct jf_cs_buffer *buf,
		    struct jf_codemap *map, struct jf_error *err)
{
	static int logger_ready;
	uint32_t flags = buf->frames == JF_CS_FRAMES_FSYNCS ? OCSD_DFRMTR_HAS_FSYNCS
							    : OCSD_DFRMTR_FRAME_MEM_ALIGN;

	memset(tree, 0, sizeof(*tree));
	if (!logger_ready) {
		/* Errors are collected (ocsd_get_last_err), never printed by the library. */
		ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 0);
		logger_ready = 1;
	}
	tree->map = map;
	tree->handle = ocsd_create_dcd_tree(buf->formatted ? OCSD_TRC_SRC_FRAME_FORMATTED
							   : OCSD_TRC_SRC_SINGLE,
					    buf->formatted ? flags : 0);
	if (tree->handle == C_API_INVALID_TREE_HANDLE)
		return jf_fail(err, "%s: OpenCSD cannot create a decode tree", buf->name);
	return 0;
}

int jf_cs_tree_start(struct jf_cs_tree *tree, FnTraceElemIn on_elem, const void *ctx,
		     struct jf_error *err)
{
	/* The tree hands the output to the decoders that exist now: call after adding. */
	ocsd_err_t e = ocsd_dt_set_gen_elem_outfn(tree->handle, on_elem, ctx);

	if (e != OCSD_OK) {
		char msg[128];

		errstr(e, msg, sizeof(msg));
		return jf_fail(err, "OpenCSD cannot attach the element output: %s", msg);
	}
	return 0;
}

int jf_cs_tree_add_source(struct jf_cs_tree *tree, const struct jf_cs_source *src,
			  struct jf_error *err)
{
	const char *decoder;
	union {
		ocsd_etmv4_cfg etmv4;
		ocsd_ete_cfg ete;
		ocsd_etmv3_cfg etmv3;
		ocsd_ptm_cfg ptm;
	} cfg;
	unsigned char csid = 0;
	ocsd_err_t e;

	memset(&cfg, 0, sizeof(cfg));
	if (src->protocol == JF_CS_PROTO_STM || src->protocol == JF_CS_PROTO_ITM) {
		jf_fail(err, "%s: %s source not decoded", src->name,
			jf_cs_protocol_name(src->protocol));
		return 1;
	}
	if (src->protocol == JF_CS_PROTO_UNKNOWN) {
		jf_fail(err, "%s: unknown trace protocol", src->name);
		return 1;
	}
	if (src->arch == JF_CS_ARCH_UNKNOWN) {
		jf_fail(err, "%s: unknown core '%s', not decoded", src->name, src->core);
		return 1;
	}
	switch (src->protocol) {
	case JF_CS_PROTO_ETMV4I:
		decoder = OCSD_BUILTIN_DCD_ETMV4I;
		cfg.etmv4.reg_idr0 = src->trcidr[0];
		cfg.etmv4.reg_idr1 = src->trcidr[1];
		cfg.etmv4.reg_idr2 = src->trcidr[2];
		cfg.etmv4.reg_idr8 = src->trcidr[8];
		cfg.etmv4.reg_idr9 = src->trcidr[9];
		cfg.etmv4.reg_idr10 = src->trcidr[10];
		cfg.etmv4.reg_idr11 = src->trcidr[11];
		cfg.etmv4.reg_idr12 = src->trcidr[12];
		cfg.etmv4.reg_idr13 = src->trcidr[13];
		cfg.etmv4.reg_configr = src->trcconfigr;
		cfg.etmv4.reg_traceidr = src->trctraceidr;
		cfg.etmv4.arch_ver = ocsd_arch(src->arch);
		cfg.etmv4.core_prof = ocsd_profile(src->profile);
		break;
	case JF_CS_PROTO_ETE:
		decoder = OCSD_BUILTIN_DCD_ETE;
		cfg.ete.reg_idr0 = src->trcidr[0];
		cfg.ete.reg_idr1 = src->trcidr[1];
		cfg.ete.reg_idr2 = src->trcidr[2];
		cfg.ete.reg_idr8 = src->trcidr[8];
		cfg.ete.reg_devarch = src->trcdevarch;
		cfg.ete.reg_configr = src->trcconfigr;
		cfg.ete.reg_traceidr = src->trctraceidr;
		cfg.ete.arch_ver = ocsd_arch(src->arch);
		cfg.ete.core_prof = ocsd_profile(src->profile);
		break;
	case JF_CS_PROTO_ETMV3:
		decoder = OCSD_BUILTIN_DCD_ETMV3;
		cfg.etmv3.reg_idr = src->etmidr;
		cfg.etmv3.reg_ctrl = src->etmcr;
		cfg.etmv3.reg_ccer = src->etmccer;
		cfg.etmv3.reg_trc_id = src->etmtraceidr;
		cfg.etmv3.arch_ver = ocsd_arch(src->arch);
		cfg.etmv3.core_prof = ocsd_profile(src->profile);
		break;
	default: /* JF_CS_PROTO_PTM */
		decoder = OCSD_BUILTIN_DCD_PTM;
		cfg.ptm.reg_idr = src->etmidr;
		cfg.ptm.reg_ctrl = src->etmcr;
		cfg.ptm.reg_ccer = src->etmccer;
		cfg.ptm.reg_trc_id = src->etmtraceidr;
		cfg.ptm.arch_ver = ocsd_arch(src->arch);
		cfg.ptm.core_prof = ocsd_profile(src->profile);
		break;
	}
	e = ocsd_dt_create_decoder(tree->handle, decoder, OCSD_CREATE_FLG_FULL_DECODER, &cfg,
				   &csid);
	if (e != OCSD_OK) {
		char msg[128];

		errstr(e, msg, sizeof(msg));
		/* A source whose programming OpenCSD rejects is skipped like an STM source:
		 * the others in the buffer still decode. */
		jf_fail(err, "%s: OpenCSD rejects its %s setup: %s", src->name,
			jf_cs_protocol_name(src->protocol), msg);
		return 1;
	}
	if (tree->nids < sizeof(tree->ids))
		tree->ids[tree->nids++] = csid;
	return 0;
}

int jf_cs_tree_sync_memory(struct jf_cs_tree *tree, struct jf_error *err)
{
	uint64_t gen = jf_isolate_child && jf_isolate_child->remote
			       ? jf_isolate_child->generation
			       : jf_codemap_generation(tree->map);
	ocsd_err_t e;

	if (tree->has_accessor && gen == tree->generation)
		return 0;
	if (tree->has_accessor) {
		/* Removing the accessor drops OpenCSD's page cache, keyed by address only:
		 * bytes replaced at the same address must not be decoded from stale pages. */
		ocsd_dt_remove_mem_acc(tree->handle, 0, OCSD_MEM_SPACE_ANY);
		tree->has_accessor = 0;
	}
	e = ocsd_dt_add_callback_mem_acc(tree->handle, 0, ~(ocsd_vaddr_t)0, OCSD_MEM_SPACE_ANY,
					 read_code, tree->map);
	if (e != OCSD_OK) {
		char msg[128];

		errstr(e, msg, sizeof(msg));
		return jf_fail(err, "OpenCSD cannot add the code-map accessor: %s", msg);
	}
	tree->has_accessor = 1;
	tree->generation = gen;
	return 0;
}

void jf_cs_tree_close(struct jf_cs_tree *tree)
{
	if (tree->handle != C_API_INVALID_TREE_HANDLE)
		ocsd_destroy_dcd_tree(tree->handle);
	memset(tree, 0, sizeof(*tree));
}
