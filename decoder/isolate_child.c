/* The child side of the isolated decoder: see isolate_child.h. */
#include "isolate_child.h"

struct jf_isolate_child *jf_isolate_child;

uint32_t jf_isolate_buffer_opened(void)
{
	return jf_isolate_child ? jf_isolate_child->buffers++ : 0;
}

int jf_isolate_replaying(void)
{
	return jf_isolate_child && jf_isolate_child->plan.replaying;
}

static int at_or_after(uint32_t buffer, uint64_t pos, uint32_t b, uint64_t p)
{
	return buffer > b || (buffer == b && pos >= p);
}

int jf_isolate_before_call(uint32_t buffer, enum jf_isolate_op op, uint64_t pos, size_t *len,
			   const struct jf_isolate_spot *where, uint64_t *skip_to)
{
	struct jf_isolate_child *c = jf_isolate_child;
	struct jf_isolate_plan *p;
	struct jf_isolate_spot *s;
	size_t i;

	if (!c)
		return 0;
	p = &c->plan;
	/* The crash position reached: from here on the records are new to the parent. */
	if (p->replaying && at_or_after(buffer, pos, p->send_buffer, p->send_from))
		p->replaying = 0;
	for (i = 0; i < p->nskips; i++) {
		struct jf_isolate_skip *k = &p->skips[i];

		if (!k->done && k->buffer == buffer && pos >= k->from) {
			k->done = 1;
			*skip_to = k->to > pos ? k->to : pos;
			return 1;
		}
	}
	s = c->spot;
	s->narrowed = 0;
	if (p->narrowing && op == JF_ISOLATE_DATA && buffer == p->narrow_buffer &&
	    pos >= p->narrow_from && pos < p->narrow_to) {
		size_t unit = where->unit ? (size_t)where->unit : 1;

		/* Whole units from the start of the buffer: a frame stays a frame. */
		unit -= (size_t)(pos % unit);
		if (*len > unit)
			*len = unit;
		s->narrowed = 1;
	}
	if (c->flush && !p->replaying)
		c->flush();
	s->buffer = buffer;
	s->op = (uint8_t)op;
	s->pos = pos;
	s->len = *len;
	s->unit = where->unit;
	s->size = where->size;
	s->base = where->base;
	s->source = where->source;
	s->replaying = (uint8_t)p->replaying;
	s->calls++;
	s->in_call = 1;
	return 0;
}

void jf_isolate_after_call(void)
{
	if (jf_isolate_child)
		jf_isolate_child->spot->in_call = 0;
}
