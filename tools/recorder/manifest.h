/* DIR/manifest.json: what was recorded (program, arguments, threads, bytes, instructions)
 * and, explicitly, what in the recording is synthetic or was not followed. */
#ifndef JITFLOW_RECORDER_MANIFEST_H
#define JITFLOW_RECORDER_MANIFEST_H

#include <jitflow/error.h>

#include "recorder.h"
#include "record_state.h"

int jf_manifest_write(const struct jf_record_state *st, const struct jf_record_options *opt,
		      const struct jf_record_result *res, struct jf_error *err);

#endif
