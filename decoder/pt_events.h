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

/* Copy text into a record's field dst of size bytes, cut to fit and ended with a NUL, as
 * snprintf(dst, size, "%s", text) would, without its formatting (2% of `stat` where an
 * error or event comes every PSB period). */
void jf_pt_flow_text(char *dst, size_t size, const char *text);

#endif
