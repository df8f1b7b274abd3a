/* libjitflow-jvmti.so: describes a HotSpot JVM's code to jitflow (docs/hotspot.md).
 *
 *   java -agentpath:libjitflow-jvmti.so ...     (jitflow record adds it by itself)
 *
 * writes jit-PID.dump (in $JITFLOW_ZONE_DIR, else the current folder) through jitflow's
 * emitter: the interpreter's codelets, adapters and stubs (DynamicCodeGenerated), every
 * nmethod (CompiledMethodLoad) with its compile id, level, OSR bci and a map of its code
 * to the methods (inlined ones too) and bcis that ran there, its uncommon trap calls (with
 * their frames) and the points where control enters it other than at its start, and its
 * unload, and the name of every Java thread (ThreadStart, VMInit for the main one). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent.h"

struct jf_emitter *jf_hs_emitter;

struct code_entry {
	uint64_t start, size;
};

static pthread_mutex_t code_lock = PTHREAD_MUTEX_INITIALIZER;
static struct code_entry *code;
static size_t ncode, code_cap;

/* Linear: a JVM describes a few thousand blobs, and only loads and unloads look. size 0:
 * any size. */
static size_t code_find(uint64_t start, uint64_t size)
{
	size_t i;

	for (i = 0; i < ncode; i++) {
		if (code[i].start == start && (!size || code[i].size == size))
			return i;
	}
	return ncode;
}

/* Blobs HotSpot frees without an event (a compiler thread's "C1 temporary CodeBuffer"
 * when the thread ends, buffers GenerateEvents announced) leave entries behind; the code
 * cache never holds two blobs in one place, so one overlapping new code is gone: it is
 * freed (REGION_FREE) before the new code is loaded. Called with code_lock held. */
static void free_overlapping(uint64_t start, uint64_t size)
{
	size_t i = 0;

	while (i < ncode) {
		if (code[i].start < start + size && start < code[i].start + code[i].size) {
			jf_emit_region_free(jf_hs_emitter, code[i].start, code[i].size);
			code[i] = code[--ncode];
		} else {
			i++;
		}
	}
}

int jf_hs_code_add(uint64_t start, uint64_t size)
{
	int added = 0;

	pthread_mutex_lock(&code_lock);
	if (code_find(start, size) == ncode) {
		if (ncode == code_cap) {
			size_t cap = code_cap ? 2 * code_cap : 1024;
			struct code_entry *n = realloc(code, cap * sizeof(*n));

			if (!n) {
				pthread_mutex_unlock(&code_lock);
				return -1;
			}
			code = n;
			code_cap = cap;
		}
		free_overlapping(start, size);
		code[ncode].start = start;
		code[ncode++].size = size;
		added = 1;
	}
	pthread_mutex_unlock(&code_lock);
	return added;
}

uint64_t jf_hs_code_remove(uint64_t start)
{
	uint64_t size = 0;
	size_t i;

	pthread_mutex_lock(&code_lock);
	i = code_find(start, 0);
	if (i < ncode) {
		size = code[i].size;
		code[i] = code[--ncode];
	}
	pthread_mutex_unlock(&code_lock);
	return size;
}

/* Each bracket's event goes out at once: under `jitflow record` the agent's records are
 * dated by the write() that puts them in the file (its marker calls lie in this library,
 * not in the program), and a begin and an end that left in different writes would
 * bracket whatever the thread ran in between: up to its whole later work when the end
 * waited in the buffer until the thread ended (the main thread's callbacks at VMInit
 * fill the buffer). Two writes per callback; with the events' own clock (a capture from
 * hardware) nothing changes. */
void jf_hs_instrumentation_begin(void)
{
	jf_emit_event(jf_hs_emitter, JF_EVENT_INSTRUMENTATION_BEGIN, 0);
	jf_emitter_flush(jf_hs_emitter);
}

void jf_hs_instrumentation_end(void)
{
	jf_emit_event(jf_hs_emitter, JF_EVENT_INSTRUMENTATION_END, 0);
	jf_emitter_flush(jf_hs_emitter);
}

/* A Java thread's name for the OS thread running it: ThreadStart and VMInit run on the
 * thread itself, so its OS tid is gettid's (the tid a trace shows). Not bracketed as
 * instrumentation, which would cost every thread two more write()s at its start: the few
 * thousand instructions here count as native. */
static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	jvmtiThreadInfo info;

	(void)jni;
	if ((*jvmti)->GetThreadInfo(jvmti, thread, &info) == JVMTI_ERROR_NONE) {
		if (info.name)
			jf_emit_thread_name(jf_hs_emitter, (uint32_t)syscall(SYS_gettid), info.name);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
	}
}

/* Blobs made before the agent could listen (and buffers never announced) come now; the
 * main thread started before ThreadStart could be posted. */
static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
	on_thread_start(jvmti, jni, thread);
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	(void)jni;
	jf_hs_describe_final_blobs(jvmti);
	/* CompiledMethodLoad is queued for the Service Thread, which may not get to an
	 * nmethod installed just before the end: replay them all (those described already
	 * are skipped). */
	(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
	jf_emitter_flush(jf_hs_emitter);
}

static int enable(jvmtiEnv *jvmti, jvmtiEvent event)
{
	return (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, event, NULL) ==
		JVMTI_ERROR_NONE ? 0 : -1;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	jvmtiEnv *jvmti;
	jvmtiCapabilities caps;
	jvmtiEventCallbacks cb;

	(void)options;
	(void)reserved;
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
		fprintf(stderr, "jitflow-jvmti: this JVM offers no JVMTI 1.2\n");
		return JNI_ERR;
	}
	jf_hs_emitter = jf_emitter_open(NULL, 0);
	if (!jf_hs_emitter) {
		fprintf(stderr, "jitflow-jvmti: cannot open the zone file; the JVM runs without "
			"it\n");
		return JNI_OK;
	}
	/* First of all, so that reports speak HotSpot (analysis/runtime_hotspot.c). */
	jf_emit_event(jf_hs_emitter, JF_EVENT_RUNTIME, JF_RUNTIME_HOTSPOT);
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_compiled_method_load_events = 1;
	caps.can_get_source_file_name = 1;
	caps.can_get_line_numbers = 1;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
		fprintf(stderr, "jitflow-jvmti: the JVM refuses the capabilities for "
			"CompiledMethodLoad; compiled code is not described\n");
		return JNI_OK;
	}
	memset(&cb, 0, sizeof(cb));
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	cb.DynamicCodeGenerated = jf_hs_dynamic_code;
	cb.CompiledMethodLoad = jf_hs_compiled_load;
	cb.CompiledMethodUnload = jf_hs_compiled_unload;
	cb.ThreadStart = on_thread_start;
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE ||
	    enable(jvmti, JVMTI_EVENT_VM_INIT) < 0 || enable(jvmti, JVMTI_EVENT_VM_DEATH) < 0 ||
	    enable(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED) < 0 ||
	    enable(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD) < 0 ||
	    enable(jvmti, JVMTI_EVENT_COMPILED_METHOD_UNLOAD) < 0 ||
	    enable(jvmti, JVMTI_EVENT_THREAD_START) < 0)
		fprintf(stderr, "jitflow-jvmti: the JVM refused an event; code is described in "
			"part\n");
	return JNI_OK;
}
