/* perf sideband -> code maps: the default hooks of a perf.data session (perf_images.h).
 *
 * Each process keeps the list of mappings it loaded besides its code map, so that a child
 * created by FORK can start from a copy (a jf_codemap cannot be cloned, and the files are
 * shared through the kernel's page cache anyway). Code maps are never freed before the
 * images are: a decoder may still hold one. */
#include "jitflow/perf_images.h"
#include "jitflow/buildid_cache.h"
#include "jitflow/images.h"
#include "jitflow/perf_buildid.h"
#include "jitflow/zone.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct mapping {
	char *path;               /* the file actually loaded */
	char *name;               /* the recorded name (for listings) */
	uint64_t pgoff, size, addr;
};

struct proc {
	int32_t pid;
	struct jf_codemap *map;
	struct mapping *maps;
	size_t nmaps, cap_maps;
};

struct substitute {
	char *name, *file;
};

struct known_id {
	char *name;
	uint8_t id[JF_BUILD_ID_MAX];
	size_t size;
};

struct jf_perf_images {
	struct proc *procs;
	size_t nprocs, cap_procs;
	char **dirs;
	size_t ndirs;
	struct substitute *subs;
	size_t nsubs;
	struct known_id *ids;     /* build-ids by recorded name (HEADER_BUILD_ID) */
	size_t nids;
	char **caches;            /* build-id caches (--buildid-dir, unpacked archives) */
	size_t ncaches;
	char *symfs;              /* --symfs: recorded paths are under this folder */
	char **provided;          /* base names whose code comes from elsewhere */
	size_t nprovided;
	struct jf_perf_missing_image *missing;
	size_t nmissing, cap_missing;
	uint64_t loaded;
	struct proc shared;       /* with use_one_map: the one address space (map not owned) */
	int one_map;
};

struct jf_perf_images *jf_perf_images_new(void)
{
	return calloc(1, sizeof(struct jf_perf_images));
}

static void free_maps(struct proc *p)
{
	size_t i;

	for (i = 0; i < p->nmaps; i++) {
		free(p->maps[i].path);
		free(p->maps[i].name);
	}
	p->nmaps = 0;
}

void jf_perf_images_free(struct jf_perf_images *imgs)
{
	size_t i;

	if (!imgs)
		return;
	for (i = 0; i < imgs->nprocs; i++) {
		free_maps(&imgs->procs[i]);
		free(imgs->procs[i].maps);
		jf_codemap_free(imgs->procs[i].map);
	}
	for (i = 0; i < imgs->ndirs; i++)
		free(imgs->dirs[i]);
	for (i = 0; i < imgs->nsubs; i++) {
		free(imgs->subs[i].name);
		free(imgs->subs[i].file);
	}
	for (i = 0; i < imgs->nmissing; i++)
		free(imgs->missing[i].name);
	for (i = 0; i < imgs->nids; i++)
		free(imgs->ids[i].name);
	for (i = 0; i < imgs->ncaches; i++)
		free(imgs->caches[i]);
	free(imgs->ids);
	free(imgs->caches);
	free(imgs->symfs);
	free_maps(&imgs->shared);
	free(imgs->shared.maps);
	free(imgs->procs);
	free(imgs->dirs);
	free(imgs->subs);
	free(imgs->missing);
	for (i = 0; i < imgs->nprovided; i++)
		free(imgs->provided[i]);
	free(imgs->provided);
	free(imgs);
}

int jf_perf_images_add_dir(struct jf_perf_images *imgs, const char *dir, struct jf_error *err)
{
	char **d = realloc(imgs->dirs, (imgs->ndirs + 1) * sizeof(*d));

	if (!d)
		return jf_fail(err, "out of memory");
	imgs->dirs = d;
	d[imgs->ndirs] = strdup(dir);
	if (!d[imgs->ndirs])
		return jf_fail(err, "out of memory");
	imgs->ndirs++;
	return 0;
}

/* Append a copy of s to a string list. */
static int push_string(char ***list, size_t *n, const char *str, struct jf_error *err)
{
	char **v = realloc(*list, (*n + 1) * sizeof(*v));

	if (!v)
		return jf_fail(err, "out of memory");
	*list = v;
	v[*n] = strdup(str);
	if (!v[*n])
		return jf_fail(err, "out of memory");
	(*n)++;
	return 0;
}

int jf_perf_images_add_buildid_dir(struct jf_perf_images *imgs, const char *dir,
				   struct jf_error *err)
{
	return push_string(&imgs->caches, &imgs->ncaches, dir, err);
}

int jf_perf_images_set_symfs(struct jf_perf_images *imgs, const char *dir,
			     struct jf_error *err)
{
	free(imgs->symfs);
	imgs->symfs = strdup(dir);
	return imgs->symfs ? 0 : jf_fail(err, "out of memory");
}

int jf_perf_images_add_build_id(struct jf_perf_images *imgs, const char *name,
				const uint8_t *id, size_t size, struct jf_error *err)
{
	struct known_id *v = realloc(imgs->ids, (imgs->nids + 1) * sizeof(*v));

	if (!v)
		return jf_fail(err, "out of memory");
	imgs->ids = v;
	v += imgs->nids;
	memset(v, 0, sizeof(*v));
	v->size = size < JF_BUILD_ID_MAX ? size : JF_BUILD_ID_MAX;
	memcpy(v->id, id, v->size);
	v->name = strdup(name);
	if (!v->name)
		return jf_fail(err, "out of memory");
	imgs->nids++;
	return 0;
}

int jf_perf_images_add_file(struct jf_perf_images *imgs, const char *name, const char *file,
			    struct jf_error *err)
{
	struct substitute *s = realloc(imgs->subs, (imgs->nsubs + 1) * sizeof(*s));

	if (!s)
		return jf_fail(err, "out of memory");
	imgs->subs = s;
	s[imgs->nsubs].name = strdup(name);
	s[imgs->nsubs].file = strdup(file);
	if (!s[imgs->nsubs].name || !s[imgs->nsubs].file)
		return jf_fail(err, "out of memory");
	imgs->nsubs++;
	return 0;
}

void jf_perf_images_use_one_map(struct jf_perf_images *imgs, struct jf_codemap *map)
{
	imgs->shared.map = map;
	imgs->one_map = 1;
}

static struct proc *find_proc(struct jf_perf_images *imgs, int32_t pid)
{
	size_t i;

	if (imgs->one_map)
		return &imgs->shared;
	for (i = 0; i < imgs->nprocs; i++)
		if (imgs->procs[i].pid == pid)
			return &imgs->procs[i];
	return NULL;
}

static struct proc *get_proc(struct jf_perf_images *imgs, int32_t pid)
{
	struct proc *p = find_proc(imgs, pid);

	if (p)
		return p;
	if (imgs->nprocs == imgs->cap_procs) {
		size_t cap = imgs->cap_procs ? imgs->cap_procs * 2 : 8;
		struct proc *n = realloc(imgs->procs, cap * sizeof(*n));

		if (!n)
			return NULL;
		imgs->procs = n;
		imgs->cap_procs = cap;
	}
	p = &imgs->procs[imgs->nprocs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->map = jf_codemap_new();
	if (!p->map)
		return NULL;
	imgs->nprocs++;
	return p;
}

struct jf_codemap *jf_perf_images_codemap(struct jf_perf_images *imgs, int32_t pid)
{
	struct proc *p = get_proc(imgs, pid);

	return p ? p->map : NULL;
}

static void note_missing(struct jf_perf_images *imgs, const struct jf_perf_record *rec,
			 const struct known_id *id, const char *reason)
{
	struct jf_perf_missing_image *m;
	size_t i;

	for (i = 0; i < imgs->nmissing; i++) {
		if (!strcmp(imgs->missing[i].name, rec->u.mmap.filename)) {
			imgs->missing[i].count++;
			return;
		}
	}
	if (imgs->nmissing == imgs->cap_missing) {
		size_t cap = imgs->cap_missing ? imgs->cap_missing * 2 : 8;

		m = realloc(imgs->missing, cap * sizeof(*m));
		if (!m)
			return;
		imgs->missing = m;
		imgs->cap_missing = cap;
	}
	m = &imgs->missing[imgs->nmissing];
	memset(m, 0, sizeof(*m));
	m->name = strdup(rec->u.mmap.filename);
	if (!m->name)
		return;
	m->record_offset = rec->offset;
	m->pid = rec->u.mmap.pid;
	m->addr = rec->u.mmap.addr;
	m->len = rec->u.mmap.len;
	m->count = 1;
	if (id)
		jf_build_id_hex(id->id, id->size, m->build_id);
	snprintf(m->reason, sizeof(m->reason), "%s", reason);
	imgs->nmissing++;
}

static int regular_file(const char *path, uint64_t *size)
{
	struct stat st;

	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	*size = (uint64_t)st.st_size;
	return 1;
}

/* Whether a file found by name is the recorded one: a file with a build-id note that
 * differs is not (perf would not decode with it either); *why says so. */
static int id_matches(const char *path, const struct known_id *want, char *why, size_t cap)
{
	uint8_t have[JF_BUILD_ID_MAX];
	size_t size = 0;
	char a[41], b[41];

	if (!want || !jf_elf_build_id(path, have, &size) ||
	    jf_build_id_same(have, size, want->id, want->size))
		return 1;
	jf_build_id_hex(have, size, a);
	jf_build_id_hex(want->id, want->size, b);
	snprintf(why, cap, "build-id mismatch: %s has %s, the recording %s", path, a, b);
	return 0;
}

/* A candidate path: 1 if it is a regular file with the right build-id. */
static int candidate(const char *path, const struct known_id *id, uint64_t *size, char *why,
		     size_t cap)
{
	return regular_file(path, size) && id_matches(path, id, why, cap);
}

/* The file to load for a recorded name, in found (PATH_MAX-ish buffer), in perf's order:
 * the build-id caches, then the recorded path (under --symfs when given), then jitflow's
 * image directories. *why is set when a file was found but refused. */
static int resolve(const struct jf_perf_images *imgs, const char *name,
		   const struct known_id *id, char *found, size_t cap, uint64_t *size,
		   char *why, size_t why_cap)
{
	const char *base = strrchr(name, '/');
	char hex[41];
	size_t i;

	for (i = 0; i < imgs->nsubs; i++) {
		if (!strcmp(imgs->subs[i].name, name)) {
			snprintf(found, cap, "%s", imgs->subs[i].file);
			return regular_file(found, size);
		}
	}
	if (id) {
		jf_build_id_hex(id->id, id->size, hex);
		for (i = 0; i < imgs->ncaches; i++)
			if (jf_buildid_cache_find(imgs->caches[i], hex, name, found, cap) &&
			    regular_file(found, size))
				return 1;
	}
	/* Only absolute paths are files: [vdso], [kernel.kallsyms], //anon, [heap] are
	 * not. */
	if (name[0] != '/' || name[1] == '/')
		return 0;
	if (snprintf(found, cap, "%s%s", imgs->symfs ? imgs->symfs : "", name) < (int)cap &&
	    candidate(found, id, size, why, why_cap))
		return 1;
	for (i = 0; i < imgs->ndirs; i++) {
		if (snprintf(found, cap, "%s%s", imgs->dirs[i], name) < (int)cap &&
		    candidate(found, id, size, why, why_cap))
			return 1;
		if (base && snprintf(found, cap, "%s/%s", imgs->dirs[i], base + 1) < (int)cap &&
		    candidate(found, id, size, why, why_cap))
			return 1;
	}
	return 0;
}

/* The build-id of a mapping: its own (MMAP2 with a build-id) or the header's. */
static const struct known_id *id_for(const struct jf_perf_images *imgs,
				     const struct jf_perf_record *rec, struct known_id *own)
{
	size_t i;

	if (rec->type == JF_PERF_RECORD_MMAP2 && rec->u.mmap.build_id_size) {
		memset(own, 0, sizeof(*own));
		own->size = rec->u.mmap.build_id_size;
		memcpy(own->id, rec->u.mmap.build_id, own->size);
		return own;
	}
	for (i = 0; i < imgs->nids; i++)
		if (!strcmp(imgs->ids[i].name, rec->u.mmap.filename))
			return &imgs->ids[i];
	return NULL;
}

static int add_mapping(struct proc *p, const struct mapping *m, struct jf_error *err)
{
	struct mapping copy;

	if (jf_codemap_add_file(p->map, m->path, m->pgoff, m->size, m->addr, m->name, err) < 0)
		return -1;
	if (p->nmaps == p->cap_maps) {
		size_t cap = p->cap_maps ? p->cap_maps * 2 : 8;
		struct mapping *n = realloc(p->maps, cap * sizeof(*n));

		if (!n)
			return jf_fail(err, "out of memory");
		p->maps = n;
		p->cap_maps = cap;
	}
	copy = *m;
	copy.path = strdup(m->path);
	copy.name = strdup(m->name);
	if (!copy.path || !copy.name) {
		free(copy.path);
		free(copy.name);
		return jf_fail(err, "out of memory");
	}
	p->maps[p->nmaps++] = copy;
	return 0;
}

static int is_provided(const struct jf_perf_images *imgs, const char *name)
{
	const char *slash = strrchr(name, '/');
	size_t i;

	/* A runtime maps its zone file executable only so that perf learns of it: it is
	 * never executed, and the zone image places the code it describes. */
	if (jf_zone_is_file_name(slash ? slash + 1 : name))
		return 1;
	for (i = 0; i < imgs->nprovided; i++) {
		if (!strcmp(imgs->provided[i], slash ? slash + 1 : name))
			return 1;
	}
	return 0;
}

int jf_perf_images_provided(struct jf_perf_images *imgs, const char *base_name,
			    struct jf_error *err)
{
	char **v;

	if (is_provided(imgs, base_name))
		return 0;
	v = realloc(imgs->provided, (imgs->nprovided + 1) * sizeof(*v));
	if (!v)
		return jf_fail(err, "out of memory");
	imgs->provided = v;
	v[imgs->nprovided] = strdup(base_name);
	if (!v[imgs->nprovided])
		return jf_fail(err, "out of memory");
	imgs->nprovided++;
	return 0;
}

static void on_mmap(struct jf_perf_images *imgs, const struct jf_perf_record *rec)
{
	char path[4096], reason[300] = "";
	const char *name = rec->u.mmap.filename, *base;
	struct known_id own;
	const struct known_id *id = id_for(imgs, rec, &own);
	struct jf_error err;
	struct mapping m;
	uint64_t fsize;
	struct proc *p;

	if (!rec->u.mmap.exec || rec->u.mmap.len == 0 || is_provided(imgs, name))
		return;
	if (!resolve(imgs, name, id, path, sizeof(path), &fsize, reason, sizeof(reason))) {
		if (reason[0])
			note_missing(imgs, rec, id, reason);
		else if (!strncmp(name, "[kernel.kallsyms]", 17))
			note_missing(imgs, rec, id, "kernel code: give it with --kernel vmlinux");
		else if (name[0] != '/' || name[1] == '/')
			note_missing(imgs, rec, id,
				     id ? "not in the build-id caches (--buildid-dir, --archive)"
					: "no file for this mapping (anonymous or vdso); give one "
					  "to load its code");
		else if (imgs->ndirs || imgs->ncaches || imgs->symfs)
			note_missing(imgs, rec, id, "file not found (not in the build-id caches, "
					"--symfs or image directories)");
		else
			note_missing(imgs, rec, id, "file not found (use --symfs, --buildid-dir, "
					"--archive or --image-dir)");
		return;
	}
	if (rec->u.mmap.pgoff >= fsize) {
		snprintf(reason, sizeof(reason),
			 "mapped from offset %llu but the file has only %llu bytes",
			 (unsigned long long)rec->u.mmap.pgoff, (unsigned long long)fsize);
		note_missing(imgs, rec, id, reason);
		return;
	}
	p = get_proc(imgs, rec->u.mmap.pid);
	if (!p)
		return;
	base = strrchr(name, '/');
	m.path = path;
	m.name = (char *)(base ? base + 1 : name);
	m.pgoff = rec->u.mmap.pgoff;
	/* A mapping may run past the end of its file (the last page); only file bytes are
	 * code. */
	m.size = rec->u.mmap.len < fsize - m.pgoff ? rec->u.mmap.len : fsize - m.pgoff;
	m.addr = rec->u.mmap.addr;
	if (add_mapping(p, &m, &err) < 0) {
		note_missing(imgs, rec, id, err.msg);
		return;
	}
	imgs->loaded++;
}

static void on_fork(struct jf_perf_images *imgs, const struct jf_perf_record *rec)
{
	struct proc *parent, *child;
	struct jf_error err;
	size_t i;

	if (rec->u.fork.pid == rec->u.fork.ppid || imgs->one_map)
		return; /* a new thread shares its process's map */
	parent = find_proc(imgs, rec->u.fork.ppid);
	child = get_proc(imgs, rec->u.fork.pid);
	if (!parent || !child)
		return;
	parent = find_proc(imgs, rec->u.fork.ppid); /* get_proc may have moved it */
	for (i = 0; i < parent->nmaps; i++)
		add_mapping(child, &parent->maps[i], &err);
}

static void on_exec(struct jf_perf_images *imgs, const struct jf_perf_record *rec)
{
	struct proc *p = find_proc(imgs, rec->u.comm.pid);

	if (!p || imgs->one_map)
		return;
	/* The old address space is gone; the new program's MMAPs follow. The map object
	 * stays (a decoder may hold it); only its sections go. */
	jf_codemap_remove(p->map, 0, UINT64_MAX);
	free_maps(p);
}

static void on_record(void *ctx, const struct jf_perf_record *rec)
{
	struct jf_perf_images *imgs = ctx;

	switch (rec->type) {
	case JF_PERF_RECORD_MMAP:
	case JF_PERF_RECORD_MMAP2:
		on_mmap(imgs, rec);
		break;
	case JF_PERF_RECORD_FORK:
		on_fork(imgs, rec);
		break;
	case JF_PERF_RECORD_COMM:
		if (rec->u.comm.exec)
			on_exec(imgs, rec);
		break;
	default:
		break;
	}
}

static struct jf_codemap *codemap_for_pid(void *ctx, int32_t pid)
{
	return jf_perf_images_codemap(ctx, pid);
}

void jf_perf_images_hooks(struct jf_perf_images *imgs, struct jf_perf_session_hooks *hooks)
{
	hooks->ctx = imgs;
	hooks->codemap_for_pid = codemap_for_pid;
	hooks->on_record = on_record;
	hooks->code_settled = NULL; /* the sideband's maps: the session counts them */
}

uint64_t jf_perf_images_loaded(const struct jf_perf_images *imgs)
{
	return imgs->loaded;
}

size_t jf_perf_images_nmissing(const struct jf_perf_images *imgs)
{
	return imgs->nmissing;
}

const struct jf_perf_missing_image *jf_perf_images_missing(const struct jf_perf_images *imgs,
							   size_t i)
{
	return i < imgs->nmissing ? &imgs->missing[i] : NULL;
}

/* Whether mapping m of a file already gave its symbols at the same place (each segment of
 * a file is a mapping of its own, and forked processes share theirs). */
static int symbols_seen(const struct mapping **seen, size_t n, const struct mapping *m)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(seen[i]->path, m->path) && seen[i]->addr - seen[i]->pgoff == m->addr - m->pgoff)
			return 1;
	return 0;
}

int jf_perf_images_symbols(const struct jf_perf_images *imgs, struct jf_symtab *symtab)
{
	const struct mapping **seen = NULL;
	size_t nseen = 0, cap = 0, i, j;
	int files = 0;

	for (i = 0; i <= imgs->nprocs; i++) {
		const struct proc *p = i < imgs->nprocs ? &imgs->procs[i] : &imgs->shared;

		for (j = 0; j < p->nmaps; j++) {
			const struct mapping *m = &p->maps[j];
			struct jf_error err;

			if (symbols_seen(seen, nseen, m))
				continue;
			if (nseen == cap) {
				const struct mapping **more;

				cap = cap ? cap * 2 : 16;
				more = realloc(seen, cap * sizeof(*seen));
				if (!more) {
					free(seen);
					return -1;
				}
				seen = more;
			}
			seen[nseen++] = m;
			if (jf_load_elf_symbols(symtab, m->path, m->pgoff, m->addr, &err) == 0)
				files++;
		}
	}
	free(seen);
	return files;
}
