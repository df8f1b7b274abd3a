/* The snapshot .ini reader: the text is copied once and cut in place into strings. */
#include "cs_ini.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jitflow/mapped_file.h"

static char *trim(char *s, char *end)
{
	while (s < end && isspace((unsigned char)*s))
		s++;
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	*end = 0;
	return s;
}

static int add_entry(struct jf_ini *ini, size_t *cap, const char *section, const char *key,
		     const char *value, unsigned line)
{
	if (ini->count == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct jf_ini_entry *e = realloc(ini->entries, ncap * sizeof(*e));

		if (!e)
			return -1;
		ini->entries = e;
		*cap = ncap;
	}
	ini->entries[ini->count].section = section;
	ini->entries[ini->count].key = key;
	ini->entries[ini->count].value = value;
	ini->entries[ini->count].line = line;
	ini->count++;
	return 0;
}

/* Shorten what we quote from a bad line so the message stays one readable line. */
static const char *excerpt(const char *s, char *buf, size_t size)
{
	size_t i;

	for (i = 0; i + 1 < size && s[i]; i++)
		buf[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
	buf[i] = 0;
	if (s[i] && size > 4)
		memcpy(buf + size - 4, "...", 4);
	return buf;
}

int jf_ini_parse(struct jf_ini *ini, const char *name, const char *text, size_t size,
		 struct jf_error *err)
{
	const char *section = NULL;
	size_t cap = 0;
	unsigned line = 0;
	char *p, *end;

	memset(ini, 0, sizeof(*ini));
	ini->name = strdup(name);
	if (!ini->name)
		return jf_fail(err, "%s: out of memory", name);
	if (size > JF_INI_MAX_BYTES) {
		jf_fail(err, "%s: %zu bytes is too large for a snapshot .ini file (at most %d)",
			name, size, JF_INI_MAX_BYTES);
		goto fail;
	}
	ini->text = malloc(size + 1);
	if (!ini->text) {
		jf_fail(err, "%s: out of memory", name);
		goto fail;
	}
	if (size)
		memcpy(ini->text, text, size);
	ini->text[size] = 0;
	if (memchr(ini->text, 0, size)) {
		jf_fail(err, "%s: offset %zu: NUL byte; expected a text .ini file", name,
			(size_t)((char *)memchr(ini->text, 0, size) - ini->text));
		goto fail;
	}
	for (p = ini->text; p < ini->text + size; p = end + 1) {
		char *nl = memchr(p, '\n', (size_t)(ini->text + size - p));
		char *s, *eq;
		char quote[48];

		end = nl ? nl : ini->text + size;
		line++;
		s = trim(p, end);
		if (!*s || *s == ';' || *s == '#')
			continue;
		if (*s == '[') {
			char *close = strchr(s, ']');

			if (!close || close[1]) {
				jf_fail(err, "%s:%u: expected a section header '[name]', found '%s'",
					name, line, excerpt(s, quote, sizeof(quote)));
				goto fail;
			}
			section = trim(s + 1, close);
			if (!*section) {
				jf_fail(err, "%s:%u: empty section name '[]'", name, line);
				goto fail;
			}
			if (add_entry(ini, &cap, section, NULL, NULL, line) < 0)
				goto oom;
			continue;
		}
		eq = strchr(s, '=');
		if (!eq) {
			jf_fail(err, "%s:%u: expected 'key=value' or '[section]', found '%s'", name,
				line, excerpt(s, quote, sizeof(quote)));
			goto fail;
		}
		if (!section) {
			jf_fail(err, "%s:%u: 'key=value' before any [section] header", name, line);
			goto fail;
		}
		{
			char *key = trim(s, eq);
			char *value = trim(eq + 1, eq + 1 + strlen(eq + 1));

			if (!*key) {
				jf_fail(err, "%s:%u: empty key before '='", name, line);
				goto fail;
			}
			if (add_entry(ini, &cap, section, key, value, line) < 0)
				goto oom;
		}
	}
	return 0;
oom:
	jf_fail(err, "%s: out of memory", name);
fail:
	jf_ini_free(ini);
	return -1;
}

int jf_ini_load(struct jf_ini *ini, const char *path, struct jf_error *err)
{
	struct jf_mapped_file f;
	int rc;

	memset(ini, 0, sizeof(*ini));
	if (jf_map_file(&f, path, err) < 0)
		return -1;
	rc = jf_ini_parse(ini, path, (const char *)f.data, f.size, err);
	jf_unmap_file(&f);
	return rc;
}

void jf_ini_free(struct jf_ini *ini)
{
	free(ini->entries);
	free(ini->text);
	free(ini->name);
	memset(ini, 0, sizeof(*ini));
}

const struct jf_ini_entry *jf_ini_find(const struct jf_ini *ini, const char *section,
				       const char *key)
{
	size_t i;

	for (i = 0; i < ini->count; i++) {
		const struct jf_ini_entry *e = &ini->entries[i];

		if (e->key && strcasecmp(e->section, section) == 0 &&
		    strcasecmp(e->key, key) == 0)
			return e;
	}
	return NULL;
}

int jf_ini_has_section(const struct jf_ini *ini, const char *section)
{
	size_t i;

	for (i = 0; i < ini->count; i++)
		if (!ini->entries[i].key && strcasecmp(ini->entries[i].section, section) == 0)
			return 1;
	return 0;
}

int jf_ini_u64(const struct jf_ini *ini, const struct jf_ini_entry *e, uint64_t *value,
	       struct jf_error *err)
{
	char *end;
	unsigned long long v;

	if (!*e->value || *e->value == '-')
		return jf_fail(err, "%s:%u: %s: expected a number, found '%s'", ini->name,
			       e->line, e->key, e->value);
	errno = 0;
	v = strtoull(e->value, &end, 0);
	if (errno || *end)
		return jf_fail(err, "%s:%u: %s: expected a number (decimal or 0x-hex), found '%s'",
			       ini->name, e->line, e->key, e->value);
	*value = v;
	return 0;
}
