/* Which description speaks for a result, and the defaults of a description (runtime.h). */
#include <inttypes.h>
#include <string.h>

#include "runtime.h"

const struct jf_runtime_desc *jf_runtime_of(const struct jf_analysis_result *r)
{
	switch (r->runtime) {
	case JF_RUNTIME_LUAJIT:
		return &jf_runtime_luajit;
	case JF_RUNTIME_PYPY:
		return &jf_runtime_pypy;
	default:
		break;
	}
	/* The zone records made from a PYPYLOG declare no runtime; the counters PyPy keeps
	 * itself (jit-backend-counts), which only they describe as points, say it is PyPy. */
	if (r->npoints)
		return &jf_runtime_pypy;
	return &jf_runtime_generic;
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
