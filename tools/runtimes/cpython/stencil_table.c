/* Reads the stencil sizes out of CPython's generated jit_stencils.h (stencil_table.h).
 * Only the initialiser lines are read; the emit functions above them are skipped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stencil_table.h"

#define MAX_STENCILS 4096

/* One line of text[pos, len) without its newline; returns the next line's start. */
static size_t next_line(const char *text, size_t len, size_t pos, const char **line,
			size_t *line_len)
{
	const char *nl = memchr(text + pos, '\n', len - pos);
	size_t end = nl ? (size_t)(nl - text) : len;

	*line = text + pos;
	*line_len = end - pos;
	return nl ? end + 1 : len;
}

/* Parses "{emit_NAME, CODE, DATA}" at s (up to end): NAME must equal expect_name when it
 * is given. Returns 0 or -1. */
static int parse_group(const char *s, const char *end, const char *expect_name,
		       struct cpython_stencil *out)
{
	char buf[256];
	size_t n = (size_t)(end - s);
	char name[64];
	unsigned long code, data;
	int used = 0;

	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (sscanf(buf, " {emit_%63[A-Za-z0-9_], %lu, %lu}%n", name, &code, &data, &used) != 3 ||
	    used == 0)
		return -1;
	if (expect_name && strcmp(name, expect_name))
		return -1;
	if (code > UINT32_MAX || data > UINT32_MAX)
		return -1;
	snprintf(out->name, sizeof(out->name), "%s", name);
	out->code_size = (uint32_t)code;
	out->data_size = (uint32_t)data;
	return 0;
}

static int fail(struct cpython_stencil_table *t, char *err, size_t errlen, size_t line_no,
		const char *what)
{
	snprintf(err, errlen, "jit_stencils.h line %zu: %s", line_no, what);
	cpython_stencil_table_free(t);
	return -1;
}

int cpython_stencil_table_parse(const char *text, size_t len, struct cpython_stencil_table *t,
				char *err, size_t errlen)
{
	static const char tramp[] = "static const StencilGroup trampoline =";
	static const char groups[] = "static const StencilGroup stencil_groups[";
	size_t pos = 0, line_no = 0, cap = 0;
	int have_tramp = 0, in_groups = 0, groups_done = 0;

	memset(t, 0, sizeof(*t));
	while (pos < len) {
		const char *line, *end;
		size_t n;

		pos = next_line(text, len, pos, &line, &n);
		line_no++;
		end = line + n;
		if (!in_groups && n >= sizeof(tramp) - 1 && !memcmp(line, tramp, sizeof(tramp) - 1)) {
			const char *semi = memchr(line, ';', n);

			if (have_tramp)
				return fail(t, err, errlen, line_no, "a second trampoline");
			if (!semi || parse_group(line + sizeof(tramp) - 1, semi, "trampoline",
						 &t->trampoline) < 0)
				return fail(t, err, errlen, line_no,
					    "expected '{emit_trampoline, CODE_SIZE, DATA_SIZE};'");
			have_tramp = 1;
		} else if (!in_groups && n >= sizeof(groups) - 1 &&
			   !memcmp(line, groups, sizeof(groups) - 1)) {
			if (groups_done)
				return fail(t, err, errlen, line_no, "a second stencil_groups table");
			in_groups = 1;
		} else if (in_groups) {
			const char *p = line, *close, *eq;
			char name[64];
			size_t name_len;

			while (p < end && (*p == ' ' || *p == '\t'))
				p++;
			if (end - p >= 2 && p[0] == '}' && p[1] == ';') {
				in_groups = 0;
				groups_done = 1;
				continue;
			}
			if (p == end || *p != '[' || !(close = memchr(p, ']', (size_t)(end - p))) ||
			    (name_len = (size_t)(close - p - 1)) == 0 || name_len >= sizeof(name))
				return fail(t, err, errlen, line_no,
					    "expected '[UOP] = {emit_UOP, CODE_SIZE, DATA_SIZE},' "
					    "or '};'");
			memcpy(name, p + 1, name_len);
			name[name_len] = '\0';
			eq = close + 1;
			while (eq < end && *eq == ' ')
				eq++;
			if (eq == end || *eq != '=' || end[-1] != ',')
				return fail(t, err, errlen, line_no, "expected ' = {...},' after the uop");
			if (t->count == cap) {
				struct cpython_stencil *grown;

				if (cap >= MAX_STENCILS)
					return fail(t, err, errlen, line_no, "more than 4096 stencils");
				cap = cap ? cap * 2 : 256;
				grown = realloc(t->stencils, cap * sizeof(*grown));
				if (!grown)
					return fail(t, err, errlen, line_no, "out of memory");
				t->stencils = grown;
			}
			if (parse_group(eq + 1, end - 1, name, &t->stencils[t->count]) < 0)
				return fail(t, err, errlen, line_no,
					    "expected '{emit_UOP, CODE_SIZE, DATA_SIZE}' for the same uop");
			t->count++;
		}
	}
	if (in_groups)
		return fail(t, err, errlen, line_no, "stencil_groups table not closed by '};'");
	if (!have_tramp)
		return fail(t, err, errlen, line_no, "no 'static const StencilGroup trampoline'");
	if (!t->count)
		return fail(t, err, errlen, line_no, "no stencil_groups entries");
	return 0;
}

void cpython_stencil_table_free(struct cpython_stencil_table *t)
{
	free(t->stencils);
	memset(t, 0, sizeof(*t));
}

const struct cpython_stencil *cpython_stencil_find(const struct cpython_stencil_table *t,
						   const char *name)
{
	size_t i;

	for (i = 0; i < t->count; i++)
		if (!strcmp(t->stencils[i].name, name))
			return &t->stencils[i];
	return NULL;
}
