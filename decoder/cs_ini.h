/* A small reader for the ".ini" files of ARM's "Trace and Debug Snapshot" format:
 * [section] headers, key=value lines, ';' or '#' comments. Keys and section names compare
 * case-insensitively (snapshot writers differ in case). Every entry remembers its line so
 * that errors can say exactly where a value is wrong. */
#ifndef JITFLOW_CS_INI_H
#define JITFLOW_CS_INI_H

#include <stddef.h>
#include <stdint.h>

#include "jitflow/error.h"

/* Snapshot .ini files are a few KiB; anything far larger is not one. */
enum { JF_INI_MAX_BYTES = 4 << 20 };

struct jf_ini_entry {
	const char *section; /* as written, without brackets */
	const char *key;     /* NULL for a section header line */
	const char *value;
	unsigned line;
};

struct jf_ini {
	char *name;              /* file name used in messages */
	struct jf_ini_entry *entries; /* in file order, section headers included */
	size_t count;
	char *text;              /* owns all strings */
};

/* Parse text (need not be NUL-terminated). name appears in error messages. */
int jf_ini_parse(struct jf_ini *ini, const char *name, const char *text, size_t size,
		 struct jf_error *err);
int jf_ini_load(struct jf_ini *ini, const char *path, struct jf_error *err);
void jf_ini_free(struct jf_ini *ini);

/* The first entry of key in section (NULL if absent). */
const struct jf_ini_entry *jf_ini_find(const struct jf_ini *ini, const char *section,
				       const char *key);
/* Whether a [section] header exists. */
int jf_ini_has_section(const struct jf_ini *ini, const char *section);

/* Parse an unsigned number (decimal or 0x-hex) of entry e; errors name file and line. */
int jf_ini_u64(const struct jf_ini *ini, const struct jf_ini_entry *e, uint64_t *value,
	       struct jf_error *err);

#endif
