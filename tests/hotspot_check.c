/* LogCompilation (-XX:+LogCompilation) against the agent's zone records (hotspot_check.h).
 * LogCompilation writes one <nmethod .../> element per installed nmethod, with its compile
 * id, level, compile_kind ('osr' for an OSR compilation, 'c2n' for a native wrapper), the
 * blob's address and size and each section's offset from the address (a section of size 0
 * is not listed). The instructions begin at insts_offset and, with the stubs after them,
 * end where the next listed section begins (or at size). */
#include "hotspot_check.h"
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_NMETHODS 4096

struct nmethod {
	long compile_id, level, osr, native;
	unsigned long long addr, size;
	int seen;
	int at_exit; /* installed once the VM was shutting down (its stamp at destroy_vm's) */
};

static unsigned long long number(const char *el, const char *name, int hex)
{
	char v[64];

	if (jf_test_log_attribute(el, name, v, sizeof(v)) < 0)
		fail_msg("LogCompilation: an <nmethod> without %s", name);
	return strtoull(v, NULL, hex ? 16 : 10);
}

/* Where the instructions and stubs end: the smallest listed offset past insts_offset
 * other than stub_offset, or the blob's size. */
static unsigned long long code_end(const char *el, const char *end, unsigned long long insts,
				   unsigned long long size)
{
	unsigned long long best = size;
	const char *p = el;

	while ((p = strstr(p, "_offset='")) && p < end) {
		const char *name = p;

		while (name > el && name[-1] != ' ')
			name--;
		if (strncmp(name, "stub_offset", 11)) {
			unsigned long long v = strtoull(p + 9, NULL, 10);

			if (v > insts && v < best)
				best = v;
		}
		p += 9;
	}
	return best;
}

static size_t read_log(const char *path, struct nmethod *out)
{
	char *text = jf_test_read_file(path, NULL), *el = text, v[32];
	const char *exit_el = strstr(text, "<destroy_vm ");
	double exit_stamp = -1;
	size_t n = 0;

	if (exit_el && jf_test_log_attribute(exit_el, "stamp", v, sizeof(v)) == 0)
		exit_stamp = strtod(v, NULL);

	while ((el = strstr(el, "<nmethod "))) {
		char *end = strstr(el, "/>");
		struct nmethod *m = &out[n];
		unsigned long long insts;

		if (!end)
			fail_msg("%s: an unterminated <nmethod>", path);
		assert_true(n < MAX_NMETHODS);
		memset(m, 0, sizeof(*m));
		m->compile_id = (long)number(el, "compile_id", 0);
		m->level = (long)number(el, "level", 0);
		insts = number(el, "insts_offset", 0);
		m->addr = number(el, "address", 1) + insts;
		m->size = code_end(el, end, insts, number(el, "size", 0)) - insts;
		m->at_exit = exit_stamp >= 0 && jf_test_log_attribute(el, "stamp", v, sizeof(v)) == 0 &&
			     strtod(v, NULL) >= exit_stamp;
		if (jf_test_log_attribute(el, "compile_kind", v, sizeof(v)) == 0) {
			m->osr = !strcmp(v, "osr");
			m->native = !strcmp(v, "c2n");
		}
		n++;
		el = end;
	}
	free(text);
	return n;
}

static struct nmethod *find(struct nmethod *v, size_t n, long compile_id)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (v[i].compile_id == compile_id)
			return &v[i];
	}
	return NULL;
}

/* One REGION_LOAD of kind "function" from `jitflow zone dump`: trace= is the compile id,
 * the name "nmethod ID LLEVEL[ osr@BCI] METHOD". */
static void check_region(const char *line, struct nmethod *v, size_t n, const char *zone_path)
{
	unsigned long long addr, size;
	long trace, id, level;
	const char *p;
	struct nmethod *m;

	p = strstr(line, " addr=0x");
	if (!p || sscanf(p, " addr=0x%llx size=%llu", &addr, &size) != 2 ||
	    !(p = strstr(line, " trace=")) || sscanf(p, " trace=%ld", &trace) != 1 ||
	    !(p = strstr(line, "name=\"nmethod ")) || sscanf(p, "name=\"nmethod %ld L%ld", &id,
							      &level) != 2)
		fail_msg("%s: an nmethod region without its compile id and level: %s", zone_path,
			 line);
	m = find(v, n, trace);
	if (!m)
		fail_msg("%s: nmethod %ld is not in LogCompilation: %s", zone_path, trace, line);
	if (m->seen++)
		fail_msg("%s: nmethod %ld loaded twice", zone_path, trace);
	if (id != trace || m->addr != addr || m->size != size || m->level != level ||
	    m->osr != (strstr(line, " osr@") != NULL))
		fail_msg("%s: nmethod %ld at 0x%llx, %llu bytes, level %ld%s; LogCompilation: "
			 "0x%llx, %llu bytes, level %ld%s", zone_path, trace, addr, size, level,
			 strstr(line, " osr@") ? " osr" : "", m->addr, m->size, m->level,
			 m->osr ? " osr" : "");
}

int jf_test_hotspot_nmethods_match(const char *zone_path, const char *log_path, int *osr,
				   int *native)
{
	static struct nmethod v[MAX_NMETHODS];
	char cmd[4096], *out, *line, *save = NULL;
	size_t n = read_log(log_path, v), i, late = 0;

	snprintf(cmd, sizeof(cmd), "'%s' zone dump '%s'", jf_test_cli(), zone_path);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, "REGION_LOAD") && strstr(line, "kind=\"function\""))
			check_region(line, v, n, zone_path);
	}
	free(out);
	*osr = *native = 0;
	for (i = 0; i < n; i++) {
		/* JVMTI posts no event once the VM is shutting down (the agent's last is
		 * VMDeath): an nmethod a compiler thread installs then can have no record. */
		if (!v[i].seen && v[i].at_exit) {
			fprintf(stderr, "%s: LogCompilation's nmethod %ld was installed at the VM's "
				"exit (stamp at <destroy_vm>), after the agent's last event: no region "
				"expected\n", zone_path, v[i].compile_id);
			late++;
			continue;
		}
		if (!v[i].seen)
			fail_msg("%s: LogCompilation's nmethod %ld (0x%llx) has no region", zone_path,
				 v[i].compile_id, v[i].addr);
		*osr += (int)v[i].osr;
		*native += (int)v[i].native;
	}
	return (int)(n - late);
}

/* XML's escapes in place ("&lt;init&gt;" -> "<init>"). */
static void unescape(char *s)
{
	static const char *const from[] = { "&lt;", "&gt;", "&amp;", "&apos;", "&quot;" };
	static const char to[] = "<>&'\"";
	char *w = s;
	size_t i;

	while (*s) {
		for (i = 0; i < sizeof(from) / sizeof(from[0]); i++)
			if (!strncmp(s, from[i], strlen(from[i])))
				break;
		if (i < sizeof(from) / sizeof(from[0])) {
			*w++ = to[i];
			s += strlen(from[i]);
		} else {
			*w++ = *s++;
		}
	}
	*w = '\0';
}

int jf_test_log_attribute(const char *el, const char *attr, char *out, size_t size)
{
	char key[64];
	const char *end = strchr(el, '>'), *at, *q;

	snprintf(key, sizeof(key), " %s='", attr);
	at = strstr(el, key);
	if (!end || !at || at > end)
		return -1;
	at += strlen(key);
	q = strchr(at, '\'');
	if (!q || (size_t)(q - at) >= size)
		return -1;
	memcpy(out, at, (size_t)(q - at));
	out[q - at] = '\0';
	unescape(out);
	return 0;
}

int jf_test_hotspot_agent_built(void)
{
	char agent[1024];

	snprintf(agent, sizeof(agent), "%s/tools/runtimes/hotspot/libjitflow-jvmti.so",
		 jf_test_binary_dir());
	if (access(agent, R_OK) == 0)
		return 1;
	fprintf(stderr, "%s is not built: no JDK was found (tools/setup.sh --tests installs "
		"openjdk-17-jdk-headless)\n", agent);
	return 0;
}
