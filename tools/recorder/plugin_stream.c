/* Reader for the plugin's binary records (see plugin_stream.h). */
#include "plugin_stream.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(struct jf_prec_reader *r, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct jf_prec_reader *r, uint64_t offset, const char *fmt, ...)
{
	char what[192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(r->error, sizeof(r->error), "plugin stream offset %llu: %s",
		 (unsigned long long)offset, what);
	r->failed = 1;
	return -1;
}

int jf_prec_init(struct jf_prec_reader *r, const struct jf_prec_callbacks *cb)
{
	memset(r, 0, sizeof(*r));
	r->cb = *cb;
	r->cap = 1 << 16;
	r->buf = malloc(r->cap);
	return r->buf ? 0 : -1;
}

void jf_prec_free(struct jf_prec_reader *r)
{
	free(r->buf);
	r->buf = NULL;
}

/* A string of len bytes after a fixed part of fixed bytes, in a payload of size bytes:
 * copied with a NUL into out. */
static int string_after(struct jf_prec_reader *r, uint64_t at, const uint8_t *payload,
			size_t size, size_t fixed, uint32_t len, char *out)
{
	if (len >= JF_PREC_MAX_STRING || fixed + len > size)
		return fail(r, at, "string of %u bytes does not fit its %zu-byte record", len, size);
	memcpy(out, payload + fixed, len);
	out[len] = '\0';
	return 0;
}

/* A system call record or its result: the fixed part (fsize bytes, into rec, whose vcpu
 * and string_len fields are given), then its string, into str. */
static int call_record(struct jf_prec_reader *r, uint64_t at, const uint8_t *payload,
		       size_t size, void *rec, size_t fsize, const uint32_t *vcpu,
		       const uint32_t *string_len, char *str)
{
	if (size < fsize)
		return fail(r, at, "system call record of %zu bytes (expected %zu)", size, fsize);
	memcpy(rec, payload, fsize);
	if (*vcpu >= JF_PREC_MAX_VCPUS && *vcpu != JF_PREC_OTHER_PROCESS)
		return fail(r, at, "vCPU %u (at most %u)", *vcpu, JF_PREC_MAX_VCPUS - 1);
	return string_after(r, at, payload, size, fsize, *string_len, str);
}

/* One complete record: payload of size bytes at stream offset at. */
static int dispatch(struct jf_prec_reader *r, uint64_t at, uint32_t type, const uint8_t *payload,
		    size_t size)
{
	char str[JF_PREC_MAX_STRING];

	if (!r->saw_hello && type != JF_PREC_HELLO)
		return fail(r, at, "expected the plugin's hello record first, found type %u", type);
	switch (type) {
	case JF_PREC_HELLO: {
		struct jf_prec_hello h;

		if (size < sizeof(h))
			return fail(r, at, "hello record of %zu bytes (expected %zu)", size, sizeof(h));
		memcpy(&h, payload, sizeof(h));
		if (h.magic != JF_PREC_MAGIC || h.version != JF_PREC_VERSION)
			return fail(r, at, "not a jitflow plugin stream of version %u (magic %#x, "
				    "version %u)", JF_PREC_VERSION, h.magic, h.version);
		r->saw_hello = 1;
		if (r->cb.hello)
			r->cb.hello(r->cb.ctx, &h);
		return 0;
	}
	case JF_PREC_TRANSLATION: {
		struct jf_prec_translation t;

		if (size < sizeof(t))
			return fail(r, at, "translation record of %zu bytes", size);
		memcpy(&t, payload, sizeof(t));
		if (t.nbytes == 0 || t.nbytes > size - sizeof(t))
			return fail(r, at, "translation of %u bytes in a %zu-byte record", t.nbytes,
				    size);
		if (r->cb.translation)
			r->cb.translation(r->cb.ctx, &t, payload + sizeof(t));
		return 0;
	}
	case JF_PREC_EXECS: {
		struct jf_prec_execs e;

		if (size < sizeof(e) || (size - sizeof(e)) % 4)
			return fail(r, at, "executions record of %zu bytes", size);
		memcpy(&e, payload, sizeof(e));
		if (e.vcpu >= JF_PREC_MAX_VCPUS)
			return fail(r, at, "vCPU %u (at most %u)", e.vcpu, JF_PREC_MAX_VCPUS - 1);
		if (r->cb.execs)
			r->cb.execs(r->cb.ctx, e.vcpu, e.tid, (const uint32_t *)(payload + sizeof(e)),
				    (size - sizeof(e)) / 4);
		return 0;
	}
	case JF_PREC_SYSCALL: {
		struct jf_prec_syscall s = { 0 };

		if (call_record(r, at, payload, size, &s, sizeof(s), &s.vcpu, &s.string_len, str))
			return -1;
		if (r->cb.syscall)
			r->cb.syscall(r->cb.ctx, &s, str);
		return 0;
	}
	case JF_PREC_SYSCALL_RET: {
		struct jf_prec_syscall_ret s = { 0 };

		if (call_record(r, at, payload, size, &s, sizeof(s), &s.vcpu, &s.string_len, str))
			return -1;
		if (s.vcpu == JF_PREC_OTHER_PROCESS)
			return fail(r, at, "a result from another process");
		if (r->cb.syscall_ret)
			r->cb.syscall_ret(r->cb.ctx, &s, str);
		return 0;
	}
	default:
		return fail(r, at, "unknown record type %u", type);
	}
}

/* Moves bytes from (*data, *size) into r->buf until it holds `upto` bytes; returns
 * whether it does. */
static int fill(struct jf_prec_reader *r, const uint8_t **data, size_t *size, size_t upto)
{
	size_t take = upto - r->have;

	if (take > *size)
		take = *size;
	memcpy(r->buf + r->have, *data, take);
	r->have += take;
	*data += take;
	*size -= take;
	return r->have == upto;
}

int jf_prec_feed(struct jf_prec_reader *r, const uint8_t *data, size_t size)
{
	if (r->failed)
		return -1;
	while (size) {
		struct jf_prec_head head;
		size_t total;

		/* The head first, then the payload, in r->buf. */
		if (r->have < sizeof(head) && !fill(r, &data, &size, sizeof(head)))
			return 0;
		memcpy(&head, r->buf, sizeof(head));
		if (head.size > JF_PREC_MAX_PAYLOAD || head.size % 4)
			return fail(r, r->offset, "record of type %u claims %u bytes (at most %u, a "
				    "multiple of 4)", head.type, head.size, JF_PREC_MAX_PAYLOAD);
		total = sizeof(head) + head.size;
		if (total > r->cap) {
			uint8_t *n = realloc(r->buf, total);

			if (!n)
				return fail(r, r->offset, "out of memory for a %zu-byte record", total);
			r->buf = n;
			r->cap = total;
		}
		if (!fill(r, &data, &size, total))
			return 0;
		if (dispatch(r, r->offset, head.type, r->buf + sizeof(head), head.size))
			return -1;
		r->records++;
		r->offset += total;
		r->have = 0;
	}
	return 0;
}

int jf_prec_finish(struct jf_prec_reader *r)
{
	if (r->failed)
		return -1;
	if (r->have)
		return fail(r, r->offset, "the stream ends inside a record (%zu bytes of it)",
			    r->have);
	return 0;
}
