/* libFuzzer target for the CoreSight snapshot reader: the input is cut at "\n%%\n" into a
 * device .ini, a trace.ini and a snapshot.ini, each parsed and interpreted as the snapshot
 * reader does (device identity, source registers, core architecture, buffer list). Any
 * input must give a result or a clear error, never a crash or a leak. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cs_snapshot.h"

static const uint8_t *part(const uint8_t **data, size_t *size, size_t *len)
{
	const uint8_t *start = *data;
	const uint8_t *sep = memmem(*data, *size, "\n%%\n", 4);

	if (!sep) {
		*len = *size;
		*data += *size;
		*size = 0;
	} else {
		*len = (size_t)(sep - start);
		*size -= *len + 4;
		*data = sep + 4;
	}
	return start;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jf_error err;
	struct jf_ini dev_ini, trace_ini, top_ini;
	const uint8_t *p;
	size_t len;

	p = part(&data, &size, &len);
	if (jf_ini_parse(&dev_ini, "device.ini", (const char *)p, len, &err) == 0) {
		struct jf_cs_device dev;
		struct jf_cs_source src;

		if (jf_cs_device_parse(&dev_ini, &dev, &err) == 0 &&
		    jf_cs_source_parse(&dev_ini, &dev, &src, &err) == 0) {
			uint8_t arch, profile;

			(void)jf_cs_source_trace_id(&src);
			(void)jf_cs_core_arch(dev.type, &arch, &profile);
		}
		jf_ini_free(&dev_ini);
	}
	p = part(&data, &size, &len);
	if (jf_ini_parse(&trace_ini, "trace.ini", (const char *)p, len, &err) == 0) {
		struct jf_cs_trace_layout layout;

		if (jf_cs_trace_parse(&trace_ini, &layout, &err) == 0)
			jf_cs_trace_free(&layout);
		jf_ini_free(&trace_ini);
	}
	p = part(&data, &size, &len);
	if (jf_ini_parse(&top_ini, "snapshot.ini", (const char *)p, len, &err) == 0) {
		(void)jf_ini_has_section(&top_ini, "device_list");
		(void)jf_ini_find(&top_ini, "trace", "metadata");
		jf_ini_free(&top_ini);
	}
	return 0;
}
