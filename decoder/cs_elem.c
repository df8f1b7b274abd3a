/* OpenCSD generic trace elements -> jitflow flow records (see coresight.h for the map). */
#include "cs_internal.h"

#include <stdio.h>
#include <string.h>

static uint8_t isa_of(ocsd_isa isa)
{
	switch (isa) {
	case ocsd_isa_aarch64: return JF_ISA_A64;
	case ocsd_isa_arm: return JF_ISA_A32;
	case ocsd_isa_thumb2: return JF_ISA_T32;
	default: return JF_ISA_UNKNOWN;
	}
}

/* How a range ended, from its last instruction's class and whether it executed. */
static uint8_t end_of(const ocsd_generic_trace_elem *e)
{
	int cond = e->last_instr_cond;
	int exec = e->last_instr_exec;

	switch (e->last_i_type) {
	case OCSD_INSTR_BR:
		if (cond)
			return exec ? JF_END_COND_TAKEN : JF_END_COND_NOT_TAKEN;
		if (!exec)
			return JF_END_UNKNOWN;
		return e->last_i_subtype == OCSD_S_INSTR_BR_LINK ? JF_END_CALL : JF_END_JUMP;
	case OCSD_INSTR_BR_INDIRECT:
		if (!exec)
			return cond ? JF_END_COND_NOT_TAKEN : JF_END_UNKNOWN;
		switch (e->last_i_subtype) {
		case OCSD_S_INSTR_BR_LINK: return JF_END_CALL_INDIRECT;
		case OCSD_S_INSTR_V8_RET:
		case OCSD_S_INSTR_V7_IMPLIED_RET: return JF_END_RETURN;
		case OCSD_S_INSTR_V8_ERET: return JF_END_FAR;
		default: return JF_END_JUMP_INDIRECT;
		}
	case OCSD_INSTR_OTHER:
		return JF_END_NONE;
	default: /* ISB, DSB/DMB, WFI/WFE, TSTART: waypoints that are not branches */
		return JF_END_OTHER;
	}
}

static void other(struct jf_flow *f, const char *name, uint64_t a, uint64_t b)
{
	f->kind = JF_FLOW_OTHER;
	f->flags |= JF_FLOW_IP_SUPPRESSED;
	snprintf(f->u.other.name, sizeof(f->u.other.name), "%s", name);
	f->u.other.a = a;
	f->u.other.b = b;
}

int jf_cs_elem_to_flows(const ocsd_generic_trace_elem *e, uint8_t trace_id, uint64_t offset,
			struct jf_cs_clock *clock, struct jf_flow out[JF_CS_MAX_FLOWS_PER_ELEM])
{
	struct jf_flow *f = &out[0];
	int n = 1;

	trace_id &= 0x7f;
	if (e->elem_type == OCSD_GEN_TRC_ELEM_TIMESTAMP) {
		clock->time[trace_id] = e->timestamp;
		clock->valid[trace_id] = 1;
	}
	memset(f, 0, sizeof(*f));
	f->source = trace_id;
	f->offset = offset;
	if (clock->valid[trace_id]) {
		f->flags |= JF_FLOW_HAS_TIME;
		f->time = clock->time[trace_id];
	}
	switch (e->elem_type) {
	case OCSD_GEN_TRC_ELEM_INSTR_RANGE: {
		struct jf_block *b = &f->u.block;

		f->kind = JF_FLOW_BLOCK;
		f->ip = e->st_addr;
		b->start = e->st_addr;
		b->next = e->en_addr;
		b->last_size = e->last_instr_sz;
		b->last = e->en_addr - e->last_instr_sz;
		b->ninsn = e->num_instr_range;
		b->isa = isa_of(e->isa);
		b->end = end_of(e);
		if (!e->last_instr_exec)
			b->flags |= JF_BLOCK_LAST_FAILED;
		break;
	}
	case OCSD_GEN_TRC_ELEM_I_RANGE_NOPATH:
		f->kind = JF_FLOW_LOST;
		f->ip = e->st_addr;
		f->u.lost.insns = e->num_instr_range;
		f->u.lost.reason = JF_LOST_SKIPPED;
		break;
	case OCSD_GEN_TRC_ELEM_ADDR_NACC:
		f->kind = JF_FLOW_LOST;
		f->ip = e->st_addr;
		f->u.lost.reason = JF_LOST_NO_IMAGE;
		break;
	case OCSD_GEN_TRC_ELEM_ADDR_UNKNOWN:
		f->kind = JF_FLOW_LOST;
		f->flags |= JF_FLOW_IP_SUPPRESSED;
		f->u.lost.reason = JF_LOST_SKIPPED;
		break;
	case OCSD_GEN_TRC_ELEM_EXCEPTION:
		f->kind = JF_FLOW_ASYNC;
		f->flags |= JF_FLOW_IP_SUPPRESSED;
		f->u.async.kind = e->exception_number;
		if (e->excep_ret_addr)
			f->u.async.from = e->en_addr;
		break;
	case OCSD_GEN_TRC_ELEM_EXCEPTION_RET:
		f->kind = JF_FLOW_ASYNC;
		f->flags |= JF_FLOW_IP_SUPPRESSED;
		f->u.async.kind = JF_CS_ASYNC_EXCEPTION_RETURN;
		break;
	case OCSD_GEN_TRC_ELEM_TRACE_ON:
		f->flags |= JF_FLOW_IP_SUPPRESSED;
		if (e->trace_on_reason == TRACE_ON_OVERFLOW) {
			f->kind = JF_FLOW_OVERFLOW;
		} else {
			f->kind = JF_FLOW_ENABLED;
			f->u.enabled.resumed = e->trace_on_reason == TRACE_ON_EX_DEBUG;
		}
		break;
	case OCSD_GEN_TRC_ELEM_NO_SYNC:
		f->flags |= JF_FLOW_IP_SUPPRESSED;
		switch (e->unsync_eot_info) {
		case UNSYNC_OVERFLOW:
			f->kind = JF_FLOW_OVERFLOW;
			break;
		case UNSYNC_BAD_PACKET:
			f->kind = JF_FLOW_ERROR;
			f->u.error.code = -OCSD_ERR_BAD_DECODE_PKT;
			f->u.error.phase = JF_PHASE_DECODE;
			snprintf(f->u.error.text, sizeof(f->u.error.text),
				 "bad packet; resynchronising");
			break;
		case UNSYNC_DISCARD:
			f->kind = JF_FLOW_LOST;
			f->u.lost.reason = JF_LOST_SKIPPED;
			break;
		case UNSYNC_INIT_DECODER:
			/* The start of the stream: nothing lost here. Bytes before the first
			 * sync are counted at the buffer's end (channel_unsynced). */
			return 0;
		default: /* decoder reset */
			f->kind = JF_FLOW_LOST;
			f->u.lost.reason = JF_LOST_NO_SYNC;
			break;
		}
		break;
	case OCSD_GEN_TRC_ELEM_EO_TRACE:
		f->kind = JF_FLOW_DISABLED;
		f->flags |= JF_FLOW_IP_SUPPRESSED;
		break;
	case OCSD_GEN_TRC_ELEM_PE_CONTEXT:
		f->kind = JF_FLOW_CONTEXT;
		f->flags |= JF_FLOW_IP_SUPPRESSED;
		f->u.context.pid = -1;
		f->u.context.cpu = -1;
		f->u.context.tid = e->context.ctxt_id_valid ? (int32_t)e->context.context_id : -1;
		f->u.context.vmid = e->context.vmid_valid ? e->context.vmid : 0;
		f->u.context.el = e->context.el_valid && e->context.exception_level >= 0
				  ? (uint8_t)e->context.exception_level : 0;
		break;
	case OCSD_GEN_TRC_ELEM_TIMESTAMP:
		f->kind = JF_FLOW_TIME;
		f->flags |= JF_FLOW_IP_SUPPRESSED;
		break;
	case OCSD_GEN_TRC_ELEM_CYCLE_COUNT:
		clock->cycles[trace_id] += e->cycle_count;
		other(f, "cycles", e->cycle_count, clock->cycles[trace_id]);
		break;
	case OCSD_GEN_TRC_ELEM_EVENT:
		other(f, "event", e->trace_event.ev_type, e->trace_event.ev_number);
		break;
	case OCSD_GEN_TRC_ELEM_SWTRACE:
		other(f, "swtrace", e->sw_trace_info.swt_master_id, e->sw_trace_info.swt_channel_id);
		break;
	case OCSD_GEN_TRC_ELEM_SYNC_MARKER:
		other(f, "sync-marker", e->sync_marker.type, e->sync_marker.value);
		break;
	case OCSD_GEN_TRC_ELEM_MEMTRANS:
		other(f, "memtrans", e->mem_trans, 0);
		break;
	default:
		other(f, "unknown", e->elem_type, 0);
		break;
	}
	/* Other elements may carry a cycle count too (ranges, PTM/ETMv3 context after an
	 * I-sync with cycles): a record of its own after theirs. */
	if (e->has_cc && e->elem_type != OCSD_GEN_TRC_ELEM_CYCLE_COUNT) {
		clock->cycles[trace_id] += e->cycle_count;
		out[1] = *f;
		out[1].flags = f->flags & JF_FLOW_HAS_TIME;
		other(&out[1], "cycles", e->cycle_count, clock->cycles[trace_id]);
		n = 2;
	}
	return n;
}
