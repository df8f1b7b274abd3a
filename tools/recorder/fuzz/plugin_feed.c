#include "plugin_feed.h"

void fuzz_plugin_feed(struct jf_prec_reader *r, const uint8_t *data, size_t size)
{
	size_t piece = 1 + (size ? data[0] % 61 : 0);

	while (size) {
		size_t take = piece < size ? piece : size;

		if (jf_prec_feed(r, data, take))
			break;
		data += take;
		size -= take;
		piece = piece * 3 % 4099 + 1;
	}
	jf_prec_finish(r);
}
