/* Reading zone files: perf jitdump (jit-PID.dump) with jitflow's extension records
 * (docs/zone-format.md). The reader maps the file and returns its records in sequence
 * order (threads' buffers reach the file out of order; see zone_order.c); strings
 * and code bytes point into the mapping (valid until jf_zone_reader_close). Both byte
 * orders are read (the header's magic tells). Unknown record ids and UNWINDING_INFO are
 * skipped and counted.
 *
 * Hostile input gets a one-line error naming the file, the record's offset and what was
 * expected; the reader never reads beyond the file and allocates nothing whose size comes
 * from the file (memory grows only with the number of live regions). */
#ifndef JITFLOW_ZONE_H
#define JITFLOW_ZONE_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#include "jitflow/error.h"
#include "jitflow/zone_format.h"

#ifdef __cplusplus
extern "C" {
#endif

struct jf_zone_reader;

struct jf_zone_header {
	uint32_t version;
	uint32_t elf_mach;
	uint32_t pid;
	uint64_t timestamp;
	uint64_t flags;      /* JF_JITDUMP_FLAG_* */
	int swapped;         /* written in the other byte order */
	int arch_timestamp;  /* timestamps are TSC / counter ticks */
};

struct jf_zone_pc_entry {
	uint32_t code_offset, bytecode_pc, op_index;
	uint16_t inline_depth, op_kind;
};

struct jf_zone_debug_entry {
	uint64_t addr;
	uint32_t line, discrim;
	const char *file;
};

struct jf_zone_record {
	uint32_t id;         /* enum jf_jitdump_id or enum jf_zone_id (or unknown: skipped) */
	uint32_t size;       /* total_size */
	uint64_t offset;     /* of the record in the file */
	uint64_t timestamp;  /* as written */
	uint64_t time;       /* converted by the time hook (= timestamp without one) */
	uint64_t seq;        /* extension records: sequence number; perf's records: 0 */
	uint32_t tid;        /* extension records: writer thread */
	union {
		struct {
			uint32_t pid, tid;
			uint64_t vma, addr, size, index;
			const char *name;
			uint64_t code_offset;  /* file offset of the code bytes */
			const uint8_t *code;
		} code_load;
		struct {
			uint32_t pid, tid;
			uint64_t vma, old_addr, new_addr, size, index;
		} code_move;
		struct {
			uint64_t addr, count;
			const uint8_t *entries; /* read with jf_zone_debug_entries */
			size_t entries_size;
		} debug_info;
		struct {
			uint32_t clock;        /* enum jf_zone_clock */
			uint64_t tick_hz, mono_ns, ticks;
		} clock;
		struct {
			uint64_t addr, size, code_index, trace_id, parent_trace, parent_guard;
			uint64_t code_object;
			uint32_t kind, generation;
			const char *name;
			uint64_t code_offset;  /* file offset of the bytes (from its CODE_LOAD) */
			const uint8_t *code;
		} region_load;
		struct { uint64_t addr, size; } region_free;
		struct { uint64_t old_addr, new_addr, size; } region_move;
		struct {
			uint64_t addr;
			uint32_t size;
			uint32_t flags;         /* JF_PATCH_OBSERVED (zone_format.h) */
			uint64_t bytes_offset;  /* file offset of the new bytes */
			const uint8_t *bytes;
			const char *reason;
		} patch;
		struct {
			uint64_t guard_id, trace_id, branch_addr, stub_addr;
			uint32_t resume_pc;
			uint16_t op_kind;       /* named by an OP_NAME record (0: none) */
			uint16_t flags;         /* enum jf_guard_flags (emitter.h) */
		} guard;
		struct {
			uint64_t region_addr;
			uint32_t count;
			uint32_t flags;         /* JF_PC_MAP_* (zone_format.h) */
			const uint8_t *entries; /* read with jf_zone_pc_map_entry */
		} pc_map;               /* also INLINE_FRAMES (the same layout) */
		struct { uint16_t op_kind; const char *name; } op_name;
		struct { uint64_t id; uint32_t line; const char *name, *file; } code_object;
		struct { uint64_t start, end; uint32_t kind; const char *name; } interp_range;
		struct { uint32_t kind; uint64_t arg; } event;
		struct { uint64_t addr; uint32_t methods; } marker;
		struct { uint64_t trace_id, addr, point_id; uint32_t kind; } point;
		struct { uint32_t tid; const char *name; } thread_name;
	} u;
};

struct jf_zone_stats {
	uint64_t records;          /* all records read, skipped ones included */
	uint64_t by_id[JF_JITDUMP_CODE_MAX];               /* perf's records */
	uint64_t by_ext[JF_ZONE_ID_LAST - JF_ZONE_ID_BASE + 1]; /* extension records */
	uint64_t unknown;          /* unknown ids, skipped */
	uint64_t unwinding_skipped;
	uint64_t time_backwards;   /* records whose timestamp is before the previous one's */
	uint64_t free_unknown;     /* REGION_FREE / MOVE of a range with no live region */
	/* Records are returned in seq order; the file holds them in `runs` stretches of
	 * increasing seq (one per thread buffer written out of order; 1 for one thread). */
	uint64_t runs;
	uint64_t seq_duplicates;   /* extension records whose seq the one before also had */
	uint64_t first_duplicate_offset;
	uint64_t seq_gaps;         /* places where seqs are missing (records lost) ... */
	uint64_t seq_missing;      /* ... how many in all */
	uint64_t first_gap_offset; /* the record after the first gap */
	uint64_t first_gap_after;  /* the last seq before it */
};

/* Converts a zone timestamp to the trace's clock (e.g. TSC -> perf time). */
typedef uint64_t (*jf_zone_time_fn)(void *ctx, uint64_t timestamp);

int jf_zone_reader_open(struct jf_zone_reader **out, const char *path, struct jf_error *err);
/* Read from memory (not copied; must outlive the reader); name is used in messages. */
int jf_zone_reader_open_memory(struct jf_zone_reader **out, const void *data, size_t size,
			       const char *name, struct jf_error *err);
void jf_zone_reader_close(struct jf_zone_reader *r);

const struct jf_zone_header *jf_zone_reader_header(const struct jf_zone_reader *r);
/* File offset of the next record to read (after an error: of the record that failed). */
size_t jf_zone_reader_offset(const struct jf_zone_reader *r);
const struct jf_zone_stats *jf_zone_reader_stats(const struct jf_zone_reader *r);
const char *jf_zone_reader_path(const struct jf_zone_reader *r);
void jf_zone_reader_set_time_fn(struct jf_zone_reader *r, jf_zone_time_fn fn, void *ctx);

/* The next record in seq order: 1 = rec filled, 0 = end of file, -1 = error (err says
 * where and what; the reader stops there: after a bad size nothing later can be trusted,
 * and a bad size is reported after every whole record before it was returned). Unknown ids and
 * UNWINDING_INFO are returned too (with their id) so that a dump can list them; they carry
 * no decoded fields. */
int jf_zone_next(struct jf_zone_reader *r, struct jf_zone_record *rec, struct jf_error *err);

/* Entry i of a PC_MAP or INLINE_FRAMES record (i < count), in host byte order. */
void jf_zone_pc_map_entry(const struct jf_zone_reader *r, const struct jf_zone_record *rec,
			  uint32_t i, struct jf_zone_pc_entry *entry);

/* Walk a DEBUG_INFO record's entries: start with a zeroed iterator; returns 1 with entry
 * filled, 0 after the last. The record was validated when read (every entry fits and is
 * terminated). */
struct jf_zone_debug_iter { size_t pos; uint64_t index; };
int jf_zone_debug_entries(const struct jf_zone_reader *r, const struct jf_zone_record *rec,
			  struct jf_zone_debug_iter *it, struct jf_zone_debug_entry *entry);

/* Whether base_name is a zone file's conventional name, "jit-<pid>.dump" (perf's). */
int jf_zone_is_file_name(const char *base_name);

/* Names for listings and JSON ("CODE_LOAD", "REGION_LOAD", ..., "UNKNOWN"). */
const char *jf_zone_record_name(uint32_t id);
const char *jf_zone_region_kind_name(uint32_t kind);
const char *jf_zone_interp_kind_name(uint32_t kind);
const char *jf_zone_event_kind_name(uint32_t kind);
const char *jf_zone_trace_link_name(uint32_t link); /* enum jf_trace_link */
const char *jf_zone_clock_name(uint32_t clock);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
