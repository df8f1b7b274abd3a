/* Reading gHotSpotVMStructs / gHotSpotVMTypes (see vm_structs.h). Every entry's layout
 * comes from the exported *Offset and *ArrayStride variables; an entry whose type name is
 * NULL ends a table. */
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#include "vm_structs.h"

struct table {
	const char *base;
	uint64_t stride;
};

static struct table structs, types, int_constants;
static uint64_t s_type, s_field, s_static, s_offset, s_address, t_name, t_size, c_name, c_value;

static int symbol_u64(const char *name, uint64_t *out)
{
	const uint64_t *p = dlsym(RTLD_DEFAULT, name);

	if (!p)
		return -1;
	*out = *p;
	return 0;
}

static int symbol_table(const char *name, const char *stride, struct table *t)
{
	const char *const *base = dlsym(RTLD_DEFAULT, name);

	if (!base || !*base || symbol_u64(stride, &t->stride) < 0 || !t->stride)
		return -1;
	t->base = *base;
	return 0;
}

int jf_hs_vm_structs_open(void)
{
	if (structs.base)
		return 0;
	if (symbol_table("gHotSpotVMTypes", "gHotSpotVMTypeEntryArrayStride", &types) < 0 ||
	    symbol_u64("gHotSpotVMTypeEntryTypeNameOffset", &t_name) < 0 ||
	    symbol_u64("gHotSpotVMTypeEntrySizeOffset", &t_size) < 0 ||
	    symbol_u64("gHotSpotVMStructEntryTypeNameOffset", &s_type) < 0 ||
	    symbol_u64("gHotSpotVMStructEntryFieldNameOffset", &s_field) < 0 ||
	    symbol_u64("gHotSpotVMStructEntryIsStaticOffset", &s_static) < 0 ||
	    symbol_u64("gHotSpotVMStructEntryOffsetOffset", &s_offset) < 0 ||
	    symbol_u64("gHotSpotVMStructEntryAddressOffset", &s_address) < 0 ||
	    symbol_table("gHotSpotVMStructs", "gHotSpotVMStructEntryArrayStride", &structs) < 0)
		return -1;
	/* Optional: only the trap reasons need them. */
	if (symbol_u64("gHotSpotVMIntConstantEntryNameOffset", &c_name) < 0 ||
	    symbol_u64("gHotSpotVMIntConstantEntryValueOffset", &c_value) < 0 ||
	    symbol_table("gHotSpotVMIntConstants", "gHotSpotVMIntConstantEntryArrayStride",
			 &int_constants) < 0)
		int_constants.base = NULL;
	return 0;
}

static const char *string_at(const char *entry, uint64_t offset)
{
	const char *s;

	memcpy(&s, entry + offset, sizeof(s));
	return s;
}

static const char *find_struct(const char *type, const char *field)
{
	const char *e, *t;

	if (!structs.base)
		return NULL;
	for (e = structs.base; (t = string_at(e, s_type)) != NULL; e += structs.stride) {
		const char *f = string_at(e, s_field);

		if (f && !strcmp(t, type) && !strcmp(f, field))
			return e;
	}
	return NULL;
}

int64_t jf_hs_field_offset(const char *type, const char *field)
{
	const char *e = find_struct(type, field);
	int32_t is_static;
	uint64_t offset;

	if (!e)
		return -1;
	memcpy(&is_static, e + s_static, sizeof(is_static));
	memcpy(&offset, e + s_offset, sizeof(offset));
	return is_static ? -1 : (int64_t)offset;
}

void *jf_hs_static_address(const char *type, const char *field)
{
	const char *e = find_struct(type, field);
	int32_t is_static;
	void *address;

	if (!e)
		return NULL;
	memcpy(&is_static, e + s_static, sizeof(is_static));
	memcpy(&address, e + s_address, sizeof(address));
	return is_static ? address : NULL;
}

int64_t jf_hs_type_size(const char *type)
{
	const char *e, *t;
	uint64_t size;

	if (!types.base)
		return -1;
	for (e = types.base; (t = string_at(e, t_name)) != NULL; e += types.stride) {
		if (!strcmp(t, type)) {
			memcpy(&size, e + t_size, sizeof(size));
			return (int64_t)size;
		}
	}
	return -1;
}

/* The constant entry named name (exact), or whose name starts with name and whose value
 * is value. */
static const char *find_int_constant(const char *name, int exact, int32_t value)
{
	const char *e, *n;
	int32_t v;

	if (!int_constants.base)
		return NULL;
	for (e = int_constants.base; (n = string_at(e, c_name)) != NULL; e += int_constants.stride) {
		memcpy(&v, e + c_value, sizeof(v));
		if (exact ? !strcmp(n, name) : v == value && !strncmp(n, name, strlen(name)))
			return e;
	}
	return NULL;
}

int jf_hs_int_constant(const char *name, int32_t *value)
{
	const char *e = find_int_constant(name, 1, 0);

	if (!e)
		return -1;
	memcpy(value, e + c_value, sizeof(*value));
	return 0;
}

const char *jf_hs_int_constant_name(const char *prefix, int32_t value)
{
	const char *e = find_int_constant(prefix, 0, value);

	return e ? string_at(e, c_name) + strlen(prefix) : NULL;
}

/* JVMFlag::flags is an array of numFlags JVMFlag objects, each naming its value's
 * address (_addr) and its type name (_type). */
int jf_hs_flag_intx(const char *name, int64_t *value)
{
	const char *const *flags = jf_hs_static_address("JVMFlag", "flags");
	const size_t *count = jf_hs_static_address("JVMFlag", "numFlags");
	int64_t size = jf_hs_type_size("JVMFlag"), o_name = jf_hs_field_offset("JVMFlag", "_name"),
		o_addr = jf_hs_field_offset("JVMFlag", "_addr");
	size_t i;

	if (!flags || !*flags || !count || size <= 0 || o_name < 0 || o_addr < 0)
		return -1;
	for (i = 0; i < *count; i++) {
		const char *flag = *flags + i * (size_t)size, *n = string_at(flag, (uint64_t)o_name);
		const char *addr = string_at(flag, (uint64_t)o_addr);

		if (n && addr && !strcmp(n, name)) {
			memcpy(value, addr, sizeof(*value));
			return 0;
		}
	}
	return -1;
}
