/* Internals of the time-versioned zone image: the regions currently mapped (and the last
 * ones freed, for error reports), the zone file streams and their pending records. */
#ifndef JITFLOW_ZONE_IMAGE_INTERNAL_H
#define JITFLOW_ZONE_IMAGE_INTERNAL_H

#include <stdint.h>

#include "jitflow/zone_image.h"

struct jf_zone_region {
	uint64_t addr, size;
	const char *name;     /* points into the zone file's mapping */
	uint32_t version;     /* 1 when loaded, +1 per patch */
	uint32_t kind;
	uint64_t code_offset; /* of the original bytes in the zone file */
	int patched;          /* bytes differ from the file: a move must copy them */
	const char *path;     /* the zone file */
};

enum { JF_ZONE_FREED_KEPT = 64 };

struct jf_zone_regions {
	struct jf_zone_region *live; /* sorted by addr, non-overlapping */
	size_t n, cap;
	struct jf_zone_region freed[JF_ZONE_FREED_KEPT]; /* ring of the last freed */
	size_t nfreed;
};

/* The live region holding addr (NULL if none). */
struct jf_zone_region *jf_zone_regions_find(struct jf_zone_regions *rs, uint64_t addr);
/* A recently freed region that held addr (newest first; NULL if none). */
const struct jf_zone_region *jf_zone_regions_find_freed(const struct jf_zone_regions *rs,
							 uint64_t addr);
/* Insert, first retiring every live region that overlaps it (runtimes that write plain
 * jitdump, like V8, reuse memory without saying so). Returns the new region or NULL. */
struct jf_zone_region *jf_zone_regions_insert(struct jf_zone_regions *rs,
					      const struct jf_zone_region *r);
/* Retire every live region overlapping [addr, addr + size); returns how many. */
size_t jf_zone_regions_retire(struct jf_zone_regions *rs, uint64_t addr, uint64_t size);
/* Take the live region starting at addr out of the table (NULL if none); the result is
 * copied into *out. */
int jf_zone_regions_take(struct jf_zone_regions *rs, uint64_t addr, struct jf_zone_region *out);
void jf_zone_regions_fini(struct jf_zone_regions *rs);

/* One zone file being applied. */
/* A CODE_LOAD of a stream, for reading its code before it applies (zone_early.c). */
struct jf_zone_load {
	uint64_t ordinal;            /* the record's place in the reader's (seq) order */
	uint64_t addr, size;
	const uint8_t *code;         /* in the survey reader's mapping */
};

/* An observed PATCH of a stream (JF_PATCH_OBSERVED), for whether it will change code. */
struct jf_zone_observed {
	uint64_t ordinal;            /* the record's place in the reader's order */
	uint64_t addr, size;
	const uint8_t *bytes;        /* in the survey reader's mapping */
};

/* The addresses a record that is not an observed PATCH changes (zone_pending.c). */
struct jf_zone_change {
	uint64_t ordinal;            /* the record's place in the reader's order */
	uint64_t from, to;           /* [from, to) */
	const uint8_t *bytes;        /* what a load or patch writes there (in the survey
				      * reader's mapping); NULL: it frees or moves code */
};

/* Every code change of every stream by address, for where code will still change
 * (zone_pending.c): built when first asked, again after a stream is added. */
struct jf_zone_pending_entry {
	uint64_t from, to, ordinal;
	size_t stream;
	size_t observed;             /* its index in the stream's observed, or SIZE_MAX */
	const uint8_t *bytes;        /* what it writes over [from, to), or NULL */
};

/* The ranges of one length class, sorted by start: a range that holds an address starts
 * at most longest bytes before it, so the classes keep the one freed region of 512 KiB from
 * widening the search among thousands of patches of a few bytes. */
struct jf_zone_pending_class {
	size_t first, n;             /* its entries: v[first, first + n) */
	uint64_t longest;            /* its longest range's bytes */
};

/* Range lengths up to 2^4, 2^8, 2^12, 2^16 bytes, and longer. */
enum { JF_ZONE_PENDING_CLASSES = 5 };

struct jf_zone_pending_index {
	struct jf_zone_pending_entry *v; /* by class, then by start */
	size_t n;
	struct jf_zone_pending_class cls[JF_ZONE_PENDING_CLASSES];
	size_t streams;              /* streams indexed (0: none yet) */
	int broken;                  /* out of memory: every range may change */
};

struct jf_zone_stream {
	struct jf_zone_reader *reader;
	struct jf_zone_reader *survey; /* kept open: the indexes point into its mapping */
	struct jf_zone_load *loads;
	size_t nloads, loads_cap;
	struct jf_zone_observed *observed;
	size_t nobserved, observed_cap;
	struct jf_zone_change *changes;
	size_t nchanges, changes_cap;
	uint64_t runtime_changes_end; /* ordinal + 1 of the last record that changes code and
				       * is not an observed patch or a CODE_MOVE (0: none)... */
	uint64_t moves_end;           /* ...and of the last CODE_MOVE */
	char *path;
	struct jf_zone_record next;  /* the first record not applied yet */
	int has_next;
	uint64_t marker_addr;        /* 0: no marker calls */
	uint64_t marker_ret;         /* address of the marker's return (0: not found yet) */
	uint64_t marker_ret_gen;     /* code map generation of the last search for it */
	int fresh;                   /* added after the trace began: its earlier records
	                              * apply at the next timed flow, markers or not */
	int ptwrite;                 /* records are announced by PTWRITE(seq) */
	int by_position;             /* timestamps are instruction positions of the record's
	                              * thread (JF_ZONE_MARKER_POSITION) */
	int has_ext;                 /* the file has jitflow records (perf's moves then
	                              * come with a REGION_MOVE, which does the work) */
	/* Records that change code bytes, in the whole file before any damage (the survey):
	 * perf's CODE_MOVEs count only without jitflow records (has_ext)... */
	uint64_t code_changes, code_moves;
	uint64_t code_changes_applied; /* ...and those applied so far */
	/* A damaged file (cut short, a bad record): the records before the damage apply,
	 * the damage is reported once as a decode error, nothing after it is read. */
	uint64_t whole_records, read_records;
	int damaged, damage_reported;
	uint64_t damage_offset;
	struct jf_error damage;
};

struct jf_zone_image {
	struct jf_codemap *map;
	struct jf_zone_image_config cfg;
	struct jf_zone_stream *streams;
	size_t nstreams;
	struct jf_zone_regions regions;
	struct jf_zone_image_stats stats;
	struct jf_zone_pending_index pending;
	/* Records taken from the streams (jf_zone_apply_next): a stream's next record moves
	 * only then (or when it is added), which lets the zone filter skip asking. */
	uint64_t nexts_taken;
};

enum jf_zone_how { JF_ZONE_BY_CALL, JF_ZONE_BY_PTWRITE, JF_ZONE_BY_TIME, JF_ZONE_BY_POSITION };

/* Apply the stream's next record and read the one after it. */
int jf_zone_apply_next(struct jf_zone_image *zi, struct jf_zone_stream *s, enum jf_zone_how how,
		       struct jf_error *err);

/* zone_image.c: whether applying rec changes code bytes (a CODE_MOVE only in a file without
 * jitflow records: s->has_ext, known once the file is surveyed). */
int jf_zone_changes_code(const struct jf_zone_stream *s, const struct jf_zone_record *rec);
/* zone_image.c: whether the code map holds bytes[0, size) at addr: 0 it does, 1 it holds
 * others, 2 some of them are not mapped. Only mapped code counts: an early read of a
 * pending record (zone_early.c) is no code the map holds. */
int jf_zone_bytes_difference(struct jf_codemap *map, uint64_t addr, const uint8_t *bytes,
			     uint64_t size);
/* ...and the same of the bytes as the map reads them, those an early fill serves too. */
int jf_zone_bytes_difference_as_read(struct jf_codemap *map, uint64_t addr,
				     const uint8_t *bytes, uint64_t size);

/* zone_settled.c: index the stream's record (its ordinal-th) for
 * jf_zone_image_code_settled. Returns 0, -1 out of memory. */
int jf_zone_settled_note(struct jf_zone_stream *s, const struct jf_zone_record *rec,
			 uint64_t ordinal);

/* zone_pending.c: index the stream's record (its ordinal-th) for where code will still
 * change. Returns 0, -1 out of memory. */
int jf_zone_pending_note(struct jf_zone_stream *s, const struct jf_zone_record *rec,
			 uint64_t ordinal);
/* The code map's jf_codemap_pending_fn: ctx is the zone image. */
int jf_zone_pending(void *ctx, uint64_t vaddr, uint64_t size);
void jf_zone_pending_fini(struct jf_zone_image *zi);

/* zone_early.c */
int jf_zone_early_note(struct jf_zone_stream *s, const struct jf_zone_record *rec,
		       uint64_t ordinal);
size_t jf_zone_early_fill(void *ctx, uint64_t vaddr, void *buf, size_t size);

#endif
