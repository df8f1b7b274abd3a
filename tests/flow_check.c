/* Two decoders' outputs compared field by field (flow_check.h). */
#include "flow_check.h"
#include "test_support.h"

#include <string.h>

void jf_check_same_stats(const struct jf_decode_stats *a, const struct jf_decode_stats *b)
{
	assert_int_equal(a->insns, b->insns);
	assert_int_equal(a->events, b->events);
	assert_int_equal(a->errors, b->errors);
	assert_memory_equal(a->errors_by_code, b->errors_by_code, sizeof(b->errors_by_code));
	assert_int_equal(a->overflows, b->overflows);
	assert_int_equal(a->lost_bytes, b->lost_bytes);
	assert_int_equal(a->lost_insns, b->lost_insns);
	assert_int_equal(a->has_time, b->has_time);
	assert_int_equal(a->first_time, b->first_time);
	assert_int_equal(a->last_time, b->last_time);
	assert_int_equal(a->trace_bytes, b->trace_bytes);
}

void jf_check_same_flows(const char *what, struct jf_decoder *fast, struct jf_decoder *ref)
{
	jf_check_same_flows_with(what, fast, ref, NULL, NULL);
}

/* Every record of both decoders, blocks included, field by field. */
void jf_check_same_flows_with(const char *what, struct jf_decoder *fast, struct jf_decoder *ref,
			      void (*after)(const struct jf_flow *record, void *ctx), void *ctx)
{
	struct jf_error err = { "" };
	const struct jf_decode_stats *sa, *sb;
	struct jf_flow a, b;
	uint64_t n = 0;
	int ra, rb;

	assert_non_null(fast);
	assert_non_null(ref);
	for (;; n++) {
		ra = jf_decoder_next(fast, &a, &err);
		rb = jf_decoder_next(ref, &b, &err);
		assert_int_equal(ra, rb);
		if (rb <= 0)
			break;
		if (jf_flow_same(&a, &b)) {
			if (after)
				after(&b, ctx);
			continue;
		}
		if (b.kind == JF_FLOW_BLOCK && a.kind == b.kind)
			fail_msg("%s: block %llu at 0x%llx/0x%llx, offset 0x%llx/0x%llx, time "
				 "%llu/%llu: last 0x%llx/0x%llx next 0x%llx/0x%llx ninsn %u/%u end "
				 "%u/%u isa %u/%u flags %u/%u size %u/%u (fast/libipt)", what,
				 (unsigned long long)n, (unsigned long long)a.ip,
				 (unsigned long long)b.ip, (unsigned long long)a.offset,
				 (unsigned long long)b.offset, (unsigned long long)a.time,
				 (unsigned long long)b.time,
				 (unsigned long long)a.u.block.last, (unsigned long long)b.u.block.last,
				 (unsigned long long)a.u.block.next, (unsigned long long)b.u.block.next,
				 a.u.block.ninsn, b.u.block.ninsn, a.u.block.end, b.u.block.end,
				 a.u.block.isa, b.u.block.isa, a.u.block.flags, b.u.block.flags,
				 a.u.block.last_size, b.u.block.last_size);
		fail_msg("%s: record %llu: %s/%s at offset 0x%llx/0x%llx, ip 0x%llx/0x%llx, time "
			 "%llu/%llu, flags %u/%u (fast/libipt)", what, (unsigned long long)n,
			 jf_flow_kind_name((enum jf_flow_kind)a.kind),
			 jf_flow_kind_name((enum jf_flow_kind)b.kind),
			 (unsigned long long)a.offset, (unsigned long long)b.offset,
			 (unsigned long long)a.ip, (unsigned long long)b.ip,
			 (unsigned long long)a.time, (unsigned long long)b.time, a.flags, b.flags);
	}
	assert_int_equal(rb, 0);
	sa = jf_decoder_stats(fast);
	sb = jf_decoder_stats(ref);
	jf_check_same_stats(sa, sb);
	assert_int_equal(sa->blocks, sb->blocks);
	assert_int_equal(sa->time_is_ns, sb->time_is_ns);
	assert_int_equal(sa->time_is_synthetic, sb->time_is_synthetic);
}
