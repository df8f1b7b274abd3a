/* Bounds-checked, byte-order-aware field reads (struct jf_cursor). */
#include <byteswap.h>
#include <string.h>

#include "zone_internal.h"

static const uint8_t *take(struct jf_cursor *c, size_t n)
{
	const uint8_t *p;

	if (!c->ok || c->left < n) {
		c->ok = 0;
		return NULL;
	}
	p = c->p;
	c->p += n;
	c->left -= n;
	return p;
}

uint16_t jf_cur_u16(struct jf_cursor *c)
{
	const uint8_t *p = take(c, 2);
	uint16_t v = 0;

	if (p)
		memcpy(&v, p, 2);
	return c->swap ? bswap_16(v) : v;
}

uint32_t jf_cur_u32(struct jf_cursor *c)
{
	const uint8_t *p = take(c, 4);
	uint32_t v = 0;

	if (p)
		memcpy(&v, p, 4);
	return c->swap ? bswap_32(v) : v;
}

uint64_t jf_cur_u64(struct jf_cursor *c)
{
	const uint8_t *p = take(c, 8);
	uint64_t v = 0;

	if (p)
		memcpy(&v, p, 8);
	return c->swap ? bswap_64(v) : v;
}

const char *jf_cur_str(struct jf_cursor *c)
{
	const uint8_t *nul;

	if (!c->ok)
		return NULL;
	nul = memchr(c->p, 0, c->left);
	if (!nul) {
		c->ok = 0;
		return NULL;
	}
	return (const char *)take(c, (size_t)(nul - c->p) + 1);
}

const uint8_t *jf_cur_bytes(struct jf_cursor *c, size_t n)
{
	return take(c, n);
}
