/* Uncommon traps as guards: every call from an nmethod into UncommonTrapBlob.
 *
 * C2 compiles a check it expects never to fail (a branch never taken while profiled, a
 * receiver class, a null) as a branch to an out-of-line call into UncommonTrapBlob, which
 * deoptimizes the frame and resumes in the interpreter. Each such call is one GUARD
 * record: its branch is the call itself (a guard that always exits when it runs), its
 * trace the nmethod's compile id, its guard id the call's offset in the nmethod, its
 * resume pc the bci of the innermost frame at the call (the debug info HotSpot keeps at
 * the call's return address, which the CompiledMethodLoad event lists), and its kind the
 * trap reason.
 *
 * The guard's kind names the reason and the frames at the call, innermost first, each
 * method with the bci it is at ("unstable_if: Traps.kind@12 <- Traps.run@40"): the
 * debug info's stack at the return address, which also gives the innermost bci.
 *
 * The reason is the call's argument, the trap request, which C2 loads as a constant into
 * the first Java argument register (esi) in the straight-line code before the call, with
 * stores of the frame's live values in between. A negative request packs the reason as
 * ~request >> _reason_shift, a positive one is a constant pool index whose class is not
 * loaded yet (reason "unloaded"); the shifts and the reasons' names are the JVM's own
 * (gHotSpotVMIntConstants). A call whose request is not such a constant keeps its reason
 * unsaid (kind 0).
 *
 * Calls are found by capstone in one linear pass over the nmethod's code (C2 puts no data
 * among its instructions), done only for code with a candidate: bytes E8 rel32 aiming
 * into UncommonTrapBlob whose return address is a pc of the event's debug info. */
#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "vm_structs.h"

#define CALL_SIZE 5
#define REASON_PREFIX "Deoptimization::Reason_"
/* op kinds of the reasons: 1 + the reason's value (HotSpot has about 32) */
#define REASON_KINDS 64
#define FRAMES_NAME_MAX 192

static uint64_t blob_start, blob_size;
static unsigned char reason_named[REASON_KINDS];

/* Op kinds above the reasons', one per distinct "reason: frames" name. */
static char **frame_names;
static size_t nframe_names, frame_names_cap;

void jf_hs_trap_blob(uint64_t start, uint64_t size)
{
	blob_start = start;
	blob_size = size;
}

/* The innermost frame's bci at pc, or -1 when the debug info has no entry there. */
static int bci_at(const jvmtiCompiledMethodLoadInlineRecord *rec, uint64_t pc)
{
	jint i;
	int bci = -1;

	/* several entries may name one pc; the last one, as the pc map keeps */
	for (i = 0; rec && i < rec->numpcs; i++)
		if ((uint64_t)(uintptr_t)rec->pcinfo[i].pc == pc &&
		    rec->pcinfo[i].numstackframes > 0)
			bci = rec->pcinfo[i].bcis[0];
	return bci;
}

/* The debug info's entry at pc (the last one, as bci_at), or NULL. */
static const PCStackInfo *stack_at(const jvmtiCompiledMethodLoadInlineRecord *rec, uint64_t pc)
{
	const PCStackInfo *found = NULL;
	jint i;

	for (i = 0; rec && i < rec->numpcs; i++)
		if ((uint64_t)(uintptr_t)rec->pcinfo[i].pc == pc && rec->pcinfo[i].numstackframes > 0)
			found = &rec->pcinfo[i];
	return found;
}

/* "Traps.kind" for a method: its class with dots, as LogCompilation writes it. */
static void frame_method(jvmtiEnv *jvmti, jmethodID m, char *out, size_t size)
{
	char *name = NULL, *cls_sig = NULL, *p;
	jclass cls = NULL;
	size_t n;

	(*jvmti)->GetMethodName(jvmti, m, &name, NULL, NULL);
	if ((*jvmti)->GetMethodDeclaringClass(jvmti, m, &cls) == JVMTI_ERROR_NONE)
		(*jvmti)->GetClassSignature(jvmti, cls, &cls_sig, NULL);
	n = cls_sig ? strlen(cls_sig) : 0;
	if (n >= 2 && cls_sig[0] == 'L' && cls_sig[n - 1] == ';') {
		cls_sig[n - 1] = '\0';
		for (p = cls_sig; *p; p++)
			if (*p == '/')
				*p = '.';
		snprintf(out, size, "%s.%s", cls_sig + 1, name ? name : "?");
	} else {
		snprintf(out, size, "?.%s", name ? name : "?");
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)cls_sig);
}

/* "REASON: M.a@1 <- M.b@7" into out (REASON empty when not told); a stack too long for
 * out ends in "...". */
static void frames_name(jvmtiEnv *jvmti, const PCStackInfo *st, const char *reason, char *out,
			size_t size)
{
	char method[160];
	size_t len;
	jint k;

	len = (size_t)snprintf(out, size, "%s:", reason ? reason : "");
	for (k = 0; k < st->numstackframes && len < size; k++) {
		frame_method(jvmti, st->methods[k], method, sizeof(method));
		len += (size_t)snprintf(out + len, size - len, "%s%s@%d", k ? " <- " : " ", method,
					(int)st->bcis[k]);
	}
	if (len >= size && size > 4)
		memcpy(out + size - 4, "...", 4);
}

/* The op kind named "reason: frames" (its OP_NAME written the first time); the reason's
 * own kind when the frames cannot be named (no memory, or all kinds taken). */
static uint16_t frames_kind(jvmtiEnv *jvmti, const PCStackInfo *st, uint16_t reason)
{
	char name[FRAMES_NAME_MAX];
	size_t i;

	if (!st)
		return reason;
	frames_name(jvmti, st, reason ? jf_hs_int_constant_name(REASON_PREFIX, reason - 1) : NULL,
		    name, sizeof(name));
	for (i = 0; i < nframe_names; i++)
		if (!strcmp(frame_names[i], name))
			return (uint16_t)(REASON_KINDS + i);
	if (REASON_KINDS + nframe_names > UINT16_MAX)
		return reason;
	if (nframe_names == frame_names_cap) {
		size_t cap = frame_names_cap ? 2 * frame_names_cap : 64;
		char **n = realloc(frame_names, cap * sizeof(*n));

		if (!n)
			return reason;
		frame_names = n;
		frame_names_cap = cap;
	}
	if (!(frame_names[nframe_names] = strdup(name)))
		return reason;
	if (!jf_emit_op_name(jf_hs_emitter, (uint16_t)(REASON_KINDS + nframe_names), name)) {
		free(frame_names[nframe_names]);
		return reason;
	}
	return (uint16_t)(REASON_KINDS + nframe_names++);
}

/* Whether the bytes at code[at] are a call into the blob with debug info at its return
 * address (start: where code runs). */
static int is_trap_call(const unsigned char *code, uint64_t at, uint64_t start,
			const jvmtiCompiledMethodLoadInlineRecord *rec)
{
	uint64_t ret = start + at + CALL_SIZE;
	int32_t rel;

	if (code[at] != 0xE8)
		return 0;
	memcpy(&rel, code + at + 1, sizeof(rel));
	return ret + (uint64_t)(int64_t)rel - blob_start < blob_size && bci_at(rec, ret) >= 0;
}

/* The op kind naming the reason of a trap request (its OP_NAME written the first
 * time), or 0 when this JVM does not say. */
static uint16_t reason_kind(int32_t request)
{
	int32_t shift, bits, reason;
	const char *name;

	if (request >= 0) {
		if (jf_hs_int_constant(REASON_PREFIX "unloaded", &reason) < 0)
			return 0;
	} else {
		if (jf_hs_int_constant("Deoptimization::_reason_shift", &shift) < 0 ||
		    jf_hs_int_constant("Deoptimization::_reason_bits", &bits) < 0 || shift < 0 ||
		    shift > 31 || bits <= 0 || bits > 31)
			return 0;
		reason = (int32_t)(((uint32_t)~request >> shift) & ((1u << bits) - 1));
	}
	if (reason < 0 || reason + 1 >= REASON_KINDS ||
	    !(name = jf_hs_int_constant_name(REASON_PREFIX, reason)))
		return 0;
	if (!reason_named[reason + 1] && jf_emit_op_name(jf_hs_emitter, (uint16_t)(reason + 1), name))
		reason_named[reason + 1] = 1;
	return (uint16_t)(reason + 1);
}

static int is_esi(x86_reg r)
{
	return r == X86_REG_ESI || r == X86_REG_RSI || r == X86_REG_SI || r == X86_REG_SIL;
}

/* Whether insn writes esi (or a part of rsi). */
static int writes_esi(csh cs, const cs_insn *insn)
{
	cs_regs read, written;
	uint8_t nread, nwritten, i;

	if (cs_regs_access(cs, insn, read, &nread, written, &nwritten) != CS_ERR_OK)
		return 1;
	for (i = 0; i < nwritten; i++)
		if (is_esi((x86_reg)written[i]))
			return 1;
	return 0;
}

/* "mov $imm, %esi": the trap request it loads. */
static int loads_request(const cs_insn *insn, int32_t *request)
{
	const cs_x86 *x = &insn->detail->x86;

	if (insn->id != X86_INS_MOV || x->op_count != 2 || x->operands[0].type != X86_OP_REG ||
	    x->operands[0].reg != X86_REG_ESI || x->operands[1].type != X86_OP_IMM)
		return 0;
	*request = (int32_t)x->operands[1].imm;
	return 1;
}

static int ends_straight_line(const cs_insn *insn)
{
	uint8_t i;

	for (i = 0; i < insn->detail->groups_count; i++) {
		uint8_t g = insn->detail->groups[i];

		if (g == CS_GRP_JUMP || g == CS_GRP_CALL || g == CS_GRP_RET || g == CS_GRP_INT ||
		    g == CS_GRP_IRET)
			return 1;
	}
	return 0;
}

/* One linear pass: a GUARD record for every trap call, with the request loaded since the
 * last instruction that ended straight-line code. */
static void describe_calls(jvmtiEnv *jvmti, uint64_t compile_id, uint64_t start, uint64_t size,
			   const unsigned char *code,
			   const jvmtiCompiledMethodLoadInlineRecord *rec)
{
	csh cs;
	cs_insn *insn;
	const uint8_t *p = code;
	size_t left = (size_t)size;
	uint64_t ip = start;
	int32_t request = 0;
	int has_request = 0;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	insn = cs_malloc(cs);
	while (insn && left) {
		uint64_t at = ip - start;

		if (!cs_disasm_iter(cs, &p, &left, &ip, insn)) {
			/* not an instruction capstone knows: step over a byte */
			p++;
			left--;
			ip++;
			has_request = 0;
			continue;
		}
		if (insn->size == CALL_SIZE && is_trap_call(code, at, start, rec))
			jf_emit_guard_kind(jf_hs_emitter, at, compile_id, start + at,
					   (uint64_t)insn->detail->x86.operands[0].imm,
					   (uint32_t)bci_at(rec, start + at + CALL_SIZE), 0,
					   frames_kind(jvmti, stack_at(rec, start + at + CALL_SIZE),
						       has_request ? reason_kind(request) : 0));
		if (loads_request(insn, &request))
			has_request = 1;
		else if (ends_straight_line(insn) || writes_esi(cs, insn))
			has_request = 0;
	}
	if (insn)
		cs_free(insn, 1);
	cs_close(&cs);
}

void jf_hs_emit_trap_sites(jvmtiEnv *jvmti, uint64_t compile_id, uint64_t start, uint64_t size,
			   const void *code_bytes, const void *compile_info)
{
	const jvmtiCompiledMethodLoadInlineRecord *rec = jf_hs_inline_record(compile_info);
	const unsigned char *code = code_bytes;
	uint64_t at;

	if (!blob_size || !rec || size < CALL_SIZE)
		return;
	for (at = 0; at + CALL_SIZE <= size; at++)
		if (is_trap_call(code, at, start, rec)) {
			describe_calls(jvmti, compile_id, start, size, code, rec);
			return;
		}
}
