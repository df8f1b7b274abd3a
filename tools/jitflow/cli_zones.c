#include "cli_zones.h"

#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jitflow/perf_data.h"
#include "jitflow/zone.h"

struct jf_cli_zone_discovery {
	struct jf_perf_session_hooks inner;
	struct jf_zone_image *zones;
	char *perf_dir;
	char **seen;                  /* base names already handled */
	size_t nseen, found;
};

static int seen_before(struct jf_cli_zone_discovery *d, const char *base)
{
	char **v;
	size_t i;

	for (i = 0; i < d->nseen; i++)
		if (!strcmp(d->seen[i], base))
			return 1;
	v = realloc(d->seen, (d->nseen + 1) * sizeof(*v));
	if (!v)
		return 1;
	d->seen = v;
	d->seen[d->nseen] = strdup(base);
	if (d->seen[d->nseen])
		d->nseen++;
	return 0;
}

void jf_cli_zone_discovery_seen(struct jf_cli_zone_discovery *d, const char *base_name)
{
	seen_before(d, base_name);
}

static void on_record(void *ctx, const struct jf_perf_record *rec)
{
	struct jf_cli_zone_discovery *d = ctx;
	const char *name, *base;
	char next_to[4096];
	struct jf_error err = { "" };

	if (d->inner.on_record)
		d->inner.on_record(d->inner.ctx, rec);
	if (rec->type != JF_PERF_RECORD_MMAP && rec->type != JF_PERF_RECORD_MMAP2)
		return;
	name = rec->u.mmap.filename;
	base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	if (!jf_zone_is_file_name(base) || seen_before(d, base))
		return;
	snprintf(next_to, sizeof(next_to), "%s/%s", d->perf_dir, base);
	if (access(next_to, R_OK) == 0 && !jf_zone_image_add_file(d->zones, next_to, &err)) {
		d->found++;
		return;
	}
	if (!err.msg[0] && access(name, R_OK) == 0 &&
	    !jf_zone_image_add_file(d->zones, name, &err)) {
		d->found++;
		return;
	}
	/* Decoding goes on without it: its code then shows as unmapped, which is reported. */
	if (err.msg[0])
		fprintf(stderr, "jitflow: warning: zone file named at perf.data offset %" PRIu64
			": %s\n", rec->offset, err.msg);
	else
		fprintf(stderr, "jitflow: warning: zone file %s (perf.data offset %" PRIu64 ") "
			"not found next to the perf.data (%s) nor at its recorded path\n", base,
			rec->offset, d->perf_dir);
}

static struct jf_codemap *codemap_for_pid(void *ctx, int32_t pid)
{
	struct jf_cli_zone_discovery *d = ctx;

	return d->inner.codemap_for_pid(d->inner.ctx, pid);
}

/* No zone file has a code change left (the session checks its own sideband). */
static int code_settled(void *ctx)
{
	struct jf_cli_zone_discovery *d = ctx;

	if (d->inner.code_settled && !d->inner.code_settled(d->inner.ctx))
		return 0;
	return jf_zone_image_code_settled(d->zones);
}

struct jf_cli_zone_discovery *jf_cli_zone_discovery_new(const char *perf_path,
							struct jf_zone_image *zones,
							struct jf_perf_session_hooks *hooks)
{
	struct jf_cli_zone_discovery *d = calloc(1, sizeof(*d));
	char *copy = strdup(perf_path);

	if (!d || !copy) {
		free(d);
		free(copy);
		return NULL;
	}
	d->inner = *hooks;
	d->zones = zones;
	d->perf_dir = strdup(dirname(copy));
	free(copy);
	if (!d->perf_dir) {
		free(d);
		return NULL;
	}
	hooks->ctx = d;
	hooks->on_record = on_record;
	hooks->code_settled = code_settled;
	hooks->codemap_for_pid = d->inner.codemap_for_pid ? codemap_for_pid : NULL;
	return d;
}

size_t jf_cli_zone_discovery_found(const struct jf_cli_zone_discovery *d)
{
	return d ? d->found : 0;
}

void jf_cli_zone_discovery_free(struct jf_cli_zone_discovery *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nseen; i++)
		free(d->seen[i]);
	free(d->seen);
	free(d->perf_dir);
	free(d);
}
