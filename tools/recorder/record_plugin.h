/* The plugin backend's records applied to the recorder's state: the same state machine
 * (record_flow.c, record_syscalls.c, record_threads.c) that the log backend feeds, given
 * exact facts instead of parsed text: which translation each execution ran, the thread
 * each vCPU runs, system calls with their own results. */
#ifndef JITFLOW_RECORDER_RECORD_PLUGIN_H
#define JITFLOW_RECORDER_RECORD_PLUGIN_H

#include "plugin_stream.h"
#include "record_state.h"

struct jf_record_plugin;

struct jf_record_plugin *jf_record_plugin_new(struct jf_record_state *st);
void jf_record_plugin_free(struct jf_record_plugin *p);
void jf_record_plugin_callbacks(struct jf_record_plugin *p, struct jf_prec_callbacks *cb);
/* Whether the plugin's hello arrived (QEMU loaded it and the program started). */
int jf_record_plugin_started(const struct jf_record_plugin *p);

#endif
