/* Instruction lengths, classes and direct targets, decoded by capstone and cached by
 * address until the code map changes them. */
#include "jitflow/insn.h"
#include "jitflow/x86_cet.h"
#include "insn_cache_stats.h"

#include <capstone/capstone.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_INSN = 16, INITIAL_SLOTS = 1 << 12, RECENT_SLOTS = 1 << 11 };

struct slot {
	uint64_t ip;
	struct jf_insn_info info;
	uint8_t isa;
	uint8_t used;
	/* Decoded from bytes of one section alone: it holds until a change touches them
	 * (gen 0 then); else only in the code map's generation gen (bytes a fill callback
	 * gave, or none: it may say otherwise after any change). */
	uint8_t in_section;
	uint64_t gen;
};

/* A JIT changes its code thousands of times, a few hundred bytes each: the instructions
 * around a change are decoded again, not all of them. Where the changes since the last
 * lookup cover more bytes than the table's slots over this, looking up each of those
 * addresses would cost more than one pass over the table, which then forgets every
 * instruction between the lowest and the highest byte changed (HotSpot writes zone
 * records of 500 KB and more: emptying the table there sent 351 k instructions of a
 * 30 MB recording back to capstone, 6% of `stat`). */
enum { SLOTS_PER_CHANGED_BYTE = 4 };

struct jf_insn_cache {
	struct jf_codemap *map;
	uint64_t generation;
	/* The hot instructions (block ends, loop bodies) in a small direct-mapped table that
	 * stays in the CPU's cache; the big table behind it holds every instruction seen.
	 * A change of the code keeps both but for what it touched (follow_changes): a JIT
	 * changes its code thousands of times, and emptying the small table at each change
	 * sent the hot instructions' next lookups to the big one, a cache miss each. */
	struct slot recent[RECENT_SLOTS];
	struct slot *slots;
	size_t mask, used;
	uint64_t recent_misses;
	csh cs[JF_ISA_T32 + 1];  /* one capstone handle per ISA, opened on first use */
	cs_insn *insn[JF_ISA_T32 + 1];
};

/* Capstone 4 sorts a global table on first use, inside cs_disasm_iter, without a lock
 * (the registers x86 instructions embed in their text, looked up for every x86
 * instruction it prints: X86_insn_reg_intel; capstone issue 1647): two threads decoding at
 * once (pt_parallel.c) would sort it at the same time. It is sorted once, under the lock,
 * before the first x86 handle decodes (sort_x86_table), and x86 decodes then take no lock:
 * with one, the threads of `stat -j 16`, which decode the same code while their caches
 * warm and in every hand-over's blocks, waited for each other there (callgrind, threads
 * in turn: the busiest of 16 threads 0.21 G instructions on the damaged capture, 0.14 G
 * without the lock). The ARM architectures, whose tables were not checked, keep it. */
static pthread_mutex_t capstone_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t x86_table_once = PTHREAD_ONCE_INIT;
static int x86_table_sorted;

/* One x86 instruction printed with its details sorts the table. */
static void sort_x86_table(void)
{
	static const uint8_t nop[] = { 0x90 };
	const uint8_t *code = nop;
	size_t left = sizeof(nop);
	uint64_t addr = 0;
	cs_insn *insn;
	csh h;

	pthread_mutex_lock(&capstone_lock);
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) == CS_ERR_OK) {
		cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
		insn = cs_malloc(h);
		x86_table_sorted = insn && cs_disasm_iter(h, &code, &left, &addr, insn);
		if (insn)
			cs_free(insn, 1);
		cs_close(&h);
	}
	pthread_mutex_unlock(&capstone_lock);
}

static int is_x86(enum jf_isa isa)
{
	return isa == JF_ISA_X86_16 || isa == JF_ISA_X86_32 || isa == JF_ISA_X86_64;
}

static size_t disasm(enum jf_isa isa, csh h, const uint8_t **code, size_t *left, uint64_t *addr,
		     cs_insn *insn)
{
	size_t n;

	if (is_x86(isa) && x86_table_sorted)
		return cs_disasm_iter(h, code, left, addr, insn);
	pthread_mutex_lock(&capstone_lock);
	n = cs_disasm_iter(h, code, left, addr, insn);
	pthread_mutex_unlock(&capstone_lock);
	return n;
}

struct jf_insn_cache *jf_insn_cache_new(struct jf_codemap *map)
{
	struct jf_insn_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->map = map;
	c->slots = calloc(INITIAL_SLOTS, sizeof(*c->slots));
	if (!c->slots) {
		free(c);
		return NULL;
	}
	c->mask = INITIAL_SLOTS - 1;
	c->generation = jf_codemap_generation(map);
	return c;
}

void jf_insn_cache_free(struct jf_insn_cache *c)
{
	int i;

	if (!c)
		return;
	for (i = 0; i <= JF_ISA_T32; i++) {
		if (c->insn[i])
			cs_free(c->insn[i], 1);
		if (c->cs[i])
			cs_close(&c->cs[i]);
	}
	free(c->slots);
	free(c);
}

static int open_isa(struct jf_insn_cache *c, enum jf_isa isa)
{
	cs_arch arch;
	cs_mode mode;
	cs_err rc;

	if (c->cs[isa])
		return 0;
	switch (isa) {
	case JF_ISA_X86_16: arch = CS_ARCH_X86; mode = CS_MODE_16; break;
	case JF_ISA_X86_32: arch = CS_ARCH_X86; mode = CS_MODE_32; break;
	case JF_ISA_X86_64: arch = CS_ARCH_X86; mode = CS_MODE_64; break;
	case JF_ISA_A64: arch = CS_ARCH_ARM64; mode = CS_MODE_ARM; break;
	case JF_ISA_A32: arch = CS_ARCH_ARM; mode = CS_MODE_ARM; break;
	case JF_ISA_T32: arch = CS_ARCH_ARM; mode = CS_MODE_THUMB; break;
	default: return -1;
	}
	if (arch == CS_ARCH_X86)
		pthread_once(&x86_table_once, sort_x86_table);
	pthread_mutex_lock(&capstone_lock);
	rc = cs_open(arch, mode, &c->cs[isa]);
	pthread_mutex_unlock(&capstone_lock);
	if (rc != CS_ERR_OK)
		return -1;
	cs_option(c->cs[isa], CS_OPT_DETAIL, CS_OPT_ON);
	c->insn[isa] = cs_malloc(c->cs[isa]);
	return c->insn[isa] ? 0 : -1;
}

static int has_group(csh h, const cs_insn *insn, unsigned group)
{
	return cs_insn_group(h, insn, group);
}

/* Length of a ModRM-addressed operand (ModRM byte, SIB and displacement), 64-bit
 * addressing. Used only for PTWRITE, which capstone 4 does not know. */
static int modrm_length(const uint8_t *p, size_t n)
{
	uint8_t modrm, mod, rm;
	int len = 1;

	if (n < 1)
		return -1;
	modrm = p[0];
	mod = modrm >> 6;
	rm = modrm & 7;
	if (mod != 3 && rm == 4) {
		if (n < 2)
			return -1;
		len++;
		if (mod == 0 && (p[1] & 7) == 5)
			len += 4;
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2 || (mod == 0 && rm == 5))
		len += 4;
	return (size_t)len <= n ? len : -1;
}

/* PTWRITE: F3 [REX.W] 0F AE /4 (memory or register operand). REX prefixes exist in 64-bit
 * code only (0x40-0x4f are inc/dec elsewhere). */
static int ptwrite_length(const uint8_t *b, size_t n, enum jf_isa isa)
{
	size_t i = 0;
	int m;

	if (n < 4 || b[i++] != 0xf3)
		return -1;
	if (isa == JF_ISA_X86_64 && (b[i] & 0xf0) == 0x40)
		i++;
	if (i + 3 > n || b[i] != 0x0f || b[i + 1] != 0xae || ((b[i + 2] >> 3) & 7) != 4)
		return -1;
	m = modrm_length(b + i + 2, n - i - 2);
	return m < 0 ? -1 : (int)(i + 2 + (size_t)m);
}

size_t jf_x86_shadow_stack_nop(const uint8_t *b, size_t n, const char **name)
{
	size_t i = 1;
	unsigned op, reg;

	if (!n || b[0] != 0xf3)
		return 0;
	if (i < n && (b[i] & 0xf0) == 0x40)
		i++; /* REX */
	if (i + 3 > n || b[i] != 0x0f || b[i + 2] >> 6 != 3)
		return 0;
	op = b[i + 1];
	reg = (b[i + 2] >> 3) & 7;
	if (name)
		*name = op == 0x1e ? "rdssp" : "incssp";
	return (op == 0x1e && reg == 1) || (op == 0xae && reg == 5) ? i + 3 : 0;
}

static void classify_x86(csh h, const cs_insn *insn, struct jf_insn_info *info)
{
	const cs_x86 *x86 = &insn->detail->x86;
	int direct = x86->op_count == 1 && x86->operands[0].type == X86_OP_IMM;

	info->cls = JF_INSN_OTHER;
	switch (insn->id) {
	case X86_INS_JMP:
		info->cls = direct ? JF_INSN_JUMP : JF_INSN_JUMP_INDIRECT;
		break;
	case X86_INS_CALL:
		info->cls = direct ? JF_INSN_CALL : JF_INSN_CALL_INDIRECT;
		break;
	case X86_INS_RET:
		info->cls = JF_INSN_RETURN;
		break;
	case X86_INS_LCALL: case X86_INS_SYSCALL: case X86_INS_SYSENTER:
	case X86_INS_INT: case X86_INS_INT1: case X86_INS_INT3: case X86_INS_INTO:
		info->cls = JF_INSN_FAR;
		info->far_call = 1;
		break;
	case X86_INS_LJMP: case X86_INS_RETF:
	case X86_INS_SYSEXIT: case X86_INS_SYSRET:
	case X86_INS_IRET: case X86_INS_IRETD: case X86_INS_IRETQ:
	case X86_INS_VMLAUNCH: case X86_INS_VMRESUME: case X86_INS_VMCALL:
	case X86_INS_UD2:
		info->cls = JF_INSN_FAR;
		break;
	default:
		if (has_group(h, insn, CS_GRP_JUMP))
			info->cls = JF_INSN_COND;
		break;
	}
	if (direct && (info->cls == JF_INSN_JUMP || info->cls == JF_INSN_CALL ||
		       info->cls == JF_INSN_COND))
		info->target = (uint64_t)x86->operands[0].imm;
}

static void classify_arm(csh h, const cs_insn *insn, enum jf_isa isa, struct jf_insn_info *info)
{
	int jump = has_group(h, insn, CS_GRP_JUMP), call = has_group(h, insn, CS_GRP_CALL);
	int ret = has_group(h, insn, CS_GRP_RET);
	int direct = 0, cond = 0;
	uint64_t target = 0;

	if (isa == JF_ISA_A64) {
		const cs_arm64 *a = &insn->detail->arm64;
		int i;

		cond = a->cc != ARM64_CC_INVALID && a->cc != ARM64_CC_AL && a->cc != ARM64_CC_NV;
		if (insn->id == ARM64_INS_CBZ || insn->id == ARM64_INS_CBNZ ||
		    insn->id == ARM64_INS_TBZ || insn->id == ARM64_INS_TBNZ)
			cond = 1;
		for (i = 0; i < a->op_count; i++) {
			if (a->operands[i].type == ARM64_OP_IMM) {
				direct = 1;
				target = (uint64_t)a->operands[i].imm;
			}
		}
		if (insn->id == ARM64_INS_RET || insn->id == ARM64_INS_ERET)
			ret = 1;
	} else {
		const cs_arm *a = &insn->detail->arm;
		int i;

		cond = a->cc != ARM_CC_INVALID && a->cc != ARM_CC_AL;
		for (i = 0; i < a->op_count; i++) {
			if (a->operands[i].type == ARM_OP_IMM) {
				direct = 1;
				target = (uint64_t)(uint32_t)a->operands[i].imm;
			}
		}
	}
	info->cls = JF_INSN_OTHER;
	if (ret)
		info->cls = JF_INSN_RETURN;
	else if (call)
		info->cls = direct ? JF_INSN_CALL : JF_INSN_CALL_INDIRECT;
	else if (jump && cond)
		info->cls = JF_INSN_COND;
	else if (jump)
		info->cls = direct ? JF_INSN_JUMP : JF_INSN_JUMP_INDIRECT;
	if (direct && info->cls != JF_INSN_OTHER && info->cls != JF_INSN_RETURN)
		info->target = target;
}

/* The instruction at ip into *info; *mapped: how many bytes from ip on the section
 * holding ip has (0: none holds it, the bytes are the fill callback's). */
static int decode(struct jf_insn_cache *c, enum jf_isa isa, uint64_t ip,
		  struct jf_insn_info *info, size_t *mapped)
{
	uint8_t bytes[MAX_INSN];
	const uint8_t *code = bytes;
	size_t n = jf_codemap_read_mapped(c->map, ip, bytes, sizeof(bytes));
	uint64_t addr = ip;
	size_t left;
	int len;

	memset(info, 0, sizeof(*info));
	info->cls = JF_INSN_ERROR;
	*mapped = n;
	if (n == 0)
		n = jf_codemap_read(c->map, ip, bytes, sizeof(bytes));
	/* An instruction may straddle two sections: read the rest from the next one. */
	if (n > 0 && n < sizeof(bytes))
		n += jf_codemap_read(c->map, ip + n, bytes + n, sizeof(bytes) - n);
	if (n == 0 || open_isa(c, isa) < 0)
		return -1;
	/* Before capstone: capstone 4 does not know PTWRITE, and reads its memory forms
	 * (F3 0F AE /4) as XSAVE with a REP prefix. */
	if (isa <= JF_ISA_X86_64 && (len = ptwrite_length(bytes, n, isa)) > 0) {
		info->size = (uint8_t)len;
		info->cls = JF_INSN_PTWRITE;
		return 0;
	}
	left = n;
	if (isa == JF_ISA_X86_64 && (left = jf_x86_shadow_stack_nop(bytes, n, NULL)) > 0) {
		info->size = (uint8_t)left;
		info->cls = JF_INSN_OTHER;
		return 0;
	}
	left = n;
	if (disasm(isa, c->cs[isa], &code, &left, &addr, c->insn[isa])) {
		info->size = (uint8_t)c->insn[isa]->size;
		if (isa <= JF_ISA_X86_64)
			classify_x86(c->cs[isa], c->insn[isa], info);
		else
			classify_arm(c->cs[isa], c->insn[isa], isa, info);
		return 0;
	}
	return -1;
}

static int grow(struct jf_insn_cache *c)
{
	size_t cap = (c->mask + 1) * 2, i;
	struct slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -1;
	for (i = 0; i <= c->mask; i++) {
		size_t j;

		if (!c->slots[i].used)
			continue;
		j = (size_t)(c->slots[i].ip * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
		while (slots[j].used)
			j = (j + 1) & (cap - 1);
		slots[j] = c->slots[i];
	}
	free(c->slots);
	c->slots = slots;
	c->mask = cap - 1;
	return 0;
}

/* Whether slot s holds in the code map's current generation. */
static int slot_current(const struct jf_insn_cache *c, const struct slot *s)
{
	return s->in_section ? s->gen != 0 : s->gen == c->generation;
}

static struct slot *recent_slot(struct jf_insn_cache *c, uint64_t ip)
{
	return &c->recent[(ip ^ ip >> 11) & (RECENT_SLOTS - 1)];
}

/* The lowest address of an instruction whose bytes may reach byte from. */
static uint64_t first_reaching(uint64_t from)
{
	return from > MAX_INSN ? from - MAX_INSN : 0;
}

/* Every slot of an instruction whose bytes may lie in [from, to) or next to them: stale
 * (kept in its chain of the table, decoded again when asked for; emptied in the small
 * table, whose lookups look no further than ip, isa and used). */
static void forget_range(struct jf_insn_cache *c, uint64_t from, uint64_t to)
{
	uint64_t ip = first_reaching(from);

	for (;; ip++) {
		size_t j = (size_t)(ip * 0x9e3779b97f4a7c15ull >> 20) & c->mask;
		struct slot *r = recent_slot(c, ip);

		if (r->ip == ip)
			r->used = 0;
		for (; c->slots[j].used; j = (j + 1) & c->mask)
			if (c->slots[j].ip == ip)
				c->slots[j].gen = 0;
		if (ip >= to)
			break;
	}
}

/* forget_range over [from, to) by one pass over both tables: every slot whose
 * instruction may touch those bytes. */
static void forget_by_pass(struct jf_insn_cache *c, uint64_t from, uint64_t to)
{
	uint64_t lo = first_reaching(from);
	size_t i;

	for (i = 0; i <= c->mask; i++)
		if (c->slots[i].used && c->slots[i].ip >= lo && c->slots[i].ip <= to)
			c->slots[i].gen = 0;
	for (i = 0; i < RECENT_SLOTS; i++)
		if (c->recent[i].ip >= lo && c->recent[i].ip <= to)
			c->recent[i].used = 0;
}

/* The code map changed since the last lookup: forget what the changes touched (all of
 * it where the map no longer tells what they were; by one pass over the table where they
 * cover many bytes). */
static void follow_changes(struct jf_insn_cache *c, uint64_t gen)
{
	uint64_t g, from, to, bytes = 0, lowest = UINT64_MAX, highest = 0;
	uint64_t limit = (uint64_t)(c->mask + 1) / SLOTS_PER_CHANGED_BYTE;
	size_t i;
	int all = gen < c->generation;

	for (g = c->generation + 1; !all && g <= gen; g++) {
		all = !jf_codemap_change(c->map, g, &from, &to);
		if (all)
			break;
		bytes += to - from;
		lowest = from < lowest ? from : lowest;
		highest = to > highest ? to : highest;
	}
	if (all) {
		memset(c->slots, 0, (c->mask + 1) * sizeof(*c->slots));
		memset(c->recent, 0, sizeof(c->recent));
		c->used = 0;
	} else {
		if (bytes > limit) {
			forget_by_pass(c, lowest, highest);
		} else {
			for (g = c->generation + 1; g <= gen; g++) {
				jf_codemap_change(c->map, g, &from, &to);
				forget_range(c, from, to);
			}
		}
		/* Bytes no section held (a fill callback's, or none) may say otherwise now. */
		for (i = 0; i < RECENT_SLOTS; i++)
			if (!c->recent[i].in_section)
				c->recent[i].used = 0;
	}
	c->generation = gen;
}

int jf_insn_at(struct jf_insn_cache *c, enum jf_isa isa, uint64_t ip, struct jf_insn_info *info)
{
	uint64_t gen = jf_codemap_generation(c->map);
	struct slot *recent = recent_slot(c, ip);
	struct slot *s;
	size_t j, mapped;

	if (gen != c->generation)
		follow_changes(c, gen);
	if (recent->used && recent->ip == ip && recent->isa == isa) {
		*info = recent->info;
		return info->cls == JF_INSN_ERROR ? -1 : 0;
	}
	c->recent_misses++;
	j = (size_t)(ip * 0x9e3779b97f4a7c15ull >> 20) & c->mask;
	while (c->slots[j].used) {
		if (c->slots[j].ip == ip && c->slots[j].isa == isa)
			break;
		j = (j + 1) & c->mask;
	}
	s = &c->slots[j];
	if (s->used && slot_current(c, s)) {
		*info = s->info;
		*recent = *s;
		return info->cls == JF_INSN_ERROR ? -1 : 0;
	}
	decode(c, isa, ip, info, &mapped);
	recent->ip = ip;
	recent->isa = (uint8_t)isa;
	recent->info = *info;
	recent->used = 1;
	recent->in_section = info->cls != JF_INSN_ERROR && mapped >= info->size;
	recent->gen = gen;
	if (!s->used) {
		/* Keep the table at most half full; a failed grow only costs speed. */
		if ((c->used + 1) * 2 > c->mask + 1 && grow(c) == 0) {
			j = (size_t)(ip * 0x9e3779b97f4a7c15ull >> 20) & c->mask;
			while (c->slots[j].used)
				j = (j + 1) & c->mask;
		}
		if ((c->used + 1) * 2 > c->mask + 1)
			return info->cls == JF_INSN_ERROR ? -1 : 0;
		s = &c->slots[j];
		c->used++;
	}
	/* A new slot, or a stale one of the same instruction address decoded again. */
	*s = *recent;
	return info->cls == JF_INSN_ERROR ? -1 : 0;
}

uint64_t jf_insn_cache_recent_misses(const struct jf_insn_cache *c)
{
	return c->recent_misses;
}

int jf_insn_next_ip(struct jf_insn_cache *c, enum jf_isa isa, uint64_t ip, uint64_t *next)
{
	struct jf_insn_info info;

	if (jf_insn_at(c, isa, ip, &info) < 0)
		return -1;
	if (info.cls == JF_INSN_JUMP || info.cls == JF_INSN_CALL)
		*next = info.target;
	else
		*next = ip + info.size;
	return 0;
}

/* The next instruction of a block. CoreSight executed ranges are contiguous: OpenCSD ends
 * a range at every branch, taken or not, so its instructions follow each other in memory
 * and no branch is followed. A64 and A32 instructions are 4 bytes (no decoding needed, so
 * instructions newer than capstone still list); T32 ones are 2 or 4 bytes, as capstone
 * decodes them. x86 blocks follow direct jumps and calls, as libipt's do. */
static int next_in_block(struct jf_insn_cache *c, enum jf_isa isa, uint64_t ip, uint64_t *next)
{
	struct jf_insn_info info;

	if (isa == JF_ISA_A64 || isa == JF_ISA_A32) {
		*next = ip + 4;
		return 0;
	}
	if (isa == JF_ISA_T32) {
		if (jf_insn_at(c, JF_ISA_T32, ip, &info) < 0)
			return -1;
		*next = ip + info.size;
		return 0;
	}
	return jf_insn_next_ip(c, isa, ip, next);
}

int jf_block_walk(struct jf_insn_cache *c, const struct jf_block *b,
		  void (*fn)(void *ctx, uint64_t ip), void *ctx, uint64_t *stop_ip)
{
	uint64_t ip = b->start;
	uint32_t i;

	for (i = 0; i < b->ninsn; i++) {
		fn(ctx, ip);
		if (i + 1 == b->ninsn)
			break;
		if (next_in_block(c, (enum jf_isa)b->isa, ip, &ip) < 0) {
			if (stop_ip)
				*stop_ip = ip;
			return -1;
		}
	}
	if (ip != b->last) {
		if (stop_ip)
			*stop_ip = ip;
		return -1;
	}
	return 0;
}

size_t jf_insn_disasm(struct jf_insn_cache *c, enum jf_isa isa, uint64_t ip, char *buf,
		      size_t bufsize)
{
	uint8_t bytes[MAX_INSN];
	const uint8_t *code = bytes;
	size_t n = jf_codemap_read(c->map, ip, bytes, sizeof(bytes)), left;
	uint64_t addr = ip;
	cs_insn *insn;
	const char *name;
	int len;

	if (bufsize)
		buf[0] = 0;
	if (n > 0 && n < sizeof(bytes))
		n += jf_codemap_read(c->map, ip + n, bytes + n, sizeof(bytes) - n);
	if (n == 0 || open_isa(c, isa) < 0)
		return 0;
	insn = c->insn[isa];
	len = isa <= JF_ISA_X86_64 ? ptwrite_length(bytes, n, isa) : -1;
	if (len > 0) {
		snprintf(buf, bufsize, "ptwrite");
		return (size_t)len;
	}
	left = isa == JF_ISA_X86_64 ? jf_x86_shadow_stack_nop(bytes, n, &name) : 0;
	if (left > 0) {
		snprintf(buf, bufsize, "%s", name);
		return left;
	}
	left = n;
	if (!disasm(isa, c->cs[isa], &code, &left, &addr, insn))
		return 0;
	if (insn->op_str[0])
		snprintf(buf, bufsize, "%s %s", insn->mnemonic, insn->op_str);
	else
		snprintf(buf, bufsize, "%s", insn->mnemonic);
	return insn->size;
}

enum jf_block_end jf_insn_class_to_end(enum jf_insn_class cls)
{
	switch (cls) {
	case JF_INSN_OTHER: return JF_END_NONE;
	case JF_INSN_PTWRITE: return JF_END_NONE;
	case JF_INSN_COND: return JF_END_COND;
	case JF_INSN_JUMP: return JF_END_JUMP;
	case JF_INSN_JUMP_INDIRECT: return JF_END_JUMP_INDIRECT;
	case JF_INSN_CALL: return JF_END_CALL;
	case JF_INSN_CALL_INDIRECT: return JF_END_CALL_INDIRECT;
	case JF_INSN_RETURN: return JF_END_RETURN;
	case JF_INSN_FAR: return JF_END_FAR;
	default: return JF_END_UNKNOWN;
	}
}
