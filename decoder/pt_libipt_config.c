/* A jf_pt_config as libipt's pt_config. */
#include "pt_libipt_config.h"

int jf_pt_libipt_config(const struct jf_pt_config *cfg, struct pt_config *config,
			struct jf_error *err)
{
	int rc;

	pt_config_init(config);
	/* libipt wants a non-const buffer but never writes to it. An empty trace may have no
	 * buffer at all (NULL + 0 is undefined behaviour); it is never given to libipt. */
	config->begin = (uint8_t *)cfg->trace;
	config->end = cfg->size ? (uint8_t *)cfg->trace + cfg->size : config->begin;
	config->cpuid_0x15_eax = cfg->cpuid_0x15_eax;
	config->cpuid_0x15_ebx = cfg->cpuid_0x15_ebx;
	config->mtc_freq = cfg->mtc_freq;
	config->nom_freq = cfg->nom_freq;
	config->flags.variant.block.end_on_call = cfg->end_on_call ? 1 : 0;
	config->flags.variant.block.end_on_jump = cfg->end_on_jump ? 1 : 0;
	if (cfg->cpu_family) {
		config->cpu.vendor = pcv_intel;
		config->cpu.family = cfg->cpu_family;
		config->cpu.model = cfg->cpu_model;
		config->cpu.stepping = cfg->cpu_stepping;
		rc = pt_cpu_errata(&config->errata, &config->cpu);
		if (rc < 0) {
			jf_fail(err, "cpu %u/%u/%u: %s", cfg->cpu_family, cfg->cpu_model,
				cfg->cpu_stepping, pt_errstr(pt_errcode(rc)));
			return -1;
		}
	}
	return 0;
}

struct pt_packet_decoder *jf_pt_packet_decoder(const uint8_t *trace, size_t size)
{
	struct pt_config config;

	pt_config_init(&config);
	/* libipt wants a non-const buffer but never writes to it. */
	config.begin = (uint8_t *)trace;
	config.end = (uint8_t *)trace + size;
	return pt_pkt_alloc_decoder(&config);
}
