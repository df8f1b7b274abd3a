/* DynamicCodeGenerated: code HotSpot generates outside nmethods, each blob a region. The
 * interpreter is described codelet by codelet (interpreter_codelets.c); adapters become
 * trampolines, the blobs an uncommon trap or a deoptimization leaves compiled code
 * through become exit stubs, everything else (runtime stubs, vtable stubs, buffers) keeps
 * HotSpot's name as "other" code.
 *
 * HotSpot's "native signature handlers" buffers are announced (at VMInit) before most of
 * their code exists: each new handler is appended to a buffer, never changed afterwards,
 * and runs only once it is there, and no event says so. They are described when the VM
 * ends (jf_hs_describe_final_blobs) with every handler they then hold; the decoder's
 * early-code fill serves each handler's bytes from that record wherever it ran before,
 * and reports count those instructions as code no record described yet. */
#include <string.h>

#include "agent.h"

static const char signature_handlers[] = "native signature handlers";
static int final_pass;

static uint32_t kind_of(const char *name)
{
	if (strstr(name, "adapters"))
		return JF_REGION_TRAMPOLINE;
	if (!strcmp(name, "UncommonTrapBlob") || !strcmp(name, "DeoptimizationBlob"))
		return JF_REGION_EXIT_STUB;
	return JF_REGION_OTHER;
}

void JNICALL jf_hs_dynamic_code(jvmtiEnv *jvmti, const char *name, const void *address,
				jint length)
{
	struct jf_region r;

	(void)jvmti;
	if (!name || !address || length <= 0)
		return;
	if (!strcmp(name, signature_handlers) && !final_pass)
		return;
	jf_hs_instrumentation_begin();
	if (strcmp(name, "Interpreter") || jf_hs_describe_codelets() < 0) {
		memset(&r, 0, sizeof(r));
		r.name = name;
		r.addr = (uint64_t)(uintptr_t)address;
		r.code = address;
		r.size = (uint64_t)length;
		r.kind = strcmp(name, "Interpreter") ? kind_of(name) : JF_REGION_INTERPRETER;
		if (jf_hs_code_add(r.addr, r.size) == 1)
			jf_emit_region_load(jf_hs_emitter, &r);
		if (!strcmp(name, "UncommonTrapBlob"))
			jf_hs_trap_blob(r.addr, r.size);
	}
	jf_hs_instrumentation_end();
}

void jf_hs_describe_final_blobs(jvmtiEnv *jvmti)
{
	final_pass = 1;
	(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
}
