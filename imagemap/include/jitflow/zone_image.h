/* The JIT code zone over time: zone files (jitdump + jitflow records) applied to a code
 * map at the point of the trace where each change happened.
 *
 * It sits as a filter between a decoder and its consumer:
 *
 *     zi = jf_zone_image_new(map, NULL, &err);
 *     jf_zone_image_add_file(zi, "jit-1234.dump", &err);
 *     dec = jf_zone_filter_new(jf_pt_decoder_new(&cfg, map, &err), zi, &err);
 *     while (jf_decoder_next(dec, &f, &err) > 0) ...
 *
 * After handing on each flow record (at the start of the next pull, so the consumer still
 * sees the image the record was decoded with, and before the decoder decodes on), the
 * filter applies the zone records that became true at that point: exactly at their
 * markers when the file has them (a block starting at
 * jf_emitter_marker's address: the PT decoder must end blocks at direct calls,
 * jf_pt_config.end_on_call; or a PTWRITE flow whose payload is the record's sequence
 * number), otherwise by timestamp (records up to the flow's time; the records written
 * before the trace began apply at its first timed flow, markers or not). The decoder re-reads
 * the code map before it decodes the next block and nothing is decoded ahead, so code
 * loaded at an address decodes with the new bytes from that point on and with the old
 * bytes before it.
 *
 * Loads map the code bytes straight from the zone file (a file section: libipt caches its
 * decoded blocks); patched bytes get an in-memory file of their own. Decode errors inside
 * JIT code (no code where the trace goes, a conditional branch the image does not have)
 * become JF_PHASE_IMAGE errors that name the region and its version; the decoder
 * resynchronises as after any error. Nothing is guessed. */
#ifndef JITFLOW_ZONE_IMAGE_H
#define JITFLOW_ZONE_IMAGE_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stdint.h>

#include "jitflow/codemap.h"
#include "jitflow/decoder.h"
#include "jitflow/error.h"
#include "jitflow/zone.h"

#ifdef __cplusplus
extern "C" {
#endif

struct jf_zone_image;

enum jf_zone_apply {
	JF_ZONE_APPLY_AUTO = 0,   /* markers where the file has them, else timestamps */
	JF_ZONE_APPLY_TIME,       /* timestamps only, even if markers are present */
};

struct jf_zone_image_config {
	enum jf_zone_apply apply;
	jf_zone_time_fn time_fn;  /* zone timestamp -> the trace's flow time (NULL: same) */
	void *time_ctx;
	/* Called with every record as it is applied, in trace order, between the flow
	 * record it follows and the next one: how the analysis learns what code is where
	 * (guards, pc maps, iteration marks) at exactly the point it became true. */
	int (*on_apply)(void *ctx, const struct jf_zone_reader *reader,
			const struct jf_zone_record *rec);
	void *apply_ctx;
};

struct jf_zone_image_stats {
	uint64_t applied;          /* records applied to the image */
	uint64_t by_marker_call;   /* ... at a marker call */
	uint64_t by_ptwrite;       /* ... at a PTWRITE */
	uint64_t by_time;          /* ... by timestamp */
	uint64_t by_position;      /* ... at an instruction position of its thread */
	uint64_t late_in_block;    /* ... after a block that ran past its position (the
	                            * block was decoded with the code before the record) */
	uint64_t loads, frees, moves, patches;
	/* PATCH records of bytes a recorder saw run (JF_PATCH_OBSERVED): */
	uint64_t observed_same;     /* ... the image already held: no change, not applied */
	uint64_t observed_changed;  /* ... that replaced other bytes (counted in patches) */
	uint64_t observed_unmapped; /* ... where no code was mapped yet: code that ran before
	                             * a record described it (counted in patches) */
	uint64_t mismatches;       /* decode errors turned into JF_PHASE_IMAGE errors */
	uint64_t unmatched_markers; /* marker calls with no record left to apply */
	uint64_t early_code;       /* reads of code whose record had not applied yet (the
	                            * runtime wrote it after the code ran; see zone_early.c) */
	uint64_t damaged_files;    /* zone files read up to damage (each one a decode error) */
	uint64_t files;            /* zone files added */
	uint64_t ext_files;        /* ... of which hold jitflow's extension records */
};

/* map must outlive the image. config may be NULL (AUTO, no time conversion). The image
 * gives map the bytes of code a record still to apply will load where no section holds
 * them (jf_codemap_set_fill), and tells it where the records still to apply may change
 * code (jf_codemap_set_pending: zone_pending.c; files added later widen that). */
struct jf_zone_image *jf_zone_image_new(struct jf_codemap *map,
					const struct jf_zone_image_config *config,
					struct jf_error *err);
void jf_zone_image_free(struct jf_zone_image *zi);

/* Add a zone file. It is read through once here, then applied lazily as the trace
 * advances. Repeatable. A file whose header is unreadable fails now; one damaged later
 * (cut short, a malformed record) keeps the records before the damage, and the filter
 * reports the damage as a JF_PHASE_CONTAINER error at the damaged record's offset. */
int jf_zone_image_add_file(struct jf_zone_image *zi, const char *path, struct jf_error *err);

/* Whether the zone files change no code bytes from here on, so that a decoder may read
 * ahead of the flow (perf sessions decode such stretches with the fast path): every record
 * that changes code (a load, move, free or patch) of every file added has been applied,
 * but for patches a recorder observed (JF_PATCH_OBSERVED) of the bytes the image holds
 * already, which change nothing when they apply (zone_settled.c). Files added later may
 * change that. */
int jf_zone_image_code_settled(const struct jf_zone_image *zi);

/* Apply everything that is still pending (e.g. to list the final image). */
int jf_zone_image_apply_all(struct jf_zone_image *zi, struct jf_error *err);

/* The live JIT region holding addr: its name, version (1 when loaded, +1 per patch) and
 * start; NULL if addr is not in JIT code now. */
const char *jf_zone_image_lookup(const struct jf_zone_image *zi, uint64_t addr,
				 uint64_t *start, uint32_t *version);

const struct jf_zone_image_stats *jf_zone_image_stats(const struct jf_zone_image *zi);
/* The damage found in the file-th zone file added (its full message), or NULL. */
const char *jf_zone_image_damage(const struct jf_zone_image *zi, size_t file);

/* Set (or replace) the config's on_apply hook after creation. */
void jf_zone_image_on_apply(struct jf_zone_image *zi,
			    int (*on_apply)(void *ctx, const struct jf_zone_reader *reader,
					    const struct jf_zone_record *rec),
			    void *ctx);

/* The filter: a decoder that pulls from inner (taking ownership of it) and applies zone
 * records as described above. zi is not owned and must outlive the filter. */
struct jf_decoder *jf_zone_filter_new(struct jf_decoder *inner, struct jf_zone_image *zi,
				      struct jf_error *err);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
