/* libFuzzer target for the AArch64 recorder's state (etm_flow.c, and etm_zones.c in front
 * of it, following zone files and marker calls at 0x10000) behind the plugin stream
 * reader: arbitrary records (translations of any bytes, executions of any ids by any
 * threads, system calls), fed in pieces of varying size, with and without an IP filter
 * (--filter=jit plus a range: mmap and mprotect records grow it), must never crash, hang,
 * read out of bounds or allocate beyond what the input holds; the ETMv4 stream and memory image it
 * builds are touched byte by byte so that sanitizers see bad lengths. */
#include <stddef.h>
#include <stdint.h>

#include "etm_flow.h"
#include "etm_zones.h"
#include "plugin_feed.h"

static unsigned sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jf_etm_flow flow;
	struct jf_etm_zones zones;
	struct jf_prec_callbacks cb;
	struct jf_prec_reader r;
	struct jf_rec_filter filter;
	struct jf_error err;
	size_t i;

	if (jf_etm_flow_init(&flow)) {
		jf_etm_flow_free(&flow);
		return 0;
	}
	/* Inputs of odd length run filtered. */
	if (size % 2 && jf_rec_filter_parse(&filter, "jit,10000-10010", &err) == 0)
		flow.filter = &filter;
	jf_etm_flow_callbacks(&flow, &cb);
	jf_etm_zones_init(&zones, &flow, &cb, 0x10000);
	if (jf_prec_init(&r, &cb)) {
		jf_etm_flow_free(&flow);
		return 0;
	}
	r.saw_hello = 1; /* records without a hello record first reach the flow too */
	fuzz_plugin_feed(&r, data, size);
	jf_etm_flow_finish(&flow);
	for (i = 0; i < flow.etm.size; i++)
		sink += flow.etm.buf[i];
	for (i = 0; i < flow.nbytes; i++)
		sink += flow.bytes[i];
	for (i = 0; i < zones.nthreads; i++)
		sink += (unsigned)zones.threads[i].ntimes;
	jf_prec_free(&r);
	jf_etm_zones_free(&zones);
	jf_etm_flow_free(&flow);
	return 0;
}
