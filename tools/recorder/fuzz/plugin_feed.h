/* For the fuzz targets that read a plugin stream: the input fed to the reader in pieces of
 * varying size (from 1 byte to 4 KiB, chosen by the first byte), as a FIFO delivers it,
 * then the end of the stream. */
#ifndef JITFLOW_RECORDER_FUZZ_PLUGIN_FEED_H
#define JITFLOW_RECORDER_FUZZ_PLUGIN_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "plugin_stream.h"

void fuzz_plugin_feed(struct jf_prec_reader *r, const uint8_t *data, size_t size);

#endif
