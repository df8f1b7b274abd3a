/* The template interpreter's codelets as regions of their own.
 *
 * HotSpot generates its interpreter at startup into one StubQueue
 * (AbstractInterpreter::_code): InterpreterCodelets laid end to end from _queue_begin to
 * _queue_end, each a header (its _size, _description and _bytecode) followed, at the next
 * CodeEntryAlignment boundary, by its code. A bytecode's codelet is named after the
 * bytecode ("Interpreter: iadd"); the others keep HotSpot's description ("Interpreter:
 * method entry point (kind = zerolocals)"). Every execution of a bytecode is a dispatch
 * (an indirect jump) into its codelet, so a report's per-region entries and instructions
 * count bytecodes by opcode. Only the code is described: the headers between codelets
 * never run. */
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "vm_structs.h"

struct codelet_layout {
	int64_t buffer, begin, end;           /* StubQueue fields */
	int64_t size, description, bytecode;  /* InterpreterCodelet fields */
	int64_t header;                       /* header bytes before the code */
};

static int64_t align_up(int64_t v, int64_t a)
{
	return (v + a - 1) / a * a;
}

static int read_layout(struct codelet_layout *l)
{
	int64_t alignment, type_size;

	l->buffer = jf_hs_field_offset("StubQueue", "_stub_buffer");
	l->begin = jf_hs_field_offset("StubQueue", "_queue_begin");
	l->end = jf_hs_field_offset("StubQueue", "_queue_end");
	l->size = jf_hs_field_offset("InterpreterCodelet", "_size");
	l->description = jf_hs_field_offset("InterpreterCodelet", "_description");
	l->bytecode = jf_hs_field_offset("InterpreterCodelet", "_bytecode");
	type_size = jf_hs_type_size("InterpreterCodelet");
	if (l->buffer < 0 || l->begin < 0 || l->end < 0 || l->size < 0 || l->description < 0 ||
	    l->bytecode < 0 || type_size <= 0 ||
	    jf_hs_flag_intx("CodeEntryAlignment", &alignment) < 0 || alignment <= 0)
		return -1;
	l->header = align_up(type_size, alignment);
	return 0;
}

static int read_int(const char *base, int64_t offset)
{
	int v;

	memcpy(&v, base + offset, sizeof(v));
	return v;
}

static void describe_one(const char *codelet, const struct codelet_layout *l, int size)
{
	const char *description;
	char name[128];
	struct jf_region r;

	memcpy(&description, codelet + l->description, sizeof(description));
	/* A bytecode's description is its name: the same text either way. */
	snprintf(name, sizeof(name), "Interpreter: %s", description ? description : "?");
	memset(&r, 0, sizeof(r));
	r.name = name;
	r.addr = (uint64_t)(uintptr_t)(codelet + l->header);
	r.code = codelet + l->header;
	r.size = (uint64_t)(size - l->header);
	r.kind = JF_REGION_INTERPRETER;
	if (jf_hs_code_add(r.addr, r.size) == 1)
		jf_emit_region_load(jf_hs_emitter, &r);
}

int jf_hs_describe_codelets(void)
{
	const char *const *queue_p;
	const char *queue, *buffer;
	struct codelet_layout l;
	int at, end;

	if (jf_hs_vm_structs_open() < 0 || read_layout(&l) < 0)
		return -1;
	queue_p = jf_hs_static_address("AbstractInterpreter", "_code");
	if (!queue_p || !(queue = *queue_p))
		return -1;
	memcpy(&buffer, queue + l.buffer, sizeof(buffer));
	at = read_int(queue, l.begin);
	end = read_int(queue, l.end);
	/* The interpreter's queue is filled once, in order, and never wraps. */
	if (!buffer || at < 0 || end < at)
		return -1;
	while (at < end) {
		const char *codelet = buffer + at;
		int size = read_int(codelet, l.size);

		if (size <= l.header || size > end - at)
			return -1;
		describe_one(codelet, &l, size);
		at += size;
	}
	return 0;
}
