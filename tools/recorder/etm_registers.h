/* The trace unit an AArch64 recording describes, in the snapshot (ETM_0.ini) and in the
 * cs_etm perf.data (AUXTRACE_INFO): an ETMv4.0 as on a Cortex-A53, with the values a
 * kernel that traces EL0 with context IDs and timestamps programs.
 *
 * TRCIDR0 0x28000EA1: instruction trace, branch broadcast possible, no conditional trace,
 *   64-bit timestamps (TSSIZE); TRCIDR1 0x4100F403: ETMv4.0 by ARM; TRCIDR2 0x00000488:
 *   64-bit instruction addresses, 32-bit context IDs, 8-bit VMIDs; TRCIDR8 0: no
 *   speculation (atoms are committed at once); TRCCONFIGR 0x841: context ID tracing (CID,
 *   bit 6) and timestamps (TS, bit 11) on; TRCAUTHSTATUS 0xCC: non-invasive debug
 *   implemented and enabled in both security states, invasive debug not implemented. */
#ifndef JITFLOW_RECORDER_ETM_REGISTERS_H
#define JITFLOW_RECORDER_ETM_REGISTERS_H

enum {
	JF_ETM_TRCCONFIGR = 0x00000841,
	JF_ETM_TRCTRACEIDR = 0x10, /* the trace ID of the recording's trace unit */
	JF_ETM_TRCIDR0 = 0x28000EA1,
	JF_ETM_TRCIDR1 = 0x4100F403,
	JF_ETM_TRCIDR2 = 0x00000488,
	JF_ETM_TRCIDR8 = 0x00000000,
	JF_ETM_TRCAUTHSTATUS = 0x000000CC,
};

#endif
