/* jitflow's JVMTI agent for HotSpot: the parts share one emitter and one table of the
 * code they have described. */
#ifndef JITFLOW_HOTSPOT_AGENT_H
#define JITFLOW_HOTSPOT_AGENT_H

#include <jvmti.h>
/* after jvmti.h, whose types it uses */
#include <jvmticmlr.h>
#include <stdint.h>

#include <jitflow/emitter.h>

extern struct jf_emitter *jf_hs_emitter;

/* Described code (start -> size), so that a blob announced twice (GenerateEvents replays
 * what DynamicCodeGenerated already said) is loaded once and an unload knows the size.
 * jf_hs_code_add returns 1 when [start, start + size) was new (after freeing, with REGION_FREE records,
 * described code it overlaps, which HotSpot freed without saying), 0 when already there,
 * -1 without memory. */
int jf_hs_code_add(uint64_t start, uint64_t size);
/* Removes start; its size, or 0 when it was not described. */
uint64_t jf_hs_code_remove(uint64_t start);

/* The template interpreter's codelets, one region each (interpreter_codelets.c); 0 when
 * described, -1 when this JVM does not tell where they are. */
int jf_hs_describe_codelets(void);

/* Blobs whose code is only complete when the VM ends (code_blobs.c). */
void jf_hs_describe_final_blobs(jvmtiEnv *jvmti);

/* The inline records (pc -> frames) of a CompiledMethodLoad's compile_info; NULL when it
 * has none (compiled_methods.c). */
const jvmtiCompiledMethodLoadInlineRecord *jf_hs_inline_record(const void *compile_info);

/* A method's name "Class.method(sig)", source file and first line from JVMTI; its small
 * id (1-65535, 0 when none is left), given with a CODE_OBJECT record the first time
 * (method_ids.c). */
void jf_hs_method_name(jvmtiEnv *jvmti, jmethodID m, char *out, size_t size, char *file,
		       size_t file_size, uint32_t *line);
uint16_t jf_hs_method_id(jvmtiEnv *jvmti, jmethodID method);

/* Uncommon traps (trap_sites.c): where UncommonTrapBlob is, then, per nmethod, a GUARD
 * record for each call into it, its kind naming the reason and the frames there. */
void jf_hs_trap_blob(uint64_t start, uint64_t size);
void jf_hs_emit_trap_sites(jvmtiEnv *jvmti, uint64_t compile_id, uint64_t start, uint64_t size,
			   const void *code_bytes, const void *compile_info);

/* POINT records where control enters an nmethod other than at its start (OSR entry,
 * deopt handlers) and at its verified entry, which shows when it was made not entrant
 * (nmethod_points.c). */
struct jf_nmethod_facts;
void jf_hs_emit_nmethod_points(const struct jf_nmethod_facts *nm, uint64_t start, uint64_t size);

/* JVMTI callbacks (code_blobs.c, compiled_methods.c). */
void JNICALL jf_hs_dynamic_code(jvmtiEnv *jvmti, const char *name, const void *address,
				jint length);
void JNICALL jf_hs_compiled_load(jvmtiEnv *jvmti, jmethodID method, jint code_size,
				 const void *code_addr, jint map_length,
				 const jvmtiAddrLocationMap *map, const void *compile_info);
void JNICALL jf_hs_compiled_unload(jvmtiEnv *jvmti, jmethodID method, const void *code_addr);

/* The callbacks run JVMTI and the emitter only to describe code: a report counts what a
 * thread runs between these as instrumentation, not as the JVM's own work. */
void jf_hs_instrumentation_begin(void);
void jf_hs_instrumentation_end(void);

#endif
