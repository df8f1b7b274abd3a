/* libipt's events as flow records: one place that knows every pt_event type. */
#include "pt_events.h"

#include <string.h>

enum jf_isa jf_pt_isa(enum pt_exec_mode mode)
{
	switch (mode) {
	case ptem_16bit: return JF_ISA_X86_16;
	case ptem_32bit: return JF_ISA_X86_32;
	case ptem_64bit: return JF_ISA_X86_64;
	default: return JF_ISA_UNKNOWN;
	}
}

void jf_pt_flow_text(char *dst, size_t size, const char *text)
{
	size_t n = strlen(text);

	if (n >= size)
		n = size - 1;
	memcpy(dst, text, n);
	dst[n] = '\0';
}

void jf_pt_event_flow(const struct pt_event *ev, const struct jf_tsc_conversion *conv,
		      struct jf_flow *f)
{
	if (ev->has_tsc) {
		f->time = jf_tsc_to_ns(conv, ev->tsc);
		f->flags |= JF_FLOW_HAS_TIME;
	}
	if (ev->ip_suppressed)
		f->flags |= JF_FLOW_IP_SUPPRESSED;
	if (ev->status_update)
		f->flags |= JF_FLOW_STATUS_UPDATE;

#define OTHER(n, x, y) do { jf_pt_flow_text(f->u.other.name, sizeof(f->u.other.name), n); \
		f->u.other.a = (x); f->u.other.b = (y); } while (0)
	switch (ev->type) {
	case ptev_enabled:
		f->kind = JF_FLOW_ENABLED;
		f->ip = ev->variant.enabled.ip;
		f->u.enabled.resumed = ev->variant.enabled.resumed;
		break;
	case ptev_disabled:
		f->kind = JF_FLOW_DISABLED;
		f->ip = ev->variant.disabled.ip;
		break;
	case ptev_async_disabled:
		f->kind = JF_FLOW_DISABLED;
		f->ip = ev->variant.async_disabled.ip;
		f->u.disabled.at = ev->variant.async_disabled.at;
		break;
	case ptev_async_branch:
		f->kind = JF_FLOW_ASYNC;
		f->ip = ev->variant.async_branch.to;
		f->u.async.from = ev->variant.async_branch.from;
		break;
	case ptev_overflow:
		f->kind = JF_FLOW_OVERFLOW;
		f->ip = ev->variant.overflow.ip;
		break;
	case ptev_exec_mode:
		f->kind = JF_FLOW_EXEC_MODE;
		f->ip = ev->variant.exec_mode.ip;
		f->u.exec_mode.isa = (uint8_t)jf_pt_isa(ev->variant.exec_mode.mode);
		break;
	case ptev_ptwrite:
		f->kind = JF_FLOW_PTWRITE;
		f->ip = ev->variant.ptwrite.ip;
		f->u.ptwrite.payload = ev->variant.ptwrite.payload;
		break;
	case ptev_paging:
		OTHER("paging", ev->variant.paging.cr3, ev->variant.paging.non_root);
		break;
	case ptev_async_paging:
		f->ip = ev->variant.async_paging.ip;
		OTHER("paging", ev->variant.async_paging.cr3, ev->variant.async_paging.non_root);
		break;
	case ptev_tsx:
		f->ip = ev->variant.tsx.ip;
		OTHER(ev->variant.tsx.aborted ? "aborted" :
		      ev->variant.tsx.speculative ? "begin transaction" : "committed", 0, 0);
		break;
	case ptev_stop:
		OTHER("stopped", 0, 0);
		break;
	case ptev_vmcs:
		OTHER("vmcs", ev->variant.vmcs.base, 0);
		break;
	case ptev_async_vmcs:
		f->ip = ev->variant.async_vmcs.ip;
		OTHER("vmcs", ev->variant.async_vmcs.base, 0);
		break;
	case ptev_exstop:
		f->ip = ev->variant.exstop.ip;
		OTHER("exstop", 0, 0);
		break;
	case ptev_mwait:
		f->ip = ev->variant.mwait.ip;
		OTHER("mwait", ev->variant.mwait.hints, ev->variant.mwait.ext);
		break;
	case ptev_pwre:
		OTHER("pwre", ev->variant.pwre.state | (uint64_t)ev->variant.pwre.sub_state << 8,
		      ev->variant.pwre.hw);
		break;
	case ptev_pwrx:
		OTHER("pwrx", ev->variant.pwrx.last | (uint64_t)ev->variant.pwrx.deepest << 8,
		      ev->variant.pwrx.interrupt | ev->variant.pwrx.store << 1 |
		      ev->variant.pwrx.autonomous << 2);
		break;
	case ptev_tick:
		f->ip = ev->variant.tick.ip;
		OTHER("tick", 0, 0);
		break;
	case ptev_cbr:
		OTHER("cbr", ev->variant.cbr.ratio, 0);
		break;
	case ptev_mnt:
		OTHER("mnt", ev->variant.mnt.payload, 0);
		break;
	default:
		OTHER("unknown event", ev->type, 0);
		break;
	}
#undef OTHER
}

