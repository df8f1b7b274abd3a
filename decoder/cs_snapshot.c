/* Reading the .ini files of an ARM "Trace and Debug Snapshot": device identity, trace
 * source registers, trace.ini's buffer list, and memory dumps. Every error names the
 * .ini file and line (or the missing key) and what was expected. */
#include "cs_snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

static const char *required(const struct jf_ini *ini, const char *section, const char *key,
			    struct jf_error *err)
{
	const struct jf_ini_entry *e;

	if (!jf_ini_has_section(ini, section)) {
		jf_fail(err, "%s: no [%s] section; expected one with %s=", ini->name, section, key);
		return NULL;
	}
	e = jf_ini_find(ini, section, key);
	if (!e) {
		jf_fail(err, "%s: [%s] has no %s=", ini->name, section, key);
		return NULL;
	}
	if (!*e->value) {
		jf_fail(err, "%s:%u: %s= is empty", ini->name, e->line, key);
		return NULL;
	}
	return e->value;
}

int jf_cs_device_parse(const struct jf_ini *ini, struct jf_cs_device *dev,
		       struct jf_error *err)
{
	memset(dev, 0, sizeof(*dev));
	dev->name = required(ini, "device", "name", err);
	if (!dev->name)
		return -1;
	dev->line = jf_ini_find(ini, "device", "name")->line;
	dev->cls = required(ini, "device", "class", err);
	if (!dev->cls)
		return -1;
	dev->type = required(ini, "device", "type", err);
	if (!dev->type)
		return -1;
	if (strlen(dev->name) >= JF_CS_NAME_MAX || strlen(dev->type) >= JF_CS_NAME_MAX)
		return jf_fail(err, "%s:%u: device name or type longer than %d characters",
			       ini->name, dev->line, JF_CS_NAME_MAX - 1);
	return 0;
}

/* Registers are written "NAME=value", "NAME(0x004)=value" or "NAME(id:0x4)=value". */
static const struct jf_ini_entry *find_reg(const struct jf_ini *ini, const char *reg)
{
	size_t len = strlen(reg), i;

	for (i = 0; i < ini->count; i++) {
		const struct jf_ini_entry *e = &ini->entries[i];

		if (!e->key || strcasecmp(e->section, "regs") != 0)
			continue;
		if (strncasecmp(e->key, reg, len) == 0 &&
		    (e->key[len] == 0 || e->key[len] == '(' || e->key[len] == ' '))
			return e;
	}
	return NULL;
}

struct reg_want {
	const char *name;
	uint32_t *value;
	int required;
	uint32_t fallback; /* when optional and absent */
};

static int read_regs(const struct jf_ini *ini, const struct jf_cs_device *dev,
		     const struct reg_want *want, size_t n, struct jf_error *err)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct jf_ini_entry *e = find_reg(ini, want[i].name);
		uint64_t v;

		if (!e) {
			if (want[i].required)
				return jf_fail(err, "%s: %s (%s) has no register %s in [regs]",
					       ini->name, dev->name, dev->type, want[i].name);
			*want[i].value = want[i].fallback;
			continue;
		}
		if (jf_ini_u64(ini, e, &v, err) < 0)
			return -1;
		if (v > UINT32_MAX)
			return jf_fail(err, "%s:%u: %s=0x%llx does not fit a 32-bit register",
				       ini->name, e->line, want[i].name, (unsigned long long)v);
		*want[i].value = (uint32_t)v;
	}
	return 0;
}

/* The protocol from the device type, which may carry a version: "ETM4.1", "ETMv3.5". */
static int protocol_of(const char *type)
{
	if (strncasecmp(type, "ETMv4", 5) == 0 || strncasecmp(type, "ETM4", 4) == 0)
		return JF_CS_PROTO_ETMV4I;
	if (strncasecmp(type, "ETE", 3) == 0)
		return JF_CS_PROTO_ETE;
	if (strncasecmp(type, "ETMv3", 5) == 0 || strncasecmp(type, "ETM3", 4) == 0)
		return JF_CS_PROTO_ETMV3;
	if (strncasecmp(type, "PTM", 3) == 0 || strncasecmp(type, "PFT", 3) == 0)
		return JF_CS_PROTO_PTM;
	if (strncasecmp(type, "STM", 3) == 0)
		return JF_CS_PROTO_STM;
	if (strncasecmp(type, "ITM", 3) == 0)
		return JF_CS_PROTO_ITM;
	return JF_CS_PROTO_UNKNOWN;
}

int jf_cs_source_parse(const struct jf_ini *ini, const struct jf_cs_device *dev,
		       struct jf_cs_source *src, struct jf_error *err)
{
	memset(src, 0, sizeof(*src));
	snprintf(src->name, sizeof(src->name), "%s", dev->name);
	src->protocol = (uint8_t)protocol_of(dev->type);
	switch (src->protocol) {
	case JF_CS_PROTO_ETMV4I:
	case JF_CS_PROTO_ETE: {
		/* TRCIDR1 defaults to an ETMv4.0 implementation's value, as OpenCSD's own
		 * snapshot reader does; the other ID registers describe optional features. */
		const struct reg_want want[] = {
			{ "TRCCONFIGR", &src->trcconfigr, 1, 0 },
			{ "TRCTRACEIDR", &src->trctraceidr, 1, 0 },
			{ "TRCIDR0", &src->trcidr[0], 1, 0 },
			{ "TRCIDR1", &src->trcidr[1], 0, 0x4100F403 },
			{ "TRCIDR2", &src->trcidr[2], 1, 0 },
			{ "TRCIDR8", &src->trcidr[8], 0, 0 },
			{ "TRCIDR9", &src->trcidr[9], 0, 0 },
			{ "TRCIDR10", &src->trcidr[10], 0, 0 },
			{ "TRCIDR11", &src->trcidr[11], 0, 0 },
			{ "TRCIDR12", &src->trcidr[12], 0, 0 },
			{ "TRCIDR13", &src->trcidr[13], 0, 0 },
			{ "TRCDEVARCH", &src->trcdevarch, src->protocol == JF_CS_PROTO_ETE, 0 },
		};
		return read_regs(ini, dev, want, sizeof(want) / sizeof(want[0]), err);
	}
	case JF_CS_PROTO_ETMV3:
	case JF_CS_PROTO_PTM: {
		const struct reg_want want[] = {
			{ "ETMCR", &src->etmcr, 1, 0 },
			{ "ETMIDR", &src->etmidr, 1, 0 },
			{ "ETMCCER", &src->etmccer, 1, 0 },
			{ "ETMTRACEIDR", &src->etmtraceidr, 1, 0 },
		};
		return read_regs(ini, dev, want, sizeof(want) / sizeof(want[0]), err);
	}
	case JF_CS_PROTO_STM: {
		const struct reg_want want[] = { { "STMTCSR", &src->stmtcsr, 0, 0 } };
		return read_regs(ini, dev, want, 1, err);
	}
	case JF_CS_PROTO_ITM: {
		const struct reg_want want[] = { { "ITMTCR", &src->itmtcr, 0, 0 } };
		return read_regs(ini, dev, want, 1, err);
	}
	default:
		return 0; /* reported as not decoded when its buffer is decoded */
	}
}

static const char *entry_or_null(const struct jf_ini *ini, const char *section,
				 const char *key)
{
	const struct jf_ini_entry *e = jf_ini_find(ini, section, key);

	return e ? e->value : NULL;
}

int jf_cs_trace_parse(const struct jf_ini *ini, struct jf_cs_trace_layout *layout,
		      struct jf_error *err)
{
	const struct jf_ini_entry *list;
	char *p, *save = NULL, *tok;
	size_t cap = 0;

	memset(layout, 0, sizeof(*layout));
	if (!required(ini, "trace_buffers", "buffers", err))
		return -1;
	list = jf_ini_find(ini, "trace_buffers", "buffers");
	layout->list = strdup(list->value);
	if (!layout->list)
		return jf_fail(err, "out of memory");
	for (p = layout->list; (tok = strtok_r(p, ", \t", &save)); p = NULL) {
		struct jf_cs_trace_buffer *b;
		const char *format;

		if (!jf_ini_has_section(ini, tok)) {
			jf_fail(err, "%s:%u: buffer '%s' is listed but there is no [%s] section",
				ini->name, list->line, tok, tok);
			goto fail;
		}
		if (layout->nbuffers == cap) {
			size_t ncap = cap ? cap * 2 : 4;
			struct jf_cs_trace_buffer *nb = realloc(layout->buffers, ncap * sizeof(*nb));

			if (!nb) {
				jf_fail(err, "out of memory");
				goto fail;
			}
			layout->buffers = nb;
			cap = ncap;
		}
		b = &layout->buffers[layout->nbuffers];
		memset(b, 0, sizeof(*b));
		b->id = tok;
		b->name = required(ini, tok, "name", err);
		if (!b->name)
			goto fail;
		b->file = required(ini, tok, "file", err);
		if (!b->file)
			goto fail;
		format = entry_or_null(ini, tok, "format");
		if (!format || strcasecmp(format, "coresight") == 0) {
			b->formatted = 1;
			b->frames = JF_CS_FRAMES_ALIGNED;
		} else if (strcasecmp(format, "dstream_coresight") == 0) {
			b->formatted = 1;
			b->frames = JF_CS_FRAMES_FSYNCS;
		} else if (strcasecmp(format, "source_data") == 0) {
			b->formatted = 0;
		} else {
			jf_fail(err, "%s:%u: format=%s: expected coresight, dstream_coresight or "
				"source_data", ini->name, jf_ini_find(ini, tok, "format")->line,
				format);
			goto fail;
		}
		layout->nbuffers++;
	}
	if (!layout->nbuffers) {
		jf_fail(err, "%s:%u: buffers= lists no buffer", ini->name, list->line);
		goto fail;
	}
	return 0;
fail:
	jf_cs_trace_free(layout);
	return -1;
}

void jf_cs_trace_free(struct jf_cs_trace_layout *layout)
{
	free(layout->buffers);
	free(layout->list);
	memset(layout, 0, sizeof(*layout));
}

static int join(char *out, size_t size, const char *dir, const char *file)
{
	int n = file[0] == '/' ? snprintf(out, size, "%s", file)
			       : snprintf(out, size, "%s/%s", dir, file);

	return n < 0 || (size_t)n >= size ? -1 : 0;
}

int jf_cs_dumps_load(const struct jf_ini *ini, const char *dir, struct jf_codemap *map,
		     struct jf_error *err)
{
	size_t i;

	for (i = 0; i < ini->count; i++) {
		const struct jf_ini_entry *h = &ini->entries[i];
		const struct jf_ini_entry *file, *addr, *len, *off;
		uint64_t address, length, offset = 0;
		char path[4096];
		struct stat st;

		if (h->key || strncasecmp(h->section, "dump", 4) != 0)
			continue;
		file = jf_ini_find(ini, h->section, "file");
		addr = jf_ini_find(ini, h->section, "address");
		if (!file || !*file->value)
			return jf_fail(err, "%s:%u: [%s] has no file=; expected the dump's file name",
				       ini->name, h->line, h->section);
		if (!addr)
			return jf_fail(err, "%s:%u: [%s] has no address=; expected its load address",
				       ini->name, h->line, h->section);
		if (jf_ini_u64(ini, addr, &address, err) < 0)
			return -1;
		off = jf_ini_find(ini, h->section, "offset");
		if (off && jf_ini_u64(ini, off, &offset, err) < 0)
			return -1;
		if (join(path, sizeof(path), dir, file->value) < 0)
			return jf_fail(err, "%s:%u: file name too long", ini->name, file->line);
		len = jf_ini_find(ini, h->section, "length");
		if (len) {
			if (jf_ini_u64(ini, len, &length, err) < 0)
				return -1;
		} else {
			if (stat(path, &st) < 0)
				return jf_fail(err, "%s:%u: dump file %s cannot be read", ini->name,
					       file->line, path);
			if ((uint64_t)st.st_size <= offset)
				return jf_fail(err, "%s:%u: dump file %s has no bytes after offset "
					       "0x%llx", ini->name, file->line, path,
					       (unsigned long long)offset);
			length = (uint64_t)st.st_size - offset;
		}
		if (jf_codemap_add_file(map, path, offset, length, address, NULL, err) < 0)
			return jf_fail_prefix(err, "%s:%u: [%s]: ", ini->name, h->line, h->section);
	}
	return 0;
}
