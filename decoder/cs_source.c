/* Facts about CoreSight trace sources: trace IDs from registers, protocol names, and the
 * architecture of the traced core (which instruction decoder OpenCSD must use). */
#include "jitflow/coresight.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

uint8_t jf_cs_source_trace_id(const struct jf_cs_source *src)
{
	switch (src->protocol) {
	case JF_CS_PROTO_ETMV4I:
	case JF_CS_PROTO_ETE:
		return src->trctraceidr & 0x7f;
	case JF_CS_PROTO_ETMV3:
	case JF_CS_PROTO_PTM:
		return src->etmtraceidr & 0x7f;
	case JF_CS_PROTO_STM:
		return (src->stmtcsr >> 16) & 0x7f;   /* STMTCSR.TRACEID, bits [22:16] */
	case JF_CS_PROTO_ITM:
		return (src->itmtcr >> 16) & 0x7f;    /* ITMTCR.TraceBusID, bits [22:16] */
	default:
		return 0;
	}
}

const char *jf_cs_protocol_name(enum jf_cs_protocol protocol)
{
	switch (protocol) {
	case JF_CS_PROTO_ETMV4I: return "ETMv4";
	case JF_CS_PROTO_ETE: return "ETE";
	case JF_CS_PROTO_ETMV3: return "ETMv3";
	case JF_CS_PROTO_PTM: return "PTM";
	case JF_CS_PROTO_STM: return "STM";
	case JF_CS_PROTO_ITM: return "ITM";
	default: return "unknown";
	}
}

/* Named cores, with the architecture OpenCSD 1.3.3 decodes them as (v8.2 cores are
 * decoded with the v8.3 rules there, so that their newer instructions are known). */
static const struct {
	const char *name;
	uint8_t arch, profile;
} cores[] = {
	{ "Cortex-A77", JF_CS_ARCH_V8R3, JF_CS_PROFILE_A },
	{ "Cortex-A76", JF_CS_ARCH_V8R3, JF_CS_PROFILE_A },
	{ "Cortex-A75", JF_CS_ARCH_V8R3, JF_CS_PROFILE_A },
	{ "Cortex-A73", JF_CS_ARCH_V8, JF_CS_PROFILE_A },
	{ "Cortex-A72", JF_CS_ARCH_V8, JF_CS_PROFILE_A },
	{ "Cortex-A65", JF_CS_ARCH_V8R3, JF_CS_PROFILE_A },
	{ "Cortex-A57", JF_CS_ARCH_V8, JF_CS_PROFILE_A },
	{ "Cortex-A55", JF_CS_ARCH_V8R3, JF_CS_PROFILE_A },
	{ "Cortex-A53", JF_CS_ARCH_V8, JF_CS_PROFILE_A },
	{ "Cortex-A35", JF_CS_ARCH_V8, JF_CS_PROFILE_A },
	{ "Cortex-A32", JF_CS_ARCH_V8, JF_CS_PROFILE_A },
	{ "Cortex-A17", JF_CS_ARCH_V7, JF_CS_PROFILE_A },
	{ "Cortex-A15", JF_CS_ARCH_V7, JF_CS_PROFILE_A },
	{ "Cortex-A12", JF_CS_ARCH_V7, JF_CS_PROFILE_A },
	{ "Cortex-A9", JF_CS_ARCH_V7, JF_CS_PROFILE_A },
	{ "Cortex-A8", JF_CS_ARCH_V7, JF_CS_PROFILE_A },
	{ "Cortex-A7", JF_CS_ARCH_V7, JF_CS_PROFILE_A },
	{ "Cortex-A5", JF_CS_ARCH_V7, JF_CS_PROFILE_A },
	{ "Cortex-R52", JF_CS_ARCH_V8, JF_CS_PROFILE_R },
	{ "Cortex-R8", JF_CS_ARCH_V7, JF_CS_PROFILE_R },
	{ "Cortex-R7", JF_CS_ARCH_V7, JF_CS_PROFILE_R },
	{ "Cortex-R5", JF_CS_ARCH_V7, JF_CS_PROFILE_R },
	{ "Cortex-R4", JF_CS_ARCH_V7, JF_CS_PROFILE_R },
	{ "Cortex-M33", JF_CS_ARCH_V8, JF_CS_PROFILE_M },
	{ "Cortex-M23", JF_CS_ARCH_V8, JF_CS_PROFILE_M },
	{ "Cortex-M4", JF_CS_ARCH_V7, JF_CS_PROFILE_M },
	{ "Cortex-M3", JF_CS_ARCH_V7, JF_CS_PROFILE_M },
	{ "Cortex-M0+", JF_CS_ARCH_V7, JF_CS_PROFILE_M },
	{ "Cortex-M0", JF_CS_ARCH_V7, JF_CS_PROFILE_M },
};

static int profile_letter(char c, uint8_t *profile)
{
	switch (c) {
	case 'A': case 'a': *profile = JF_CS_PROFILE_A; return 0;
	case 'R': case 'r': *profile = JF_CS_PROFILE_R; return 0;
	case 'M': case 'm': *profile = JF_CS_PROFILE_M; return 0;
	default: return -1;
	}
}

/* "ARMv<major>[.<minor>]-<profile>", e.g. "ARMv8.3-A"; "ARMv8.x-A" means some v8. */
static int arch_name(const char *s, uint8_t *arch, uint8_t *profile)
{
	int major, minor = 0;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	major = s[0] - '0';
	s++;
	if (*s == '.') {
		if (s[1] == 'x' || s[1] == 'X')
			minor = 0;
		else if (s[1] >= '0' && s[1] <= '9')
			minor = s[1] - '0';
		else
			return -1;
		s += 2;
	}
	if (*s != '-' || !s[1] || s[2] || profile_letter(s[1], profile) < 0)
		return -1;
	if (major == 7)
		*arch = JF_CS_ARCH_V7;
	else if (major == 8 && minor < 3)
		*arch = JF_CS_ARCH_V8;
	else if (major == 8 && minor == 3)
		*arch = JF_CS_ARCH_V8R3;
	else if (major >= 8)
		*arch = JF_CS_ARCH_AA64;
	else
		return -1;
	return 0;
}

int jf_cs_core_arch(const char *core, uint8_t *arch, uint8_t *profile)
{
	size_t i;

	for (i = 0; i < sizeof(cores) / sizeof(cores[0]); i++) {
		if (strcmp(core, cores[i].name) == 0) {
			*arch = cores[i].arch;
			*profile = cores[i].profile;
			return 0;
		}
	}
	if (strncmp(core, "ARMv", 4) == 0)
		return arch_name(core + 4, arch, profile);
	/* A generic 64-bit A-profile core with the newest rules OpenCSD has. */
	if (strcasecmp(core, "ARM-AA64") == 0) {
		*arch = JF_CS_ARCH_AA64;
		*profile = JF_CS_PROFILE_A;
		return 0;
	}
	return -1;
}
