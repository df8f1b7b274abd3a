/* HotSpot's collector entries (cli_collectors.h). Every collection of a stop-the-world
 * collector runs in one call of a VM operation's doit() on the VM Thread; these are the
 * operations of JDK 17's and later JDKs' collectors that run one (Serial, Parallel, G1,
 * Shenandoah's pauses), by their mangled names in libjvm's .symtab. Operations that only
 * inspect the heap (heap dumps, histograms) are not collections. */
#include "cli_collectors.h"

#include <stdlib.h>
#include <string.h>

#include "jitflow/images.h"

#define VM_LIBRARY "libjvm.so"

static const char *const entry_names[] = {
	/* Serial (JDK 17: the generational heap; later: the serial heap) */
	"_ZN26VM_GenCollectForAllocation4doitEv",
	"_ZN17VM_GenCollectFull4doitEv",
	"_ZN29VM_SerialCollectForAllocation4doitEv",
	"_ZN18VM_SerialGCCollect4doitEv",
	/* any collector, for a metaspace allocation that failed */
	"_ZN31VM_CollectForMetadataAllocation4doitEv",
	/* Parallel */
	"_ZN29VM_ParallelGCFailedAllocation4doitEv",
	"_ZN21VM_ParallelGCSystemGC4doitEv",
	"_ZN31VM_ParallelCollectForAllocation4doitEv",
	"_ZN20VM_ParallelGCCollect4doitEv",
	/* G1: young and mixed pauses, full collections, the remark and cleanup pauses */
	"_ZN25VM_G1CollectForAllocation4doitEv",
	"_ZN16VM_G1CollectFull4doitEv",
	"_ZN24VM_G1TryInitiateConcMark4doitEv",
	"_ZN20VM_G1PauseConcurrent4doitEv",
	/* Shenandoah's pauses */
	"_ZN19VM_ShenandoahFullGC4doitEv",
	"_ZN26VM_ShenandoahDegeneratedGC4doitEv",
	"_ZN21VM_ShenandoahInitMark4doitEv",
	"_ZN31VM_ShenandoahFinalMarkStartEvac4doitEv",
	"_ZN27VM_ShenandoahInitUpdateRefs4doitEv",
	"_ZN28VM_ShenandoahFinalUpdateRefs4doitEv",
	"_ZN23VM_ShenandoahFinalRoots4doitEv",
};
#define NENTRIES (sizeof(entry_names) / sizeof(entry_names[0]))

struct vm_file {
	char *path;
	uint64_t offsets[NENTRIES];   /* file offsets of the entries (0: not in it) */
	struct vm_file *next;
};

struct jf_cli_collectors {
	struct vm_file *files;
};

struct jf_cli_collectors *jf_cli_collectors_new(void)
{
	return calloc(1, sizeof(struct jf_cli_collectors));
}

void jf_cli_collectors_free(struct jf_cli_collectors *c)
{
	if (!c)
		return;
	while (c->files) {
		struct vm_file *f = c->files;

		c->files = f->next;
		free(f->path);
		free(f);
	}
	free(c);
}

int jf_cli_collectors_is_vm(const char *section_name)
{
	return section_name && !strcmp(section_name, VM_LIBRARY);
}

/* The entries of the file at path, read on first use (NULL: out of memory). */
static const struct vm_file *vm_file(struct jf_cli_collectors *c, const char *path)
{
	struct vm_file *f;
	struct jf_error err;

	for (f = c->files; f; f = f->next)
		if (!strcmp(f->path, path))
			return f;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		return NULL;
	}
	/* A file that cannot be read keeps no entry: its code is the VM's. */
	if (jf_elf_function_offsets(path, entry_names, NENTRIES, f->offsets, &err) < 0)
		memset(f->offsets, 0, sizeof(f->offsets));
	f->next = c->files;
	c->files = f;
	return f;
}

int jf_cli_collector_entry(struct jf_cli_collectors *c, struct jf_codemap *map, uint64_t addr)
{
	const struct vm_file *f;
	const char *path;
	uint64_t offset;
	size_t i;

	if (!c || !map || !jf_cli_collectors_is_vm(jf_codemap_lookup(map, addr, NULL)))
		return 0;
	path = jf_codemap_file_at(map, addr, &offset);
	if (!path || !(f = vm_file(c, path)))
		return 0;
	for (i = 0; i < NENTRIES; i++)
		if (f->offsets[i] && f->offsets[i] == offset)
			return 1;
	return 0;
}
