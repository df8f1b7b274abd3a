/* libFuzzer target for the plugin stream reader: arbitrary bytes, fed in pieces of varying
 * size, must never crash, hang, read out of bounds or allocate without bound; the callbacks
 * touch every byte they are given so that sanitizers see bad lengths. */
#include <stddef.h>
#include <stdint.h>

#include "plugin_feed.h"
#include "plugin_stream.h"

static unsigned sink;

static void on_translation(void *ctx, const struct jf_prec_translation *t,
			   const uint8_t *bytes)
{
	size_t i;

	(void)ctx;
	sink += t->id + (unsigned)t->pc + t->ninsns;
	for (i = 0; i < t->nbytes; i++)
		sink += bytes[i];
}

static void on_execs(void *ctx, unsigned vcpu, int tid, const uint32_t *ids, size_t n)
{
	size_t i;

	(void)ctx;
	sink += vcpu + (unsigned)tid;
	for (i = 0; i < n; i++)
		sink += ids[i];
}

static void on_syscall(void *ctx, const struct jf_prec_syscall *s, const char *string)
{
	(void)ctx;
	sink += (unsigned)s->num;
	while (*string)
		sink += (unsigned char)*string++;
}

static void on_syscall_ret(void *ctx, const struct jf_prec_syscall_ret *r, const char *string)
{
	(void)ctx;
	sink += (unsigned)r->ret;
	while (*string)
		sink += (unsigned char)*string++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jf_prec_callbacks cb = { .translation = on_translation, .execs = on_execs,
					.syscall = on_syscall, .syscall_ret = on_syscall_ret };
	struct jf_prec_reader r;

	if (jf_prec_init(&r, &cb))
		return 0;
	fuzz_plugin_feed(&r, data, size);
	jf_prec_free(&r);
	return 0;
}
