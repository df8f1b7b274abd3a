/* Internal: libipt's events and execution modes in flow terms (pt_events.c). */
#ifndef JITFLOW_PT_EVENTS_H
#define JITFLOW_PT_EVENTS_H

#include <intel-pt.h>

#include "jitflow/flow.h"
#include "jitflow/pt.h"

enum jf_isa jf_pt_isa(enum pt_exec_mode mode);

/* Fill f's kind, ip, flags, time and details from ev (f's source and offset are the
 * caller's). */
void jf_pt_event_flow(const struct pt_event *ev, const struct jf_tsc_conversion *conv,
		      struct jf_flow *f);

#endif
