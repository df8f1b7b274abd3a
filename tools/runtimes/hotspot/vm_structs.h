/* HotSpot's own description of its C++ types, read in process.
 *
 * libjvm.so exports the tables the Serviceability Agent reads (gHotSpotVMStructs,
 * gHotSpotVMTypes and the exported offsets of their entries' fields), so the agent learns
 * where a field lives from the running JVM itself instead of compiling in offsets of one
 * JDK build. Each lookup returns -1 / NULL when this JVM does not describe the field. */
#ifndef JITFLOW_HOTSPOT_VM_STRUCTS_H
#define JITFLOW_HOTSPOT_VM_STRUCTS_H

#include <stdint.h>

/* 0 when this JVM exports the tables. */
int jf_hs_vm_structs_open(void);
/* Byte offset of a non-static field in its type. */
int64_t jf_hs_field_offset(const char *type, const char *field);
/* Address of a static field. */
void *jf_hs_static_address(const char *type, const char *field);
/* sizeof(type). */
int64_t jf_hs_type_size(const char *type);
/* The value of a named integer constant (gHotSpotVMIntConstants, e.g.
 * "Deoptimization::_reason_shift"); 0 when this JVM exports it. */
int jf_hs_int_constant(const char *name, int32_t *value);
/* The name, after prefix, of the first integer constant that starts with prefix and has
 * this value ("Deoptimization::Reason_", 23 -> "unstable_if"); NULL when none has. */
const char *jf_hs_int_constant_name(const char *prefix, int32_t value);
/* The value of an intx command-line flag (JVMFlag table). */
int jf_hs_flag_intx(const char *name, int64_t *value);

#endif
