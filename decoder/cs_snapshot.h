/* The parts of a CoreSight snapshot folder, read from its .ini files (cs_snapshot.c).
 * Kept separate from the file system so the fuzz target can feed .ini text directly. */
#ifndef JITFLOW_CS_SNAPSHOT_H
#define JITFLOW_CS_SNAPSHOT_H

#include "cs_ini.h"
#include "jitflow/coresight.h"

/* [device] name/class/type of a device .ini (pointers into the ini). */
struct jf_cs_device {
	const char *name, *cls, *type;
	unsigned line;       /* of name=, for messages */
};

int jf_cs_device_parse(const struct jf_ini *ini, struct jf_cs_device *dev,
		       struct jf_error *err);

/* Fill src (protocol, registers) from a trace source's device .ini. The core fields are
 * left to the caller. */
int jf_cs_source_parse(const struct jf_ini *ini, const struct jf_cs_device *dev,
		       struct jf_cs_source *src, struct jf_error *err);

/* trace.ini: the buffers in the order listed, and which sources go where. */
struct jf_cs_trace_buffer {
	const char *id;      /* section name, e.g. "buffer0" */
	const char *name;    /* name=, what [source_buffers] refers to */
	const char *file;
	int formatted, frames;
};

struct jf_cs_trace_layout {
	struct jf_cs_trace_buffer *buffers;
	size_t nbuffers;
	char *list;          /* owns the split buffers= list */
};

int jf_cs_trace_parse(const struct jf_ini *ini, struct jf_cs_trace_layout *layout,
		      struct jf_error *err);
void jf_cs_trace_free(struct jf_cs_trace_layout *layout);

/* Memory dumps of a device .ini ([dump...] sections): calls add for each one with the
 * file named relative to dir; length defaults to the rest of the file. */
int jf_cs_dumps_load(const struct jf_ini *ini, const char *dir, struct jf_codemap *map,
		     struct jf_error *err);

#endif
