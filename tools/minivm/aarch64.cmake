# minivm cross-compiled for AArch64 with gcc-aarch64-linux-gnu (tools/setup.sh --tests
# installs it), when it is there: build/tools/minivm/minivm_a64, static and non-PIE like the
# x86-64 one, so that `jitflow record --arch aarch64` follows all of it. Its stencils are
# stencils.c compiled for AArch64 (stencil_holes_a64.h) and read by the same stencil_gen;
# its trace compiler writes them with jit_a64.c instead of jit_x86.c.
find_program(JITFLOW_AARCH64_CC aarch64-linux-gnu-gcc)
if(NOT JITFLOW_AARCH64_CC OR JITFLOW_SANITIZE OR JITFLOW_FUZZ)
  return()
endif()

# The x86-64 flags less -mcmodel and -fcf-protection (the holes say where code and data
# are), no branch protection (BTI/PAC instructions the copies do not need).
set(MINIVM_A64_STENCIL_FLAGS -O2 -fno-pic -fno-pie -ffunction-sections
    -fno-asynchronous-unwind-tables -fno-unwind-tables -mbranch-protection=none
    -fno-stack-protector -fomit-frame-pointer -fno-jump-tables -Wall -Wextra -Werror
    CACHE INTERNAL "fixed flags of minivm's AArch64 stencils (also used by tests)")
set(MINIVM_A64_GEN ${CMAKE_CURRENT_BINARY_DIR}/generated_a64)
add_custom_command(
  OUTPUT ${MINIVM_A64_GEN}/stencils.o
  COMMAND ${CMAKE_COMMAND} -E make_directory ${MINIVM_A64_GEN}
  COMMAND ${JITFLOW_AARCH64_CC} ${MINIVM_A64_STENCIL_FLAGS} -c
          ${CMAKE_CURRENT_SOURCE_DIR}/stencils.c -o ${MINIVM_A64_GEN}/stencils.o
  DEPENDS stencils.c stencil_holes_a64.h jit_abi.h
  COMMENT "minivm: compiling AArch64 stencils")
add_custom_command(
  OUTPUT ${MINIVM_A64_GEN}/stencil_table.c ${MINIVM_A64_GEN}/stencil_ids.h
  COMMAND minivm_stencil_gen ${MINIVM_A64_GEN}/stencils.o ${MINIVM_A64_GEN}/stencil_table.c
          ${MINIVM_A64_GEN}/stencil_ids.h
  DEPENDS minivm_stencil_gen ${MINIVM_A64_GEN}/stencils.o
  COMMENT "minivm: extracting AArch64 stencils")

get_target_property(minivm_sources minivm SOURCES)
list(FILTER minivm_sources EXCLUDE REGEX "(jit_x86\\.c|stencil_table\\.c)$")
list(TRANSFORM minivm_sources PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
set(minivm_a64 ${CMAKE_CURRENT_BINARY_DIR}/minivm_a64)
add_custom_command(
  OUTPUT ${minivm_a64}
  COMMAND ${JITFLOW_AARCH64_CC} -O2 -g -std=gnu11 -D_GNU_SOURCE -Wall -Wextra
          -Wno-unused-parameter -fno-pie -static -no-pie
          -I${CMAKE_CURRENT_SOURCE_DIR} -I${MINIVM_A64_GEN}
          -I${PROJECT_SOURCE_DIR}/imagemap/include -I${PROJECT_SOURCE_DIR}/imagemap/emitter
          -o ${minivm_a64} ${minivm_sources} ${CMAKE_CURRENT_SOURCE_DIR}/jit_a64.c
          ${MINIVM_A64_GEN}/stencil_table.c ${JITFLOW_EMIT_SOURCE_PATHS} -lpthread
  DEPENDS ${minivm_sources} jit_a64.c ${MINIVM_A64_GEN}/stencil_table.c
          ${JITFLOW_EMIT_SOURCE_PATHS}
  COMMENT "minivm: building minivm_a64 for AArch64"
  VERBATIM)
add_custom_target(minivm_a64 ALL DEPENDS ${minivm_a64})
