/* A decoder over a whole snapshot folder: snapshot.ini -> device .ini files (sources and
 * their registers, cores and their memory dumps) -> trace.ini (buffers, which source
 * writes to which buffer, which core each source traces). */
#include "cs_snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jitflow/mapped_file.h"

struct snapshot {
	struct jf_ini *devices;    /* device .ini files, in [device_list] order */
	struct jf_cs_device *dev;
	size_t ndevices;
	struct jf_ini trace;
	struct jf_cs_trace_layout layout;
};

/* What the decoder must keep: the mapped buffer files. */
struct snapshot_decoder {
	struct jf_decoder *inner;
	struct jf_mapped_file *files;
	size_t nfiles;
	/* Formatted buffers come in 16-byte frames: a file cut inside its last frame is
	 * decoded up to there, and the partial frame reported once the trace is done. */
	uint64_t *cut_tail;          /* per file: bytes of a partial last frame (0: none) */
	size_t next_cut;
};

static int path_in(char *out, size_t size, const char *dir, const char *file,
		   struct jf_error *err)
{
	int n = file[0] == '/' ? snprintf(out, size, "%s", file)
			       : snprintf(out, size, "%s/%s", dir, file);

	if (n < 0 || (size_t)n >= size)
		return jf_fail(err, "%s/%s: path too long", dir, file);
	return 0;
}

static void snapshot_free(struct snapshot *s)
{
	size_t i;

	for (i = 0; i < s->ndevices; i++)
		jf_ini_free(&s->devices[i]);
	free(s->devices);
	free(s->dev);
	jf_cs_trace_free(&s->layout);
	jf_ini_free(&s->trace);
}

static const struct jf_cs_device *device_named(const struct snapshot *s, const char *name,
					       const struct jf_ini **ini)
{
	size_t i;

	for (i = 0; i < s->ndevices; i++) {
		if (strcmp(s->dev[i].name, name) == 0) {
			if (ini)
				*ini = &s->devices[i];
			return &s->dev[i];
		}
	}
	return NULL;
}

static int read_snapshot(struct snapshot *s, const char *dir, struct jf_codemap *map,
			 struct jf_error *err)
{
	struct jf_ini top;
	char path[4096];
	const char *meta;
	size_t i, n = 0;

	memset(s, 0, sizeof(*s));
	if (path_in(path, sizeof(path), dir, "snapshot.ini", err) < 0 ||
	    jf_ini_load(&top, path, err) < 0)
		return -1;
	if (!jf_ini_has_section(&top, "device_list")) {
		jf_fail(err, "%s: no [device_list] section; expected deviceN=FILE.ini lines",
			top.name);
		goto fail_top;
	}
	for (i = 0; i < top.count; i++)
		if (top.entries[i].key && strcasecmp(top.entries[i].section, "device_list") == 0)
			n++;
	s->devices = calloc(n ? n : 1, sizeof(*s->devices));
	s->dev = calloc(n ? n : 1, sizeof(*s->dev));
	if (!s->devices || !s->dev) {
		jf_fail(err, "out of memory");
		goto fail_top;
	}
	for (i = 0; i < top.count; i++) {
		const struct jf_ini_entry *e = &top.entries[i];
		struct jf_ini *ini = &s->devices[s->ndevices];

		if (!e->key || strcasecmp(e->section, "device_list") != 0)
			continue;
		if (!*e->value) {
			jf_fail(err, "%s:%u: %s= names no device file", top.name, e->line, e->key);
			goto fail_top;
		}
		if (path_in(path, sizeof(path), dir, e->value, err) < 0 ||
		    jf_ini_load(ini, path, err) < 0) {
			jf_fail_prefix(err, "%s:%u: %s: ", top.name, e->line, e->key);
			goto fail_top;
		}
		s->ndevices++;
		if (jf_cs_device_parse(ini, &s->dev[s->ndevices - 1], err) < 0)
			goto fail_top;
		/* Memory dumps of every device, in list order: later dumps win overlaps. */
		if (jf_cs_dumps_load(ini, dir, map, err) < 0)
			goto fail_top;
	}
	meta = jf_ini_find(&top, "trace", "metadata") ? jf_ini_find(&top, "trace", "metadata")->value
						      : NULL;
	if (!meta || !*meta) {
		jf_fail(err, "%s: [trace] has no metadata=; expected the trace .ini file name",
			top.name);
		goto fail_top;
	}
	if (path_in(path, sizeof(path), dir, meta, err) < 0 ||
	    jf_ini_load(&s->trace, path, err) < 0)
		goto fail_top;
	if (jf_cs_trace_parse(&s->trace, &s->layout, err) < 0)
		goto fail_top;
	jf_ini_free(&top);
	return 0;
fail_top:
	jf_ini_free(&top);
	snapshot_free(s);
	return -1;
}

/* The core a source traces, from [core_trace_sources] (core=source). */
static void set_core(const struct snapshot *s, struct jf_cs_source *src)
{
	const struct jf_ini *t = &s->trace;
	size_t i;

	for (i = 0; i < t->count; i++) {
		const struct jf_ini_entry *e = &t->entries[i];
		const struct jf_cs_device *core;

		if (!e->key || strcasecmp(e->section, "core_trace_sources") != 0 ||
		    strcmp(e->value, src->name) != 0)
			continue;
		core = device_named(s, e->key, NULL);
		if (!core)
			continue;
		snprintf(src->core, sizeof(src->core), "%s", core->type);
		if (jf_cs_core_arch(core->type, &src->arch, &src->profile) < 0)
			src->arch = src->profile = 0;
		return;
	}
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct jf_cs_source *)a)->name,
		      ((const struct jf_cs_source *)b)->name);
}

/* The sources writing into buffer b ([source_buffers] source=buffer name), sorted by
 * name as OpenCSD's snapshot reader orders them. */
static int sources_of(const struct snapshot *s, const struct jf_cs_trace_buffer *b,
		      struct jf_cs_source **out, size_t *count, struct jf_error *err)
{
	const struct jf_ini *t = &s->trace;
	struct jf_cs_source *src;
	size_t i, n = 0;

	*out = NULL;
	*count = 0;
	src = calloc(t->count ? t->count : 1, sizeof(*src));
	if (!src)
		return jf_fail(err, "out of memory");
	for (i = 0; i < t->count; i++) {
		const struct jf_ini_entry *e = &t->entries[i];
		const struct jf_cs_device *dev;
		const struct jf_ini *ini;

		if (!e->key || strcasecmp(e->section, "source_buffers") != 0 ||
		    strcmp(e->value, b->name) != 0)
			continue;
		dev = device_named(s, e->key, &ini);
		if (!dev) {
			free(src);
			return jf_fail(err, "%s:%u: trace source '%s' is not a device of the "
				       "snapshot; expected it in snapshot.ini's [device_list]",
				       t->name, e->line, e->key);
		}
		if (jf_cs_source_parse(ini, dev, &src[n], err) < 0) {
			free(src);
			return -1;
		}
		set_core(s, &src[n]);
		n++;
	}
	qsort(src, n, sizeof(*src), by_name);
	*out = src;
	*count = n;
	return 0;
}

static int snap_next(void *self, struct jf_flow *flow, struct jf_error *err)
{
	struct snapshot_decoder *sd = self;
	int rc = jf_decoder_next(sd->inner, flow, err);

	if (rc != 0)
		return rc;
	for (; sd->next_cut < sd->nfiles; sd->next_cut++) {
		uint64_t tail = sd->cut_tail[sd->next_cut];

		if (!tail)
			continue;
		memset(flow, 0, sizeof(*flow));
		flow->kind = JF_FLOW_LOST;
		flow->flags = JF_FLOW_IP_SUPPRESSED;
		flow->offset = sd->files[sd->next_cut].size - tail;
		flow->u.lost.bytes = tail;
		flow->u.lost.reason = JF_LOST_FILE_CUT;
		sd->next_cut++;
		return 1;
	}
	return 0;
}

static void snap_free(void *self)
{
	struct snapshot_decoder *sd = self;
	size_t i;

	jf_decoder_free(sd->inner);
	for (i = 0; i < sd->nfiles; i++)
		jf_unmap_file(&sd->files[i]);
	free(sd->files);
	free(sd->cut_tail);
	free(sd);
}

static const struct jf_decoder_ops snap_ops = { snap_next, snap_free };

struct jf_decoder *jf_cs_snapshot_decoder_new(const char *dir, struct jf_codemap *map,
					      struct jf_error *err)
{
	return jf_cs_snapshot_decoder_open(dir, map, JF_CS_SNAPSHOT_LOOKAHEAD, err);
}

struct jf_decoder *jf_cs_snapshot_decoder_open(const char *dir, struct jf_codemap *map,
					       unsigned lookahead, struct jf_error *err)
{
	struct snapshot s;
	struct snapshot_decoder *sd;
	struct jf_cs_buffer *buffers = NULL;
	struct jf_cs_config cfg;
	struct jf_decoder *dec = NULL;
	uint64_t bytes = 0;
	size_t i;

	if (read_snapshot(&s, dir, map, err) < 0)
		return NULL;
	sd = calloc(1, sizeof(*sd));
	buffers = calloc(s.layout.nbuffers, sizeof(*buffers));
	if (sd) {
		sd->files = calloc(s.layout.nbuffers, sizeof(*sd->files));
		sd->cut_tail = calloc(s.layout.nbuffers, sizeof(*sd->cut_tail));
	}
	if (!sd || !buffers || !sd->files || !sd->cut_tail) {
		jf_fail(err, "out of memory");
		goto out;
	}
	for (i = 0; i < s.layout.nbuffers; i++) {
		const struct jf_cs_trace_buffer *tb = &s.layout.buffers[i];
		struct jf_cs_source *src;
		size_t nsrc;
		char path[4096];

		if (path_in(path, sizeof(path), dir, tb->file, err) < 0 ||
		    jf_map_file(&sd->files[i], path, err) < 0) {
			jf_fail_prefix(err, "%s: [%s] file=: ", s.trace.name, tb->id);
			goto out;
		}
		sd->nfiles++;
		jf_mapped_file_sequential(&sd->files[i]);
		if (sources_of(&s, tb, &src, &nsrc, err) < 0)
			goto out;
		buffers[i].name = tb->name;
		buffers[i].data = sd->files[i].data;
		buffers[i].size = sd->files[i].size;
		if (tb->formatted) {
			sd->cut_tail[i] = buffers[i].size % 16;
			buffers[i].size -= sd->cut_tail[i];
		}
		buffers[i].formatted = tb->formatted;
		buffers[i].frames = tb->frames;
		buffers[i].release_consumed = 1;
		buffers[i].sources = src;
		buffers[i].nsources = nsrc;
		bytes += sd->files[i].size;
		if (!nsrc) {
			jf_fail(err, "%s: no trace source writes to buffer '%s'; expected "
				"SOURCE=%s lines in [source_buffers]", s.trace.name, tb->name,
				tb->name);
			goto out;
		}
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.buffers = buffers;
	cfg.nbuffers = s.layout.nbuffers;
	cfg.lookahead = lookahead;
	sd->inner = jf_cs_decoder_new(&cfg, map, err);
	if (!sd->inner)
		goto out;
	dec = jf_decoder_new(&snap_ops, sd);
	sd = NULL; /* owned by dec now, even if that failed */
	if (!dec)
		jf_fail(err, "out of memory");
	else
		jf_decoder_stats_mut(dec)->trace_bytes = bytes;
out:
	if (buffers) {
		for (i = 0; i < s.layout.nbuffers; i++)
			free((void *)buffers[i].sources);
		free(buffers);
	}
	if (sd)
		snap_free(sd);
	snapshot_free(&s);
	return dec;
}
