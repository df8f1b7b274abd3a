/* libFuzzer target for the AArch64 recorder's state (etm_flow.c) behind the plugin stream
 * reader: arbitrary records (translations of any bytes, executions of any ids by any
 * threads, system calls), fed in pieces of varying size, must never crash, hang, read out
 * of bounds or allocate beyond what the input holds; the ETMv4 stream and memory image it
 * builds are touched byte by byte so that sanitizers see bad lengths. */
#include <stddef.h>
#include <stdint.h>

#include "etm_flow.h"
#include "plugin_stream.h"

static unsigned sink;

static void on_translation(void *ctx, const struct jf_prec_translation *t,
			   const uint8_t *bytes)
{
	jf_etm_flow_translation(ctx, t->id, t->pc, bytes, t->nbytes, t->ninsns);
}

static void on_execs(void *ctx, unsigned vcpu, int tid, const uint32_t *ids, size_t n)
{
	(void)vcpu;
	jf_etm_flow_execs(ctx, tid, ids, n);
}

static void on_syscall(void *ctx, const struct jf_prec_syscall *s, const char *string)
{
	(void)string;
	jf_etm_flow_syscall(ctx, s->tid);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jf_etm_flow flow;
	struct jf_prec_callbacks cb = { .translation = on_translation, .execs = on_execs,
					.syscall = on_syscall };
	struct jf_prec_reader r;
	size_t piece = 1 + (size ? data[0] % 61 : 0), i;

	if (jf_etm_flow_init(&flow)) {
		jf_etm_flow_free(&flow);
		return 0;
	}
	cb.ctx = &flow;
	if (jf_prec_init(&r, &cb)) {
		jf_etm_flow_free(&flow);
		return 0;
	}
	r.saw_hello = 1; /* records without a hello record first reach the flow too */
	while (size) {
		size_t take = piece < size ? piece : size;

		if (jf_prec_feed(&r, data, take))
			break;
		data += take;
		size -= take;
		piece = piece * 3 % 4099 + 1;
	}
	jf_prec_finish(&r);
	jf_etm_flow_finish(&flow);
	for (i = 0; i < flow.etm.size; i++)
		sink += flow.etm.buf[i];
	for (i = 0; i < flow.nbytes; i++)
		sink += flow.bytes[i];
	jf_prec_free(&r);
	jf_etm_flow_free(&flow);
	return 0;
}
