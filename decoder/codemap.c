/* The code map: non-overlapping file-backed sections sorted by address.
 *
 * Adding a section cuts away whatever older sections it covers (newest wins, as libipt's
 * image does), so lookups are a binary search. libipt sees the same sections through an
 * image section cache (which owns libipt's per-section block caches) and one pt_image kept
 * equal to the list: a change replaces only the sections it touched there. libipt's image
 * looks through all its sections for overlaps on every add, so building it anew for each
 * of a JIT's thousands of changes cost O(sections^2) each; and it removes sections only by
 * file name, so each section goes to libipt under a name of its own (image_path). The
 * image reuses the cached sections, so libipt's block caches survive code-map updates. */
#include "jitflow/codemap.h"
#include "codemap_pt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jitflow/mapped_file.h"

/* A file the map reads from, mapped once however many sections use it. */
struct backing {
	struct jf_mapped_file file;
	/* The file open: for in-memory copies from the start (it keeps /proc/self/fd/N
	 * valid), for files once a section's image_path needs it (-1 until then). */
	int fd;
	unsigned refs;
	/* The map's list of backings, most recently asked for first: a JIT's many code copies
	 * (one per patch) come and go beside its one jitdump, looked up for each code load. */
	struct backing *next, *prev;
};

struct section {
	uint64_t vaddr, size;
	uint64_t offset;      /* in the backing file */
	struct backing *backing;
	char *name;
	int isid;             /* libipt section id (0 until first needed) */
	char *image_path;     /* the name libipt knows it by, with isid (NULL without) */
	int in_image;         /* the map's pt_image holds it */
};

/* The ranges the last CHANGE_LOG generations changed, so that a cache of decoded code can
 * keep what lies elsewhere (jf_codemap_unchanged_since). A JIT changes its code thousands
 * of times, each change a few hundred bytes among megabytes of code that stays. */
enum { CHANGE_LOG = 256 };

struct change {
	uint64_t generation;  /* the generation this change made */
	uint64_t from, to;    /* [from, to): the addresses whose bytes it may have changed */
};

struct jf_codemap {
	struct section *sec;
	size_t count, cap;
	struct backing *backings;
	uint64_t generation;
	struct change changes[CHANGE_LOG]; /* the change that made generation g at g % CHANGE_LOG */
	struct pt_image_section_cache *iscache;
	size_t iscache_added; /* sections added to iscache since it was made */
	uint64_t iscache_limit; /* bytes of sections it keeps mapped (libipt's LRU) */
	struct pt_image *image;
	uint64_t image_generation;
	/* Names of sections that left the list or changed but are still in the image. */
	char **stale;
	size_t nstale, stale_cap;
	int image_broken;     /* an update failed half way: build the image anew */
	uint64_t image_paths; /* names made so far (each section's is new) */
	size_t last_hit;      /* lookups are very local: try the last hit first */
	uint64_t copies;      /* in-memory copies made so far (each gets a path of its own) */
	jf_codemap_fill_fn fill;
	void *fill_ctx;
	jf_codemap_pending_fn pending;
	void *pending_ctx;
	/* The exec mode libipt's block cache in iscache's sections holds entries of (unknown:
	 * none yet); jf_codemap_pt_cache_fits keeps it to one. */
	enum pt_exec_mode cached_mode;
};

struct jf_codemap *jf_codemap_new(void)
{
	struct jf_codemap *map = calloc(1, sizeof(*map));

	if (!map)
		return NULL;
	map->iscache = pt_iscache_alloc("jitflow");
	if (!map->iscache) {
		free(map);
		return NULL;
	}
	map->generation = 1;
	return map;
}

static void backing_unlink(struct jf_codemap *map, struct backing *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		map->backings = b->next;
	if (b->next)
		b->next->prev = b->prev;
	b->next = b->prev = NULL;
}

static void backing_push(struct jf_codemap *map, struct backing *b)
{
	b->prev = NULL;
	b->next = map->backings;
	if (b->next)
		b->next->prev = b;
	map->backings = b;
}

static void backing_put(struct jf_codemap *map, struct backing *b)
{
	if (--b->refs)
		return;
	backing_unlink(map, b);
	jf_unmap_file(&b->file);
	if (b->fd >= 0)
		close(b->fd);
	free(b);
}

void jf_codemap_free(struct jf_codemap *map)
{
	size_t i;

	if (!map)
		return;
	for (i = 0; i < map->count; i++) {
		free(map->sec[i].name);
		free(map->sec[i].image_path);
		backing_put(map, map->sec[i].backing);
	}
	free(map->sec);
	for (i = 0; i < map->nstale; i++)
		free(map->stale[i]);
	free(map->stale);
	if (map->image)
		pt_image_free(map->image);
	pt_iscache_free(map->iscache);
	free(map);
}

/* A backing of its own for path, which no other backing maps. */
static struct backing *backing_new(struct jf_codemap *map, const char *path,
				   struct jf_error *err)
{
	struct backing *b = calloc(1, sizeof(*b));

	if (!b) {
		jf_fail(err, "%s: out of memory", path);
		return NULL;
	}
	if (jf_map_file(&b->file, path, err) < 0) {
		free(b);
		return NULL;
	}
	b->fd = -1;
	b->refs = 1;
	backing_push(map, b);
	return b;
}

/* The backing that maps path, shared (made if none does). */
static struct backing *backing_get(struct jf_codemap *map, const char *path,
				   struct jf_error *err)
{
	struct backing *b;

	for (b = map->backings; b; b = b->next) {
		if (strcmp(b->file.path, path) == 0) {
			b->refs++;
			if (b != map->backings) {
				backing_unlink(map, b);
				backing_push(map, b);
			}
			return b;
		}
	}
	return backing_new(map, path, err);
}

static int reserve(struct jf_codemap *map, size_t extra)
{
	size_t cap;
	struct section *sec;

	if (map->count + extra <= map->cap)
		return 0;
	cap = map->cap ? map->cap * 2 : 16;
	while (cap < map->count + extra)
		cap *= 2;
	sec = realloc(map->sec, cap * sizeof(*sec));
	if (!sec)
		return -1;
	map->sec = sec;
	map->cap = cap;
	return 0;
}

/* Index of the first section whose end is above vaddr. */
static size_t first_ending_after(const struct jf_codemap *map, uint64_t vaddr)
{
	size_t lo = 0, hi = map->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (map->sec[mid].vaddr + map->sec[mid].size <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* s changes or goes: libipt's section for it no longer serves, and the image's must go. */
static void forget_pt_section(struct jf_codemap *map, struct section *s)
{
	if (s->in_image && map->image) {
		if (map->nstale == map->stale_cap) {
			size_t cap = map->stale_cap ? map->stale_cap * 2 : 16;
			char **stale = realloc(map->stale, cap * sizeof(*stale));

			if (!stale) {
				map->image_broken = 1;
				goto drop;
			}
			map->stale = stale;
			map->stale_cap = cap;
		}
		map->stale[map->nstale++] = s->image_path;
		s->image_path = NULL;
	}
drop:
	free(s->image_path);
	s->image_path = NULL;
	s->isid = 0;
	s->in_image = 0;
}

static void drop_section(struct jf_codemap *map, size_t i)
{
	forget_pt_section(map, &map->sec[i]);
	free(map->sec[i].name);
	backing_put(map, map->sec[i].backing);
	memmove(&map->sec[i], &map->sec[i + 1], (map->count - i - 1) * sizeof(map->sec[0]));
	map->count--;
}

/* Remove [vaddr, vaddr + size) from the map, cutting sections that straddle its edges. */
static int cut(struct jf_codemap *map, uint64_t vaddr, uint64_t size)
{
	uint64_t end = vaddr + size;
	size_t i = first_ending_after(map, vaddr);
	int touched = 0;

	while (i < map->count && map->sec[i].vaddr < end) {
		struct section *s = &map->sec[i];
		uint64_t s_end = s->vaddr + s->size;

		touched++;
		if (s->vaddr < vaddr && s_end > end) {
			/* The hole is inside s: split s in two. */
			struct section tail;

			if (reserve(map, 1) < 0)
				return -1;
			s = &map->sec[i];
			forget_pt_section(map, s);
			tail = *s;
			tail.name = strdup(s->name);
			if (!tail.name)
				return -1;
			tail.backing->refs++;
			tail.offset += end - s->vaddr;
			tail.vaddr = end;
			tail.size = s_end - end;
			s->size = vaddr - s->vaddr;
			memmove(&map->sec[i + 2], &map->sec[i + 1],
				(map->count - i - 1) * sizeof(map->sec[0]));
			map->sec[i + 1] = tail;
			map->count++;
			return touched;
		}
		if (s->vaddr < vaddr) {
			forget_pt_section(map, s);
			s->size = vaddr - s->vaddr;
			i++;
		} else if (s_end > end) {
			forget_pt_section(map, s);
			s->offset += end - s->vaddr;
			s->size = s_end - end;
			s->vaddr = end;
			i++;
		} else {
			drop_section(map, i);
		}
	}
	return touched;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* A new generation, made by a change of the bytes at [vaddr, vaddr + size). */
static void note_change(struct jf_codemap *map, uint64_t vaddr, uint64_t size)
{
	struct change *c = &map->changes[++map->generation % CHANGE_LOG];

	c->generation = map->generation;
	c->from = vaddr;
	c->to = vaddr + size < vaddr ? UINT64_MAX : vaddr + size;
}

static int insert(struct jf_codemap *map, struct backing *b, uint64_t offset, uint64_t size,
		  uint64_t vaddr, const char *name, struct jf_error *err)
{
	struct section s;
	size_t i;

	if (cut(map, vaddr, size) < 0 || reserve(map, 1) < 0)
		return jf_fail(err, "out of memory");
	memset(&s, 0, sizeof(s));
	s.vaddr = vaddr;
	s.size = size;
	s.offset = offset;
	s.backing = b;
	s.name = strdup(name);
	if (!s.name)
		return jf_fail(err, "out of memory");
	i = first_ending_after(map, vaddr);
	memmove(&map->sec[i + 1], &map->sec[i], (map->count - i) * sizeof(map->sec[0]));
	map->sec[i] = s;
	map->count++;
	note_change(map, vaddr, size);
	return 0;
}

int jf_codemap_add_file(struct jf_codemap *map, const char *path, uint64_t offset,
			uint64_t size, uint64_t vaddr, const char *name, struct jf_error *err)
{
	struct backing *b;

	if (size == 0)
		return jf_fail(err, "%s: empty section at 0x%llx", path, (unsigned long long)vaddr);
	if (vaddr + size < vaddr)
		return jf_fail(err, "%s: section at 0x%llx of %llu bytes wraps the address space",
			       path, (unsigned long long)vaddr, (unsigned long long)size);
	b = backing_get(map, path, err);
	if (!b)
		return -1;
	if (offset > b->file.size || size > b->file.size - offset) {
		unsigned long long fsize = b->file.size;

		backing_put(map, b);
		return jf_fail(err,
			       "%s: section [0x%llx, 0x%llx) is beyond the end of the file (%llu bytes)",
			       path, (unsigned long long)offset,
			       (unsigned long long)(offset + size), fsize);
	}
	if (insert(map, b, offset, size, vaddr, name ? name : base_name(path), err) < 0) {
		backing_put(map, b);
		return -1;
	}
	return 0;
}

/* A path that opens fd and that no earlier copy used. libipt's section cache reuses a
 * section with the same file name, offset, size and address, and fd numbers are reused
 * once a copy is freed: a patch at an address patched before (a JIT that flushed and
 * compiled anew at the same addresses) would decode with the old bytes. So each copy's
 * path spells its serial number in binary between /proc/self/ and fd/N, a bit as "./"
 * (0) or "fd/../" (1): the same directory, a different name. */
static void unique_fd_path(char *path, size_t size, uint64_t serial, int fd)
{
	size_t n = (size_t)snprintf(path, size, "/proc/self/");

	for (; serial && n < size; serial >>= 1)
		n += (size_t)snprintf(path + n, size - n, "%s", (serial & 1) ? "fd/../" : "./");
	if (n < size)
		snprintf(path + n, size - n, "fd/%d", fd);
}

int jf_codemap_add_bytes(struct jf_codemap *map, const void *bytes, size_t size,
			 uint64_t vaddr, const char *name, struct jf_error *err)
{
	char path[512];
	struct backing *b;
	const uint8_t *p = bytes;
	size_t done = 0;
	int fd;

	if (size == 0)
		return jf_fail(err, "%s: empty code at 0x%llx", name ? name : "code",
			       (unsigned long long)vaddr);
	fd = memfd_create("jitflow-code", MFD_CLOEXEC);
	if (fd < 0)
		return jf_fail(err, "memfd_create: %s", strerror(errno));
	while (done < size) {
		ssize_t n = write(fd, p + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return jf_fail(err, "writing code copy: %s", strerror(errno));
		}
		done += (size_t)n;
	}
	/* A path no backing has had: no need to look for one that maps it. */
	unique_fd_path(path, sizeof(path), ++map->copies, fd);
	b = backing_new(map, path, err);
	if (!b) {
		close(fd);
		return -1;
	}
	b->fd = fd;
	if (insert(map, b, 0, size, vaddr, name ? name : "code", err) < 0) {
		backing_put(map, b);
		return -1;
	}
	return 0;
}

int jf_codemap_remove(struct jf_codemap *map, uint64_t vaddr, uint64_t size)
{
	int touched = cut(map, vaddr, size);

	if (touched > 0)
		note_change(map, vaddr, size);
	return touched;
}

static const struct section *find(struct jf_codemap *map, uint64_t vaddr)
{
	size_t i = map->last_hit;

	if (i < map->count && map->sec[i].vaddr <= vaddr &&
	    vaddr - map->sec[i].vaddr < map->sec[i].size)
		return &map->sec[i];
	i = first_ending_after(map, vaddr);
	if (i < map->count && map->sec[i].vaddr <= vaddr) {
		map->last_hit = i;
		return &map->sec[i];
	}
	return NULL;
}

void jf_codemap_set_fill(struct jf_codemap *map, jf_codemap_fill_fn fill, void *ctx)
{
	map->fill = fill;
	map->fill_ctx = ctx;
}

void jf_codemap_set_pending(struct jf_codemap *map, jf_codemap_pending_fn pending, void *ctx)
{
	map->pending = pending;
	map->pending_ctx = ctx;
}

int jf_codemap_tells_changes(const struct jf_codemap *map)
{
	return map->pending != NULL;
}

int jf_codemap_may_change(struct jf_codemap *map, uint64_t vaddr, uint64_t size)
{
	return !map->pending || map->pending(map->pending_ctx, vaddr, size);
}

size_t jf_codemap_read_mapped(struct jf_codemap *map, uint64_t vaddr, void *buf, size_t size)
{
	const struct section *s = find(map, vaddr);
	uint64_t in_section;

	if (!s)
		return 0;
	in_section = vaddr - s->vaddr;
	if (size > s->size - in_section)
		size = (size_t)(s->size - in_section);
	memcpy(buf, s->backing->file.data + s->offset + in_section, size);
	return size;
}

/* What fill says of the bytes at vaddr, which no section holds, up to the next section
 * only: fill knows code that is not mapped yet (the next record loading vaddr), and past
 * the gap the map's own bytes are the ones that hold now. A decoder that reads ahead (a
 * page for OpenCSD's cache) would otherwise take later code over the code that runs. */
static size_t fill_gap(struct jf_codemap *map, uint64_t vaddr, void *buf, size_t size)
{
	size_t next = first_ending_after(map, vaddr);

	if (!map->fill)
		return 0;
	if (next < map->count && map->sec[next].vaddr - vaddr < size)
		size = (size_t)(map->sec[next].vaddr - vaddr);
	return map->fill(map->fill_ctx, vaddr, buf, size);
}

size_t jf_codemap_read(struct jf_codemap *map, uint64_t vaddr, void *buf, size_t size)
{
	size_t n = jf_codemap_read_mapped(map, vaddr, buf, size);

	return n ? n : fill_gap(map, vaddr, buf, size);
}

const char *jf_codemap_lookup(struct jf_codemap *map, uint64_t vaddr, uint64_t *section_vaddr)
{
	const struct section *s = find(map, vaddr);

	if (!s)
		return NULL;
	if (section_vaddr)
		*section_vaddr = s->vaddr;
	return s->name;
}

const char *jf_codemap_file_at(struct jf_codemap *map, uint64_t vaddr, uint64_t *file_offset)
{
	const struct section *s = find(map, vaddr);

	if (!s)
		return NULL;
	*file_offset = s->offset + (vaddr - s->vaddr);
	return s->backing->file.path;
}

uint64_t jf_codemap_generation(const struct jf_codemap *map)
{
	return map->generation;
}

int jf_codemap_unchanged_since(struct jf_codemap *map, uint64_t generation, uint64_t vaddr,
			       uint64_t size)
{
	const struct section *s;
	uint64_t g, from = vaddr ? vaddr - 1 : 0, to = vaddr + size + 1;

	if (generation > map->generation || map->generation - generation >= CHANGE_LOG ||
	    to <= vaddr)
		return 0;
	/* Touching counts: a change next to the range moves a section edge onto it. */
	for (g = generation + 1; g <= map->generation; g++) {
		uint64_t c_from, c_to;

		if (!jf_codemap_change(map, g, &c_from, &c_to) || (c_from < to && from < c_to))
			return 0;
	}
	/* In one section: bytes in a gap come from the fill callback, which may say
	 * otherwise without any change of the map. */
	s = find(map, vaddr);
	return s && vaddr + size <= s->vaddr + s->size;
}

int jf_codemap_change(const struct jf_codemap *map, uint64_t generation, uint64_t *from,
		      uint64_t *to)
{
	const struct change *c = &map->changes[generation % CHANGE_LOG];

	if (generation > map->generation || c->generation != generation)
		return 0;
	*from = c->from;
	*to = c->to;
	return 1;
}

const uint64_t *jf_codemap_generation_counter(const struct jf_codemap *map)
{
	return &map->generation;
}

size_t jf_codemap_count(const struct jf_codemap *map)
{
	return map->count;
}

enum { CLONE_KEEP_MAPPED = 64 << 20, PAGE = 4096 };

/* What libipt counts for section s when its cache keeps it mapped: the mapping (whole
 * pages) and the block cache, 4 bytes per byte of code (pt_section_memsize). */
static uint64_t libipt_memsize(const struct section *s)
{
	return s->size + 2 * PAGE + 4 * s->size;
}

struct jf_codemap *jf_codemap_clone(const struct jf_codemap *map, struct jf_error *err)
{
	struct jf_codemap *copy;
	size_t i;

	if (map->fill) {
		jf_fail(err, "a code map with a fill callback cannot be copied");
		return NULL;
	}
	copy = jf_codemap_new();
	if (!copy) {
		jf_fail(err, "out of memory");
		return NULL;
	}
	/* A copy serves decoders that come and go (one per segment of a trace): libipt unmaps
	 * a section, and frees its block cache, when the last decoder using it goes, unless
	 * the section cache keeps it mapped. It keeps every section at once: one bigger than
	 * its limit would be mapped again, its block cache made anew, each time a decoder
	 * comes back to it (a 20 MB image, where libjvm's code is 14 MB, made `stat -j 2`
	 * take 3.5 times the CPU on a damaged capture). libipt counts each block cache whole; only
	 * the pages decoded take memory. */
	copy->iscache_limit = CLONE_KEEP_MAPPED;
	for (i = 0; i < map->count; i++)
		copy->iscache_limit += libipt_memsize(&map->sec[i]);
	pt_iscache_set_limit(copy->iscache, copy->iscache_limit);
	/* The sections do not overlap, so adding them in order rebuilds the same list; the
	 * files are mapped anew (in-memory copies through their /proc/self/fd path). */
	for (i = 0; i < map->count; i++) {
		const struct section *s = &map->sec[i];

		if (jf_codemap_add_file(copy, s->backing->file.path, s->offset, s->size, s->vaddr,
					s->name, err) < 0) {
			jf_codemap_free(copy);
			return NULL;
		}
	}
	return copy;
}

/* libipt asks here for what no section holds. */
static int read_missing(uint8_t *buffer, size_t size, const struct pt_asid *asid, uint64_t ip,
			void *context)
{
	struct jf_codemap *map = context;
	size_t n = fill_gap(map, ip, buffer, size);

	return n ? (int)n : -pte_nomap;
}

/* libipt's section cache counts its sections in 16 bits, keeps every one it was given and
 * looks through all of them for each new one; a JIT that loads and frees code for long (a
 * minivm program with 59562 code regions) would fill it, slower and slower. So a new cache
 * starts with the live sections only once it holds twice the live sections and
 * ISCACHE_SLACK more (never more than ISCACHE_MAX). */
enum { ISCACHE_SLACK = 4096, ISCACHE_MAX = 60000 };

/* 1 if it made a new cache (the image must be built anew), 0 if not, -1 on error. */
static int renew_iscache_if_full(struct jf_codemap *map, struct jf_error *err)
{
	struct pt_image_section_cache *fresh;
	size_t i, adding = 0, limit;

	for (i = 0; i < map->count; i++)
		adding += map->sec[i].isid <= 0;
	limit = 2 * map->count + ISCACHE_SLACK;
	if (limit > ISCACHE_MAX)
		limit = ISCACHE_MAX;
	if (map->iscache_added + adding <= limit || map->count >= limit)
		return 0;
	fresh = pt_iscache_alloc("jitflow");
	if (!fresh)
		return jf_fail(err, "out of memory");
	/* The current image holds references of its own to the sections it maps. */
	pt_iscache_free(map->iscache);
	map->iscache = fresh;
	map->iscache_added = 0;
	if (map->iscache_limit)
		pt_iscache_set_limit(fresh, map->iscache_limit);
	for (i = 0; i < map->count; i++) {
		free(map->sec[i].image_path);
		map->sec[i].image_path = NULL;
		map->sec[i].isid = 0;
	}
	return 1;
}

/* A name of s's file that no other section had: /proc/self/fd/N of the file open, spelt
 * anew (unique_fd_path). */
static char *new_image_path(struct jf_codemap *map, struct backing *b)
{
	char path[1024];

	if (b->fd < 0) {
		b->fd = open(b->file.path, O_RDONLY | O_CLOEXEC);
		if (b->fd < 0)
			return NULL;
	}
	unique_fd_path(path, sizeof(path), ++map->image_paths, b->fd);
	return strdup(path);
}

/* Map section s in image through the section cache (adding it there first if new). */
static int add_to_image(struct jf_codemap *map, struct pt_image *image, struct section *s,
			struct jf_error *err)
{
	int rc;

	if (s->isid <= 0) {
		free(s->image_path);
		s->image_path = new_image_path(map, s->backing);
		if (!s->image_path)
			return jf_fail(err, "%s: %s", s->backing->file.path, strerror(errno));
		s->isid = pt_iscache_add_file(map->iscache, s->image_path, s->offset, s->size,
					      s->vaddr);
		if (s->isid < 0) {
			rc = s->isid;
			s->isid = 0;
			return jf_fail(err, "%s: libipt cannot add section at 0x%llx: %s",
				       s->backing->file.path, (unsigned long long)s->vaddr,
				       pt_errstr(pt_errcode(rc)));
		}
		map->iscache_added++;
	}
	rc = pt_image_add_cached(image, map->iscache, s->isid, NULL);
	if (rc < 0)
		return jf_fail(err, "%s: libipt cannot map section at 0x%llx: %s",
			       s->backing->file.path, (unsigned long long)s->vaddr,
			       pt_errstr(pt_errcode(rc)));
	s->in_image = 1;
	return 0;
}

static void forget_stale(struct jf_codemap *map)
{
	size_t i;

	for (i = 0; i < map->nstale; i++)
		free(map->stale[i]);
	map->nstale = 0;
}

static struct pt_image *build_image(struct jf_codemap *map, struct jf_error *err)
{
	struct pt_image *image = pt_image_alloc("jitflow");
	size_t i;

	if (!image) {
		jf_fail(err, "out of memory");
		return NULL;
	}
	pt_image_set_callback(image, read_missing, map);
	for (i = 0; i < map->count; i++)
		map->sec[i].in_image = 0;
	for (i = 0; i < map->count; i++) {
		if (add_to_image(map, image, &map->sec[i], err) < 0) {
			pt_image_free(image);
			return NULL;
		}
	}
	return image;
}

/* Take the sections that changed or left the list out of the image and add the new ones.
 * The list's sections do not overlap, so each add cuts nothing there. */
static int update_image(struct jf_codemap *map, struct jf_error *err)
{
	size_t i;

	for (i = 0; i < map->nstale; i++) {
		int rc = pt_image_remove_by_filename(map->image, map->stale[i], NULL);

		if (rc < 0)
			return jf_fail(err, "libipt cannot unmap a section: %s",
				       pt_errstr(pt_errcode(rc)));
	}
	forget_stale(map);
	for (i = 0; i < map->count; i++)
		if (!map->sec[i].in_image && add_to_image(map, map->image, &map->sec[i], err) < 0)
			return -1;
	return 0;
}

struct pt_image *jf_codemap_pt_image(struct jf_codemap *map, struct jf_error *err)
{
	struct pt_image *image;
	int renewed;

	if (map->image && map->image_generation == map->generation)
		return map->image;
	renewed = renew_iscache_if_full(map, err);
	if (renewed < 0)
		return NULL;
	/* The decoders may still point at the old image, or at this one before the change;
	 * they ask for it again before their next read (see pt_decoder.c), and libipt only
	 * touches the image inside its calls. */
	if (map->image && !renewed && !map->image_broken) {
		if (update_image(map, err) < 0) {
			map->image_broken = 1;
			return NULL;
		}
		map->image_generation = map->generation;
		return map->image;
	}
	image = build_image(map, err);
	if (!image) {
		map->image_broken = 1; /* its sections' in_image tell of the image not made */
		return NULL;
	}
	if (map->image)
		pt_image_free(map->image);
	forget_stale(map);
	map->image_broken = 0;
	map->image = image;
	map->image_generation = map->generation;
	return image;
}

int jf_codemap_pt_cache_fits(struct jf_codemap *map, enum pt_exec_mode mode)
{
	if (map->cached_mode == ptem_unknown)
		map->cached_mode = mode;
	return map->cached_mode == mode;
}
