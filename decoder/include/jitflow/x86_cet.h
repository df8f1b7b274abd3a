/* x86 instructions capstone 4 does not know, for the decoders that walk code with it (the
 * instruction walker here, the recorder's block classification). Depends on nothing but
 * the C library, so that code with its own block types can include it. */
#ifndef JITFLOW_X86_CET_H
#define JITFLOW_X86_CET_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The CET shadow-stack instructions that libgcc's unwinder runs (rdssp: F3 [REX] 0F 1E /1,
 * incssp: F3 [REX] 0F AE /5, register forms; every C++-style exception and LuaJIT trace
 * abort goes through them). Without CET they do nothing. The length of one at bytes (n of
 * them, 64-bit code), and its name when name is not NULL; 0 for anything else. */
size_t jf_x86_shadow_stack_nop(const uint8_t *bytes, size_t n, const char **name);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
