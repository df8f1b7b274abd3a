/* Reader for the records jitflow's QEMU plugin streams (plugin_records.h). Fed the bytes
 * as they come from the FIFO, in pieces of any size; reports each complete record through
 * callbacks and keeps only one incomplete record. A record that cannot be right (unknown
 * type, impossible size, a string longer than its record) stops the reader with an error
 * that names the stream offset: the stream has no resynchronisation points, so nothing
 * after it could be trusted. */
#ifndef JITFLOW_RECORDER_PLUGIN_STREAM_H
#define JITFLOW_RECORDER_PLUGIN_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "plugin_records.h"

struct jf_prec_callbacks {
	void *ctx;
	void (*hello)(void *ctx, const struct jf_prec_hello *h);
	void (*translation)(void *ctx, const struct jf_prec_translation *t, const uint8_t *bytes);
	void (*execs)(void *ctx, unsigned vcpu, int tid, const uint32_t *ids, size_t n);
	void (*syscall)(void *ctx, const struct jf_prec_syscall *s, const char *string);
	void (*syscall_ret)(void *ctx, const struct jf_prec_syscall_ret *r, const char *string);
};

struct jf_prec_reader {
	struct jf_prec_callbacks cb;
	uint8_t *buf;              /* the incomplete record (8-byte aligned) */
	size_t have, cap;
	uint64_t offset;           /* stream offset of buf[0] */
	uint64_t records;
	int saw_hello;
	int failed;
	char error[256];           /* what was wrong, and where */
};

int jf_prec_init(struct jf_prec_reader *r, const struct jf_prec_callbacks *cb);
void jf_prec_free(struct jf_prec_reader *r);
/* Returns 0, or -1 once the stream is corrupt (r->error says where and why). */
int jf_prec_feed(struct jf_prec_reader *r, const uint8_t *data, size_t size);
/* End of the stream: -1 if it ended inside a record (r->error). */
int jf_prec_finish(struct jf_prec_reader *r);

#endif
