/* The stencil table generated at build time by stencil_gen from stencils.c's object file:
 * each stencil's machine code and the holes the JIT patches. */
#ifndef MVM_STENCILS_H
#define MVM_STENCILS_H

#include "stencil_format.h"
#include "stencil_ids.h" /* generated: enum mvm_stencil_id { MVM_ST_add, ..., MVM_ST_COUNT } */

extern const struct mvm_stencil mvm_stencils[MVM_ST_COUNT];

#endif
