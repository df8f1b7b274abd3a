/* Which description speaks for a result, and the defaults of a description (runtime.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

const struct jf_runtime_desc *jf_runtime_by_id(uint32_t runtime)
{
	switch (runtime) {
	case JF_RUNTIME_LUAJIT:
		return &jf_runtime_luajit;
	case JF_RUNTIME_PYPY:
		return &jf_runtime_pypy;
	case JF_RUNTIME_HOTSPOT:
		return &jf_runtime_hotspot;
	case JF_RUNTIME_CPYTHON:
		return &jf_runtime_cpython;
	default:
		return &jf_runtime_generic;
	}
}

uint8_t jf_runtime_region_group(uint32_t runtime, uint32_t kind, const char *name)
{
	const struct jf_runtime_desc *rt = jf_runtime_by_id(runtime);
	uint8_t group = rt->region_group ? rt->region_group(kind, name ? name : "") : 0;

	return group < JF_REGION_GROUPS ? group : 0;
}

const struct jf_runtime_desc *jf_runtime_of(const struct jf_analysis_result *r)
{
	/* The zone records made from a PYPYLOG declare no runtime; the counters PyPy keeps
	 * itself (jit-backend-counts), which only they describe as points, say it is PyPy. */
	const struct jf_runtime_desc *rt = jf_runtime_by_id(r->runtime);

	return rt == &jf_runtime_generic && r->npoints ? &jf_runtime_pypy : rt;
}

const char *jf_runtime_kind(const struct jf_runtime_desc *rt, const struct jf_trace_result *t)
{
	const char *name = NULL;

	if (rt->trace_kind)
		name = rt->trace_kind(t);
	else if (t->kind < JF_RUNTIME_KINDS)
		name = rt->kind_names[t->kind];
	return name ? name : "trace";
}

/* id as fmt writes it, in decimal without one. */
static const char *id_text(void (*fmt)(char *, size_t, uint64_t), char *buf, size_t size,
			   uint64_t id)
{
	if (fmt)
		fmt(buf, size, id);
	else
		snprintf(buf, size, "%" PRIu64, id);
	return buf;
}

const char *jf_runtime_class(const struct jf_runtime_desc *rt, enum jf_code_class cls)
{
	if ((unsigned)cls < JF_CLASS_COUNT && rt->class_names[cls])
		return rt->class_names[cls];
	return jf_code_class_name(cls);
}

const char *jf_runtime_trace_id(const struct jf_runtime_desc *rt, char *buf, size_t size, uint64_t id)
{
	return id_text(rt->trace_id, buf, size, id);
}

const char *jf_runtime_guard_id(const struct jf_runtime_desc *rt, char *buf, size_t size, uint64_t id)
{
	return id_text(rt->guard_id, buf, size, id);
}

const char *jf_runtime_heading(char *buf, size_t size, const char *word)
{
	snprintf(buf, size, "%s", word);
	if (buf[0] >= 'a' && buf[0] <= 'z')
		buf[0] = (char)(buf[0] - 'a' + 'A');
	return buf;
}

const char *jf_runtime_not_told_apart(const struct jf_runtime_desc *rt,
				      const struct jf_analysis_result *r)
{
	return rt->not_told_apart ? rt->not_told_apart(r) : NULL;
}

size_t *jf_runtime_order_by(size_t n, const uint64_t *key)
{
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx)), i, j;

	if (!idx)
		return NULL;
	for (i = 0; i < n; i++) {
		for (j = i; j > 0 && key[idx[j - 1]] < key[i]; j--)
			idx[j] = idx[j - 1];
		idx[j] = i;
	}
	return idx;
}

size_t *jf_runtime_rank_traces(const struct jf_analysis_result *r)
{
	uint64_t *key = malloc((r->ntraces ? r->ntraces : 1) * sizeof(*key));
	size_t *idx, i;

	if (!key)
		return NULL;
	for (i = 0; i < r->ntraces; i++)
		key[i] = r->traces[i].insns;
	idx = jf_runtime_order_by(r->ntraces, key);
	free(key);
	return idx;
}

size_t *jf_runtime_rank_guards(const struct jf_analysis_result *r)
{
	uint64_t *key = malloc((r->nguards ? r->nguards : 1) * sizeof(*key));
	size_t *idx, i;

	if (!key)
		return NULL;
	for (i = 0; i < r->nguards; i++)
		key[i] = r->guards[i].exits;
	idx = jf_runtime_order_by(r->nguards, key);
	free(key);
	return idx;
}
