/* Translation blocks keyed by (pc, flags, cflags), classified with capstone. */
#include "block_map.h"
#include "jitflow/x86_cet.h"

#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>

struct slot {
	struct jf_block block;
	int used;
};

/* Open addressing; "pending" holds translations QEMU printed but has not run yet. */
struct table {
	struct slot *slots;
	size_t cap, used;
};

struct jf_block_map {
	struct table known, pending;
	csh cs;
	int cs_ok;
	int next_keyed;            /* jf_block_map_key_next: the key of the next translation */
	uint32_t next_flags, next_cflags;
	uint64_t count, undecodable;
};

static uint64_t hash_key(uint64_t pc, uint32_t flags, uint32_t cflags)
{
	uint64_t h = pc * 0x9e3779b97f4a7c15ull;

	h ^= ((uint64_t)flags << 32 | cflags) * 0xc2b2ae3d27d4eb4full;
	return h ^ (h >> 29);
}

static struct slot *table_find(struct table *t, uint64_t pc, uint32_t flags, uint32_t cflags,
			       int match_flags)
{
	size_t i;

	if (!t->cap)
		return NULL;
	i = hash_key(pc, match_flags ? flags : 0, match_flags ? cflags : 0) & (t->cap - 1);
	for (;; i = (i + 1) & (t->cap - 1)) {
		struct slot *s = &t->slots[i];

		if (!s->used)
			return s;
		if (s->block.pc == pc &&
		    (!match_flags || (s->block.flags == flags && s->block.cflags == cflags)))
			return s;
	}
}

static int table_grow(struct table *t, int match_flags)
{
	struct table bigger = { 0 };
	size_t i;

	bigger.cap = t->cap ? t->cap * 2 : 1024;
	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -1;
	for (i = 0; i < t->cap; i++) {
		struct jf_block *b = &t->slots[i].block;

		if (t->slots[i].used) {
			struct slot *s = table_find(&bigger, b->pc, b->flags, b->cflags,
						    match_flags);
			*s = t->slots[i];
			bigger.used++;
		}
	}
	free(t->slots);
	*t = bigger;
	return 0;
}

/* Insert or replace; match_flags says whether flags are part of the key. */
static int table_put(struct table *t, const struct jf_block *b, int match_flags)
{
	struct slot *s;

	if ((t->used + 1) * 2 > t->cap && table_grow(t, match_flags))
		return -1;
	s = table_find(t, b->pc, b->flags, b->cflags, match_flags);
	if (!s->used)
		t->used++;
	s->used = 1;
	s->block = *b;
	return 0;
}

/* Remove with backward-shift deletion so that probe chains stay intact. */
static void table_del(struct table *t, struct slot *s, int match_flags)
{
	size_t i = (size_t)(s - t->slots), j = i;

	s->used = 0;
	t->used--;
	for (;;) {
		size_t home;

		j = (j + 1) & (t->cap - 1);
		if (!t->slots[j].used)
			return;
		home = hash_key(t->slots[j].block.pc, match_flags ? t->slots[j].block.flags : 0,
				match_flags ? t->slots[j].block.cflags : 0) & (t->cap - 1);
		/* Move slot j into the hole at i if its home is not in (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
			t->slots[i] = t->slots[j];
			t->slots[j].used = 0;
			i = j;
		}
	}
}

struct jf_block_map *jf_block_map_new(void)
{
	struct jf_block_map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &m->cs) == CS_ERR_OK) {
		m->cs_ok = 1;
		cs_option(m->cs, CS_OPT_DETAIL, CS_OPT_ON);
	}
	return m;
}

void jf_block_map_free(struct jf_block_map *m)
{
	if (!m)
		return;
	if (m->cs_ok)
		cs_close(&m->cs);
	free(m->known.slots);
	free(m->pending.slots);
	free(m);
}

static int is_string_op(unsigned id)
{
	switch (id) {
	case X86_INS_MOVSB: case X86_INS_MOVSW: case X86_INS_MOVSD: case X86_INS_MOVSQ:
	case X86_INS_STOSB: case X86_INS_STOSW: case X86_INS_STOSD: case X86_INS_STOSQ:
	case X86_INS_LODSB: case X86_INS_LODSW: case X86_INS_LODSD: case X86_INS_LODSQ:
	case X86_INS_CMPSB: case X86_INS_CMPSW: case X86_INS_CMPSD: case X86_INS_CMPSQ:
	case X86_INS_SCASB: case X86_INS_SCASW: case X86_INS_SCASD: case X86_INS_SCASQ:
	case X86_INS_INSB: case X86_INS_INSW: case X86_INS_INSD:
	case X86_INS_OUTSB: case X86_INS_OUTSW: case X86_INS_OUTSD:
		return 1;
	default:
		return 0;
	}
}

static int has_group(const cs_insn *insn, uint8_t group)
{
	uint8_t i;

	for (i = 0; i < insn->detail->groups_count; i++)
		if (insn->detail->groups[i] == group)
			return 1;
	return 0;
}

static void classify(const cs_insn *insn, struct jf_block *b)
{
	const cs_x86 *x86 = &insn->detail->x86;
	int direct = x86->op_count == 1 && x86->operands[0].type == X86_OP_IMM;

	b->last_ip = insn->address;
	b->next_ip = insn->address + insn->size;
	b->target = 0;
	b->exit = JF_EXIT_NONE;
	b->last_is_rep = (x86->prefix[0] == X86_PREFIX_REP || x86->prefix[0] == X86_PREFIX_REPNE) &&
			 is_string_op(insn->id);

	switch (insn->id) {
	case X86_INS_SYSCALL:
	case X86_INS_SYSENTER:
	case X86_INS_INT:
	case X86_INS_INTO:
		b->exit = JF_EXIT_SYSCALL;
		return;
	case X86_INS_INT3:
	case X86_INS_UD2:
	case X86_INS_HLT:
		b->exit = JF_EXIT_FAULT;
		return;
	case X86_INS_RET:
		b->exit = JF_EXIT_RET;
		return;
	case X86_INS_CALL:
		b->exit = direct ? JF_EXIT_CALL : JF_EXIT_IND_CALL;
		break;
	case X86_INS_JMP:
		b->exit = direct ? JF_EXIT_JUMP : JF_EXIT_IND_JUMP;
		break;
	case X86_INS_LCALL:
	case X86_INS_LJMP:
	case X86_INS_RETF:
	case X86_INS_IRET:
	case X86_INS_IRETD:
	case X86_INS_IRETQ:
	case X86_INS_SYSRET:
	case X86_INS_SYSEXIT:
		b->exit = JF_EXIT_FAULT; /* far transfers do not occur in 64-bit user code */
		return;
	case X86_INS_LOOP:
	case X86_INS_LOOPE:
	case X86_INS_LOOPNE:
		/* capstone 4 leaves these out of X86_GRP_JUMP; they are conditional */
		b->exit = JF_EXIT_COND;
		direct = 1;
		break;
	default:
		if (has_group(insn, X86_GRP_JUMP)) {
			b->exit = JF_EXIT_COND; /* jcc, jrcxz, loop* */
			direct = 1;
		}
		break;
	}
	if (b->exit != JF_EXIT_NONE && direct)
		b->target = (uint64_t)x86->operands[0].imm;
}

/* The next instruction as cs_disasm_iter gives it, stepping over one that capstone does
 * not know but that does nothing (*known = 0 then, insn untouched). 0 at the end or at
 * bytes that are no instruction. */
static int next_insn(csh cs, const uint8_t **code, size_t *left, uint64_t *ip, cs_insn *insn,
		     int *known)
{
	size_t n;

	*known = 1;
	if (cs_disasm_iter(cs, code, left, ip, insn))
		return 1;
	n = jf_x86_shadow_stack_nop(*code, *left, NULL); /* capstone 4 does not know them */
	if (!n)
		return 0;
	*code += n;
	*left -= n;
	*ip += n;
	*known = 0;
	return 1;
}

size_t jf_block_classify_insn(const uint8_t *bytes, size_t size, uint64_t ip,
			      struct jf_block *out)
{
	csh cs;
	cs_insn *insn;
	size_t n, len = 0;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return 0;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	n = cs_disasm(cs, bytes, size, ip, 1, &insn);
	if (n == 1) {
		classify(insn, out);
		len = insn->size;
		cs_free(insn, n);
	}
	cs_close(&cs);
	return len;
}

int jf_block_map_translated(struct jf_block_map *m, uint64_t pc, const uint8_t *bytes,
			    size_t size)
{
	struct jf_block b;
	cs_insn *insn;
	const uint8_t *code = bytes;
	size_t left = size;
	uint64_t ip = pc;
	int ok = 0, known;

	memset(&b, 0, sizeof(b));
	b.pc = pc;
	b.size = (uint32_t)size;
	if (m->cs_ok && (insn = cs_malloc(m->cs)) != NULL) {
		while (left) {
			uint64_t at = ip;

			if (!next_insn(m->cs, &code, &left, &ip, insn, &known))
				break;
			b.ninsn++;
			if (known) {
				classify(insn, &b);
			} else { /* a NOP capstone does not know */
				b.exit = JF_EXIT_NONE;
				b.last_is_rep = 0;
				b.target = 0;
				b.last_ip = at;
				b.next_ip = ip;
			}
		}
		ok = left == 0 && b.ninsn > 0;
		cs_free(insn, 1);
	}
	if (!ok) {
		m->undecodable++;
		b.exit = JF_EXIT_NONE;
		b.next_ip = pc + size;
	}
	m->count++;
	if (m->next_keyed) {
		m->next_keyed = 0;
		b.flags = m->next_flags;
		b.cflags = m->next_cflags;
		if (table_put(&m->known, &b, 1))
			return -1;
	} else if (table_put(&m->pending, &b, 0)) {
		return -1;
	}
	return ok ? 0 : -1;
}

size_t jf_block_map_prefix_size(struct jf_block_map *m, uint64_t pc, const uint8_t *bytes,
				size_t size, uint32_t ninsn)
{
	const uint8_t *code = bytes;
	size_t left = size;
	uint64_t ip = pc;
	cs_insn *insn;
	uint32_t n = 0;
	int known;

	if (!m->cs_ok || (insn = cs_malloc(m->cs)) == NULL)
		return size;
	while (n < ninsn && left && next_insn(m->cs, &code, &left, &ip, insn, &known))
		n++;
	cs_free(insn, 1);
	if (n == ninsn)
		return size - left;
	/* QEMU 7.2 counts and hands over the start of an instruction that crosses into the
	 * next page although it left that instruction to the next block: the bytes it had
	 * read so far, which are no whole instruction. */
	if (n + 1 == ninsn)
		return size - left;
	return size;
}

void jf_block_map_key_next(struct jf_block_map *m, uint32_t flags, uint32_t cflags)
{
	m->next_keyed = 1;
	m->next_flags = flags;
	m->next_cflags = cflags;
}

const struct jf_block *jf_block_map_executed(struct jf_block_map *m, uint64_t pc,
					     uint32_t flags, uint32_t cflags)
{
	struct slot *s = table_find(&m->pending, pc, 0, 0, 0);

	if (s && s->used) {
		struct jf_block b = s->block;

		table_del(&m->pending, s, 0);
		b.flags = flags;
		b.cflags = cflags;
		if (table_put(&m->known, &b, 1))
			return NULL;
	}
	s = table_find(&m->known, pc, flags, cflags, 1);
	return s && s->used ? &s->block : NULL;
}

uint64_t jf_block_map_count(const struct jf_block_map *m)
{
	return m->count;
}

uint64_t jf_block_map_undecodable(const struct jf_block_map *m)
{
	return m->undecodable;
}
