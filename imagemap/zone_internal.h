/* Internals of the zone reader: the byte cursor that never reads past a record, and the
 * set of live extension regions used to reject overlapping loads. */
#ifndef JITFLOW_ZONE_INTERNAL_H
#define JITFLOW_ZONE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "jitflow/mapped_file.h"
#include "jitflow/zone.h"

/* Reads fields of one record; any read past its end sets ok = 0 and yields zeros, so a
 * parser checks ok once at the end instead of after every field. */
struct jf_cursor {
	const uint8_t *p;
	size_t left;
	int swap;
	int ok;
};

uint16_t jf_cur_u16(struct jf_cursor *c);
uint32_t jf_cur_u32(struct jf_cursor *c);
uint64_t jf_cur_u64(struct jf_cursor *c);
/* A NUL-terminated string inside the record, or NULL (and ok = 0). */
const char *jf_cur_str(struct jf_cursor *c);
/* n raw bytes, or NULL (and ok = 0). */
const uint8_t *jf_cur_bytes(struct jf_cursor *c, size_t n);

struct jf_live_range { uint64_t start, end; };

/* Sorted, non-overlapping. */
struct jf_live_set {
	struct jf_live_range *v;
	size_t n, cap;
};

/* 0 ok, 1 overlaps an existing range (*hit = it), -1 out of memory. */
int jf_live_insert(struct jf_live_set *s, uint64_t start, uint64_t end,
		   struct jf_live_range *hit);
/* Remove every range that starts inside [start, end); returns how many. */
size_t jf_live_remove(struct jf_live_set *s, uint64_t start, uint64_t end);
/* Remove the range that starts exactly at start; returns its end or 0 if none. */
uint64_t jf_live_take(struct jf_live_set *s, uint64_t start);
void jf_live_free(struct jf_live_set *s);

/* A stretch of the file whose extension records are in seq order (zone_order.c). */
struct jf_zone_run {
	size_t start, end;           /* file range */
	size_t pos;                  /* its next record */
	uint64_t key;                /* seq of the next extension record (UINT64_MAX: none) */
};

/* Runs are kept for the whole read: a bound on a hostile file's cost. A thread's buffer is
 * 64 KiB, so this is a file of at least 4 GiB written by threads taking turns. */
enum { JF_ZONE_MAX_RUNS = 1 << 16 };

struct jf_zone_reader {
	struct jf_mapped_file file;  /* data/size also set for in-memory readers */
	int mapped;
	char *name;
	struct jf_zone_header header;
	struct jf_zone_stats stats;
	size_t pos;                  /* next record's offset */
	int done, failed;
	uint64_t last_seq, last_timestamp;
	/* Reading in seq order: a heap of runs by their next seq (zone_order.c). */
	struct jf_zone_run *runs;
	size_t nruns, runs_cap;
	size_t scan_end;             /* the walk at open stopped here (file end, or damage) */
	/* the previous record if it was a CODE_LOAD: a REGION_LOAD must follow its own */
	int have_load;
	uint64_t load_addr, load_size, load_index, load_code_offset;
	struct jf_live_set live;
	jf_zone_time_fn time_fn;
	void *time_ctx;
};

/* Parse the body of an extension record (after the extension prefix) into rec. Returns 0,
 * or -1 with err set (the caller prefixes file and offset). */
int jf_zone_parse_ext(struct jf_zone_reader *r, struct jf_cursor *c, struct jf_zone_record *rec,
		      struct jf_error *err);

/* zone_order.c: cut the file (from r->pos) into runs; the offset of the next record in
 * seq order (scan_end when all runs are read); move past the record just read there;
 * count duplicate and missing sequence numbers. */
int jf_zone_order_scan(struct jf_zone_reader *r, struct jf_error *err);
size_t jf_zone_order_next(struct jf_zone_reader *r);
void jf_zone_order_advance(struct jf_zone_reader *r, size_t size, int was_ext);
void jf_zone_order_check(struct jf_zone_reader *r, const struct jf_zone_record *rec);

#endif
