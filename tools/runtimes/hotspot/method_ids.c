/* Java methods as CODE_OBJECT records with small ids.
 *
 * A pc map entry names its frame's method in its 16-bit kind (JF_PC_MAP_CODE_OBJECTS), so
 * every method an nmethod runs, the ones compiled inline included, gets an id from 1 up
 * the first time the agent meets it, and one CODE_OBJECT record with its name
 * ("Class.method(signature)"), source file and first line. HotSpot never frees a
 * jmethodID, so an id stays the method's for the whole run. Beyond 65535 methods there is
 * no id left: such frames get 0, which reports count as code no method says. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

#define MAX_IDS 65535u
/* Open addressing, a power of two at least twice MAX_IDS, so a probe always ends. */
#define SLOTS (1u << 17)

struct slot {
	jmethodID method;
	uint16_t id;
};

static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *slots;
static uint32_t nids;

/* "Class.method(sig)" from JVMTI; "?" parts when it does not say. */
void jf_hs_method_name(jvmtiEnv *jvmti, jmethodID m, char *out, size_t size, char *file,
		       size_t file_size, uint32_t *line)
{
	char *name = NULL, *sig = NULL, *cls_sig = NULL, *source = NULL;
	jclass cls = NULL;
	jint nlines = 0;
	jvmtiLineNumberEntry *lines = NULL;
	size_t n;

	(*jvmti)->GetMethodName(jvmti, m, &name, &sig, NULL);
	if ((*jvmti)->GetMethodDeclaringClass(jvmti, m, &cls) == JVMTI_ERROR_NONE) {
		(*jvmti)->GetClassSignature(jvmti, cls, &cls_sig, NULL);
		(*jvmti)->GetSourceFileName(jvmti, cls, &source);
	}
	/* "Ljava/lang/String;" -> "java/lang/String" */
	n = cls_sig ? strlen(cls_sig) : 0;
	if (n >= 2 && cls_sig[0] == 'L' && cls_sig[n - 1] == ';') {
		cls_sig[n - 1] = '\0';
		snprintf(out, size, "%s.%s%s", cls_sig + 1, name ? name : "?", sig ? sig : "");
	} else {
		snprintf(out, size, "%s.%s%s", cls_sig ? cls_sig : "?", name ? name : "?",
			 sig ? sig : "");
	}
	snprintf(file, file_size, "%s", source ? source : "");
	*line = 0;
	if ((*jvmti)->GetLineNumberTable(jvmti, m, &nlines, &lines) == JVMTI_ERROR_NONE &&
	    nlines > 0)
		*line = (uint32_t)lines[0].line_number;
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)cls_sig);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)source);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)lines);
}

static uint32_t hash(jmethodID m)
{
	uint64_t v = (uint64_t)(uintptr_t)m;

	return (uint32_t)((v * 0x9e3779b97f4a7c15ull) >> 40) & (SLOTS - 1);
}

uint16_t jf_hs_method_id(jvmtiEnv *jvmti, jmethodID method)
{
	char name[512], file[256];
	uint32_t h, line;
	uint16_t id = 0;

	if (!method)
		return 0;
	pthread_mutex_lock(&ids_lock);
	if (!slots)
		slots = calloc(SLOTS, sizeof(*slots));
	if (!slots)
		goto out;
	for (h = hash(method); slots[h].method && slots[h].method != method; h = (h + 1) & (SLOTS - 1))
		;
	if (slots[h].method) {
		id = slots[h].id;
	} else if (nids < MAX_IDS) {
		id = (uint16_t)++nids;
		slots[h].method = method;
		slots[h].id = id;
		jf_hs_method_name(jvmti, method, name, sizeof(name), file, sizeof(file), &line);
		jf_emit_code_object(jf_hs_emitter, id, name, file, line);
	}
out:
	pthread_mutex_unlock(&ids_lock);
	return id;
}
