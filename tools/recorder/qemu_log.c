/* Parser for QEMU's -d in_asm,exec,nochain,strace log (format described in qemu_log.h). */
#include "qemu_log.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum { LINE_MAX_KEPT = 4096 }; /* longer lines (huge strace arguments) are cut */

static const char STOPPED[] = "Stopped execution of TB chain before ";

/* Hex digit values, -1 for anything else: the exec lines are most of the log, and this is
 * the hottest loop of the recorder. */
static signed char hex_table[256];

static void init_hex_table(void)
{
	int c;

	if (hex_table['0'] == 0 && hex_table['1'] == 1)
		return;
	for (c = 0; c < 256; c++)
		hex_table[c] = -1;
	for (c = 0; c < 10; c++)
		hex_table['0' + c] = (signed char)c;
	for (c = 0; c < 6; c++) {
		hex_table['a' + c] = (signed char)(10 + c);
		hex_table['A' + c] = (signed char)(10 + c);
	}
}

static int hexval(int c)
{
	return hex_table[c & 0xff];
}

void jf_qlog_init(struct jf_qlog_parser *p, const struct jf_qlog_callbacks *cb)
{
	memset(p, 0, sizeof(*p));
	p->cb = *cb;
	init_hex_table();
}


/* Parse hex digits at *s (no prefix); returns the number of digits read. */
static int parse_hex(const char **s, uint64_t *value)
{
	const char *q = *s;
	uint64_t v = 0;
	int n = 0, d;

	while ((d = hexval((unsigned char)*q)) >= 0 && n < 16) {
		v = (v << 4) | (uint64_t)d;
		q++;
		n++;
	}
	if (hexval((unsigned char)*q) >= 0)
		return 0; /* more than 64 bits */
	*s = q;
	*value = v;
	return n;
}

static void garbage(struct jf_qlog_parser *p, const char *line)
{
	p->garbage_lines++;
	if (p->cb.garbage)
		p->cb.garbage(p->cb.ctx, line);
}

static void end_translation(struct jf_qlog_parser *p)
{
	if (p->in_translation && p->tb_size && p->cb.translation)
		p->cb.translation(p->cb.ctx, p->tb_pc, p->tb_bytes, p->tb_size);
	p->in_translation = 0;
	p->tb_size = 0;
}

/* "0x004014f0:  31 ed                    xorl ..." inside a translation. */
static void translation_line(struct jf_qlog_parser *p, const char *line)
{
	const char *s = line + 2;
	uint64_t addr;

	if (!parse_hex(&s, &addr) || s[0] != ':') {
		garbage(p, line);
		return;
	}
	s++;
	if (p->tb_size == 0) {
		p->tb_pc = addr;
		p->tb_next = addr;
	} else if (addr != p->tb_next) {
		/* Not contiguous with what came before: keep what we have, drop the rest. */
		garbage(p, line);
		return;
	}
	/* Two spaces, then bytes "hh" separated by one space; two spaces end the column. */
	if (s[0] != ' ' || s[1] != ' ') {
		garbage(p, line);
		return;
	}
	s += 2;
	for (;;) {
		int hi = hexval((unsigned char)s[0]), lo = hi < 0 ? -1 : hexval((unsigned char)s[1]);

		if (hi < 0 || lo < 0 || (s[2] != ' ' && s[2] != '\0'))
			break;
		if (p->tb_size >= sizeof(p->tb_bytes)) {
			garbage(p, line);
			return;
		}
		p->tb_bytes[p->tb_size++] = (uint8_t)(hi << 4 | lo);
		p->tb_next++;
		s += 2;
		if (s[0] != ' ' || s[1] == ' ')
			break;
		s++;
	}
}

/* "Trace 0: 0x7fde00000100 [0000000000000000/00000000004014f0/1040c0b3/00000200] sym" */
static int parse_exec(const char *s, struct jf_qlog_exec *e)
{
	uint64_t cs_base, pc, flags, cflags, host;
	char *end;
	unsigned long cpu;

	s += strlen("Trace ");
	cpu = strtoul(s, &end, 10);
	if (end == s || end[0] != ':' || end[1] != ' ' || cpu > 1u << 20)
		return -1;
	s = end + 2;
	if (s[0] == '0' && s[1] == 'x')
		s += 2;
	if (!parse_hex(&s, &host) || s[0] != ' ' || s[1] != '[')
		return -1;
	s += 2;
	if (!parse_hex(&s, &cs_base) || *s++ != '/' || !parse_hex(&s, &pc) || *s++ != '/' ||
	    !parse_hex(&s, &flags) || *s++ != '/' || !parse_hex(&s, &cflags) || *s != ']')
		return -1;
	e->cpu = (unsigned)cpu;
	e->pc = pc;
	e->flags = (uint32_t)flags;
	e->cflags = (uint32_t)cflags;
	return 0;
}

static int exec_record(struct jf_qlog_parser *p, const char *s)
{
	struct jf_qlog_exec e;

	if (parse_exec(s, &e))
		return -1;
	if (p->cb.exec)
		p->cb.exec(p->cb.ctx, &e);
	return 0;
}

/* "Stopped execution of TB chain before 0x7fcfb804d4c0 [0000000000460c92] clone" */
static int parse_stopped(const char *s, uint64_t *pc)
{
	uint64_t host;

	s += strlen(STOPPED);
	if (s[0] == '0' && s[1] == 'x')
		s += 2;
	if (!parse_hex(&s, &host) || s[0] != ' ' || s[1] != '[')
		return -1;
	s += 2;
	if (!parse_hex(&s, pc) || *s != ']')
		return -1;
	return 0;
}

static int stopped_record(struct jf_qlog_parser *p, const char *s)
{
	uint64_t pc;

	if (parse_stopped(s, &pc))
		return -1;
	if (p->cb.stopped)
		p->cb.stopped(p->cb.ctx, pc);
	return 0;
}

/* The ')' that closes the '(' at s, skipping quoted strings; NULL if the line ends first
 * (the result then comes on a later line). */
static char *matching_paren(char *s)
{
	int depth = 0, quoted = 0;

	for (; *s; s++) {
		if (quoted) {
			if (*s == '\\' && s[1])
				s++;
			else if (*s == '"')
				quoted = 0;
		} else if (*s == '"') {
			quoted = 1;
		} else if (*s == '(') {
			depth++;
		} else if (*s == ')' && --depth == 0) {
			return s;
		}
	}
	return NULL;
}

/* "1234 name(args) = result", or the beginning of one whose result comes later. */
static int syscall_record(struct jf_qlog_parser *p, char *s)
{
	char *name, *open, *close, *eq;

	while (isdigit((unsigned char)*s))
		s++;
	if (*s != ' ')
		return -1;
	name = ++s;
	while (isalnum((unsigned char)*s) || *s == '_')
		s++;
	if (s == name)
		return -1;
	if (*s != '(') {
		/* "1234 Unknown syscall 334" and the like: a system call all the same. */
		if (p->cb.syscall)
			p->cb.syscall(p->cb.ctx, "unknown", name);
		return 0;
	}
	open = s;
	close = matching_paren(open);
	eq = close ? strstr(close, " = ") : NULL;
	*open = '\0';
	if (close)
		*close = '\0';
	if (p->cb.syscall)
		p->cb.syscall(p->cb.ctx, name, open + 1);
	if (eq && p->cb.syscall_result)
		p->cb.syscall_result(p->cb.ctx, eq + 3);
	return 0;
}

/* Exactly n hex digits at s (within len); returns 0 and the value, or -1. */
static int fixed_hex(const char *s, size_t n, uint64_t *value)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		int d = hexval((unsigned char)s[i]);

		if (d < 0)
			return -1;
		v = (v << 4) | (uint64_t)d;
	}
	*value = v;
	return 0;
}

/* The common exec line, parsed in place (no copy, no NUL needed):
 * "Trace 0: 0x7fde00000100 [0000000000000000/00000000004014f0/1040c0b3/00000200] sym".
 * Returns 0 when it was one; -1 sends the line down the general path. */
static int fast_exec(struct jf_qlog_parser *p, const char *s, size_t len)
{
	enum { FIELDS = 16 + 1 + 16 + 1 + 8 + 1 + 8 + 1 }; /* "cs/pc/flags/cflags]" */
	const char *end = s + len, *q = s + 6, *b;
	struct jf_qlog_exec e;
	uint64_t cs_base, pc, flags, cflags;
	unsigned cpu = 0;

	if (q >= end || *q < '0' || *q > '9')
		return -1;
	while (q < end && *q >= '0' && *q <= '9' && cpu < (1u << 20))
		cpu = cpu * 10 + (unsigned)(*q++ - '0');
	if (end - q < 3 || q[0] != ':' || q[1] != ' ')
		return -1;
	b = memchr(q, '[', (size_t)(end - q));
	if (!b || end - b < 1 + FIELDS)
		return -1;
	b++;
	if (b[16] != '/' || b[33] != '/' || b[42] != '/' || b[51] != ']' ||
	    fixed_hex(b, 16, &cs_base) || fixed_hex(b + 17, 16, &pc) || fixed_hex(b + 34, 8, &flags) ||
	    fixed_hex(b + 43, 8, &cflags))
		return -1;
	e.cpu = cpu;
	e.pc = pc;
	e.flags = (uint32_t)flags;
	e.cflags = (uint32_t)cflags;
	p->lines++;
	if (p->cb.exec)
		p->cb.exec(p->cb.ctx, &e);
	return 0;
}

/* What is left of a line that is not a whole exec or translation record: a signal, a
 * system call's result, a system call (whole or its beginning), or nothing (the line was
 * only glued records). */
static void fragment(struct jf_qlog_parser *p, char *line)
{
	if (!strncmp(line, "--- SIG", 7)) {
		char *sp = strchr(line + 4, ' ');

		if (sp)
			*sp = '\0';
		if (p->cb.signal)
			p->cb.signal(p->cb.ctx, line + 4);
		return;
	}
	if (!strncmp(line, " = ", 3)) {
		if (p->cb.syscall_result)
			p->cb.syscall_result(p->cb.ctx, line + 3);
		return;
	}
	if (isdigit((unsigned char)line[0]) && !syscall_record(p, line))
		return;
	if (line[0] == '\0')
		return;
	garbage(p, line);
}

void jf_qlog_line(struct jf_qlog_parser *p, const char *text, size_t len)
{
	char line[LINE_MAX_KEPT + 1];
	char *trace, *stopped;
	struct jf_qlog_exec glued_exec;
	uint64_t stopped_pc = 0;

	if (!p->in_translation && len > 6 && !memcmp(text, "Trace ", 6) &&
	    fast_exec(p, text, len) == 0)
		return;

	if (len > LINE_MAX_KEPT)
		len = LINE_MAX_KEPT;
	memcpy(line, text, len);
	line[len] = '\0';
	p->lines++;

	if (p->in_translation) {
		if (len == 0) {
			end_translation(p);
			return;
		}
		if (line[0] == '0' && line[1] == 'x') {
			translation_line(p, line);
			return;
		}
		/* Anything else ends the translation (it should not happen, but be safe). */
		end_translation(p);
	}
	if (len == 0)
		return;
	if (!strncmp(line, "IN:", 3)) {
		p->in_translation = 1;
		p->tb_size = 0;
		return;
	}
	if (!strncmp(line, "----------------", 16))
		return; /* separator before each translation */
	if (!strncmp(line, "Trace ", 6)) {
		if (exec_record(p, line))
			garbage(p, line);
		return;
	}
	if (!strncmp(line, STOPPED, sizeof(STOPPED) - 1)) {
		if (stopped_record(p, line))
			garbage(p, line);
		return;
	}
	/* A strace fragment may have another thread's exec records glued to its end (QEMU
	 * writes a system call's name and arguments before the call and its result after).
	 * They were written after the fragment, so they are delivered after it: a thread's
	 * first block glued to the clone that made it must not come before that clone. */
	stopped = strstr(line, STOPPED);
	if (stopped && (stopped == line || parse_stopped(stopped, &stopped_pc)))
		stopped = NULL;
	trace = strstr(line, "Trace ");
	if (trace && (trace == line || parse_exec(trace, &glued_exec)))
		trace = NULL;
	if (stopped)
		*stopped = '\0';
	if (trace)
		*trace = '\0';
	fragment(p, line);
	if (stopped && (!trace || stopped < trace) && p->cb.stopped)
		p->cb.stopped(p->cb.ctx, stopped_pc);
	if (trace && p->cb.exec)
		p->cb.exec(p->cb.ctx, &glued_exec);
	if (stopped && trace && trace < stopped && p->cb.stopped)
		p->cb.stopped(p->cb.ctx, stopped_pc);
}

void jf_qlog_finish(struct jf_qlog_parser *p)
{
	end_translation(p);
}
