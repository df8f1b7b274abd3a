/* Finding the nmethod object of a CompiledMethodLoad's code address.
 *
 * An nmethod is a CodeBlob whose header (the C++ object) lies in the code heap before its
 * code: the object (_header_size bytes), relocations, constants, then the instructions,
 * which start at the nmethod's _entry_point, the address JVMTI reports (a native wrapper's
 * constants come after its instructions). HotSpot does not export CodeCache::find_blob, so
 * the header is found by walking back from the code, 8 bytes at a time, to an object named
 * "nmethod" (or "native nmethod", a native method's wrapper) whose _entry_point is this address and which holds it after its header and
 * inside its _size. The first match from the code backwards lies inside
 * this blob (its header, relocations and constants), never before it. */
#include <string.h>
#include <unistd.h>

#include "nmethod_header.h"
#include "vm_structs.h"

/* Header, relocations and constants. */
#define MAX_BACK_BYTES (64 * 1024)
#define INVOCATION_ENTRY_BCI (-1)

struct offsets {
	int64_t name, size, header_size, entry;
	int64_t compile_id, level, entry_bci, verified_entry;
	int64_t osr_entry, deopt_handler, deopt_mh_handler; /* optional: -1 when not told */
	int ready;
};

static struct offsets o;

/* A field of nmethod or of the superclass that declares it. */
static int64_t nmethod_field(const char *field)
{
	int64_t off = jf_hs_field_offset("nmethod", field);

	return off >= 0 ? off : jf_hs_field_offset("CompiledMethod", field);
}

static int read_offsets(void)
{
	if (o.ready)
		return o.ready > 0 ? 0 : -1;
	o.ready = -1;
	if (jf_hs_vm_structs_open() < 0)
		return -1;
	o.name = jf_hs_field_offset("CodeBlob", "_name");
	o.size = jf_hs_field_offset("CodeBlob", "_size");
	o.header_size = jf_hs_field_offset("CodeBlob", "_header_size");
	o.entry = jf_hs_field_offset("nmethod", "_entry_point");
	o.compile_id = jf_hs_field_offset("nmethod", "_compile_id");
	o.level = jf_hs_field_offset("nmethod", "_comp_level");
	o.entry_bci = jf_hs_field_offset("nmethod", "_entry_bci");
	o.verified_entry = jf_hs_field_offset("nmethod", "_verified_entry_point");
	o.osr_entry = jf_hs_field_offset("nmethod", "_osr_entry_point");
	/* CompiledMethod's fields (nmethod's superclass) in the JDKs that have one */
	o.deopt_handler = nmethod_field("_deopt_handler_begin");
	o.deopt_mh_handler = nmethod_field("_deopt_mh_handler_begin");
	if (o.name < 0 || o.size < 0 || o.header_size < 0 || o.entry < 0 ||
	    o.compile_id < 0 || o.level < 0 || o.entry_bci < 0 || o.verified_entry < 0)
		return -1;
	o.ready = 1;
	return 0;
}

/* Whether the page at addr can be read: the walk stops at the start of the code heap's
 * committed memory (the page before may be reserved and inaccessible) instead of faulting
 * there. write() from an unreadable address fails with EFAULT, natively and under QEMU. */
static int page_readable(uint64_t addr)
{
	static int fds[2] = { -1, -1 };
	char byte;

	if (fds[0] < 0 && pipe(fds) < 0)
		return 0;
	if (write(fds[1], (const void *)(uintptr_t)addr, 1) != 1)
		return 0;
	return read(fds[0], &byte, 1) == 1;
}

static int32_t i32_at(const char *p, int64_t off)
{
	int32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint64_t ptr_at(const char *p, int64_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

int jf_hs_nmethod_facts(const void *code_addr, struct jf_nmethod_facts *out)
{
	uint64_t code = (uint64_t)(uintptr_t)code_addr, at;
	uint64_t page_size = (uint64_t)sysconf(_SC_PAGESIZE), checked = code & ~(page_size - 1);

	if (read_offsets() < 0)
		return -1;

	for (at = (code & ~7ull) - 8; code - at <= MAX_BACK_BYTES; at -= 8) {
		const char *p = (const char *)(uintptr_t)at;

		int32_t header_size, size;
		const char *name;

		if (at < checked) {
			checked = at & ~(page_size - 1);
			if (!page_readable(checked))
				return -1;
		}
		if (ptr_at(p, o.entry) != code)
			continue;
		header_size = i32_at(p, o.header_size);
		size = i32_at(p, o.size);
		if (header_size <= 0 || size <= 0 || code < at + (uint64_t)header_size ||
		    code - at >= (uint64_t)size)
			continue;
		name = (const char *)(uintptr_t)ptr_at(p, o.name);
		if (!name || (strcmp(name, "nmethod") && strcmp(name, "native nmethod")))
			continue;
		out->header = at;
		out->blob_size = i32_at(p, o.size);
		out->compile_id = i32_at(p, o.compile_id);
		out->level = i32_at(p, o.level);
		out->osr_bci = i32_at(p, o.entry_bci);
		if (out->osr_bci == INVOCATION_ENTRY_BCI)
			out->osr_bci = -1;
		out->verified_entry = ptr_at(p, o.verified_entry);
		out->osr_entry = o.osr_entry >= 0 ? ptr_at(p, o.osr_entry) : 0;
		out->deopt_handler = o.deopt_handler >= 0 ? ptr_at(p, o.deopt_handler) : 0;
		out->deopt_mh_handler = o.deopt_mh_handler >= 0 ? ptr_at(p, o.deopt_mh_handler) : 0;
		return 0;
	}
	return -1;
}
