/* The on-disk layout of a jitflow zone file: perf's jitdump format plus jitflow's extension
 * records. docs/zone-format.md is the specification; this header gives the constants and
 * sizes both the emitter (writer) and the reader use, so the two cannot drift apart.
 *
 * Every multi-byte field is in the byte order of the writer; the header's magic tells a
 * reader which one (JF_JITDUMP_MAGIC read back as JF_JITDUMP_MAGIC_SWAPPED means swap).
 * No field is assumed to be aligned. This header depends on nothing but <stdint.h>, so a
 * runtime can include it without linking jitflow. */
#ifndef JITFLOW_ZONE_FORMAT_H
#define JITFLOW_ZONE_FORMAT_H

#include <stdint.h>

/* File header: 40 bytes. */
#define JF_JITDUMP_MAGIC 0x4A695444u          /* "JiTD" */
#define JF_JITDUMP_MAGIC_SWAPPED 0x4454694Au
#define JF_JITDUMP_VERSION 1u                 /* perf refuses versions above 1 */
#define JF_JITDUMP_HEADER_SIZE 40u
#define JF_JITDUMP_FLAG_ARCH_TIMESTAMP 1ull   /* timestamps are TSC / arch counter ticks */

/* Every record starts with id (u32), total_size (u32, whole record), timestamp (u64). */
#define JF_JITDUMP_PREFIX_SIZE 16u

/* perf's own record ids. */
enum jf_jitdump_id {
	JF_JITDUMP_CODE_LOAD = 0,       /* pid, tid, vma, code_addr, code_size, code_index,
	                                 * name\0, code bytes */
	JF_JITDUMP_CODE_MOVE = 1,       /* pid, tid, vma, old, new, code_size, code_index */
	JF_JITDUMP_CODE_DEBUG_INFO = 2, /* code_addr, nr_entry, {addr, line, discrim, file\0}* */
	JF_JITDUMP_CODE_CLOSE = 3,
	JF_JITDUMP_CODE_UNWINDING_INFO = 4,
	JF_JITDUMP_CODE_MAX = 5,        /* perf skips every id >= this one */
};

/* Fixed body sizes (after the prefix) of perf's records. */
#define JF_JITDUMP_CODE_LOAD_FIXED 40u   /* then name\0 and code_size bytes */
#define JF_JITDUMP_CODE_MOVE_FIXED 48u
#define JF_JITDUMP_DEBUG_INFO_FIXED 16u  /* then nr_entry entries */
#define JF_JITDUMP_DEBUG_ENTRY_FIXED 16u /* addr u64, line u32, discrim u32, then file\0 */
#define JF_JITDUMP_UNWINDING_FIXED 24u

/* jitflow's extension records: ids "JF" << 16 | n, far above perf's, so perf skips them.
 * Each body starts with the extension prefix: seq (u64), tid (u32), ext_version (u16),
 * reserved (u16, zero). */
#define JF_ZONE_ID_BASE 0x4A460000u
#define JF_ZONE_EXT_VERSION 1u
#define JF_ZONE_EXT_PREFIX_SIZE 16u

enum jf_zone_id {
	JF_ZONE_CLOCK = JF_ZONE_ID_BASE + 1,        /* clock u32, reserved u32, tsc_hz u64,
	                                              * mono_ns u64, ticks u64 (same instant) */
	JF_ZONE_REGION_LOAD = JF_ZONE_ID_BASE + 2,  /* addr, size, code_index, trace_id,
	                                              * parent_trace, parent_guard, code_object
	                                              * (u64 each), kind u32, generation u32,
	                                              * name\0 */
	JF_ZONE_REGION_FREE = JF_ZONE_ID_BASE + 3,  /* addr u64, size u64 */
	JF_ZONE_REGION_MOVE = JF_ZONE_ID_BASE + 4,  /* old u64, new u64, size u64 */
	JF_ZONE_PATCH = JF_ZONE_ID_BASE + 5,        /* addr u64, size u32, flags u32,
	                                              * bytes[size], reason\0 */
	JF_ZONE_GUARD = JF_ZONE_ID_BASE + 6,        /* guard_id, trace_id, branch, stub (u64),
	                                              * resume_pc u32, op_kind u16 (named by
	                                              * OP_NAME, 0: none), reserved u16 */
	JF_ZONE_PC_MAP = JF_ZONE_ID_BASE + 7,       /* region u64, count u32, flags u32,
	                                              * count x {offset u32, pc u32, op u32,
	                                              * depth u16, kind u16} */
	JF_ZONE_OP_NAME = JF_ZONE_ID_BASE + 8,      /* op_kind u16, reserved u16+u32, name\0 */
	JF_ZONE_CODE_OBJECT = JF_ZONE_ID_BASE + 9,  /* id u64, line u32, reserved u32, name\0,
	                                              * file\0 */
	JF_ZONE_INTERP_RANGE = JF_ZONE_ID_BASE + 10, /* start u64, end u64, kind u32,
	                                               * reserved u32, name\0 */
	JF_ZONE_EVENT = JF_ZONE_ID_BASE + 11,       /* kind u32, reserved u32, arg u64 */
	JF_ZONE_MARKER = JF_ZONE_ID_BASE + 12,      /* marker_addr u64, methods u32,
	                                              * reserved u32 */
	JF_ZONE_POINT = JF_ZONE_ID_BASE + 13,       /* trace_id u64, addr u64, point_id u64,
	                                              * kind u32, reserved u32: an instruction
	                                              * whose passes the runtime counts */
	JF_ZONE_THREAD_NAME = JF_ZONE_ID_BASE + 14, /* tid u32, reserved u32, name\0: the
	                                              * name thread tid goes by from here on */
	JF_ZONE_INLINE_FRAMES = JF_ZONE_ID_BASE + 15, /* PC_MAP's layout: the frames around
	                                                * the inlined code of the region's
	                                                * code-object map */
	JF_ZONE_ID_LAST = JF_ZONE_INLINE_FRAMES,
};

/* Fixed body sizes after the extension prefix. */
#define JF_ZONE_CLOCK_FIXED 32u
#define JF_ZONE_REGION_LOAD_FIXED 64u
#define JF_ZONE_REGION_FREE_FIXED 16u
#define JF_ZONE_REGION_MOVE_FIXED 24u
#define JF_ZONE_PATCH_FIXED 16u
#define JF_ZONE_GUARD_FIXED 40u
#define JF_ZONE_PC_MAP_FIXED 16u
#define JF_ZONE_PC_MAP_ENTRY_SIZE 16u
#define JF_ZONE_OP_NAME_FIXED 8u
#define JF_ZONE_CODE_OBJECT_FIXED 16u
#define JF_ZONE_INTERP_RANGE_FIXED 24u
#define JF_ZONE_EVENT_FIXED 16u
#define JF_ZONE_MARKER_FIXED 16u
#define JF_ZONE_POINT_FIXED 32u
#define JF_ZONE_THREAD_NAME_FIXED 8u

/* JF_ZONE_PATCH.flags */
enum {
	JF_PATCH_OBSERVED = 1 << 0, /* bytes a recorder saw run here (not a runtime's word that
	                             * it wrote them): where the image already holds them,
	                             * nothing changed and the record is no code change */
};

/* A recording folder's zone files of observed patches (one per thread, `jitflow record`)
 * are named PREFIX + TID + ".dump"; not jit-*.dump, which names a runtime's own. */
#define JF_OBSERVED_CODE_PREFIX "observed-code-"

/* JF_ZONE_POINT.kind */
enum jf_zone_point_kind {
	JF_POINT_ENTRY = 1,   /* a trace's entry (PyPy: "entry N") */
	JF_POINT_LABEL = 2,   /* a label / loop header inside a trace (PyPy: "TargetToken(T)") */
	JF_POINT_BRIDGE = 3,  /* a bridge's entry (PyPy: "bridge B") */
};

/* JF_ZONE_CLOCK.clock */
enum jf_zone_clock {
	JF_ZONE_CLOCK_MONOTONIC = 0, /* CLOCK_MONOTONIC nanoseconds (perf record -k 1) */
	JF_ZONE_CLOCK_TSC = 1,       /* x86 time-stamp counter (rdtsc) */
	JF_ZONE_CLOCK_ARM_CNTVCT = 2, /* AArch64 virtual counter (CNTVCT_EL0) */
};

/* JF_ZONE_PC_MAP.flags. A region has at most one pc map of each kind, ops (flags 0) and
 * code objects (JF_PC_MAP_CODE_OBJECTS); a later map of a kind replaces the region's
 * earlier one of that kind only. With both, the code-object map says which function each
 * bytecode pc is in and the op map which op runs there (CPython: uops, and the inlined
 * callee of a _PUSH_FRAME). */
enum {
	JF_PC_MAP_CODE_OBJECTS = 1 << 0, /* each entry's kind is the id of a CODE_OBJECT record
	                                  * (the function whose bytecode pc it is: code inlined
	                                  * into a trace), not an OP_NAME; 0: no function
	                                  * known there */
	JF_PC_MAP_PER_REGION = 1 << 1,   /* with JF_PC_MAP_CODE_OBJECTS: a code object's
	                                  * bytecode ranges are counted apart in each region
	                                  * (HotSpot: per nmethod, its inlined methods too),
	                                  * not summed across the regions that run them */
};

/* JF_ZONE_MARKER.methods: how record positions show in the trace. */
enum {
	JF_ZONE_MARKER_CALLS = 1 << 0,   /* jf_emitter_marker(seq) is called after each record */
	JF_ZONE_MARKER_PTWRITE = 1 << 1, /* PTWRITE(seq) is executed after each record */
	JF_ZONE_MARKER_POSITION = 1 << 2, /* timestamps are positions: the number of
	                                   * instructions the record's thread had run in the
	                                   * trace before the record applies */
};

#endif
