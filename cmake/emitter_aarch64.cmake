# The emitter library built for AArch64 (build/imagemap/aarch64/libjitflow-emit.so.0), for
# runtimes that run under qemu-aarch64 in `jitflow record --arch aarch64` and load it at
# run time (LuaJIT's arm64 JIT through the FFI: tools/runtimes/luajit). Built with Debian's
# cross compiler (gcc-aarch64-linux-gnu, which tools/setup.sh --tests installs) when it is
# there; the same sources, version script and link options as libjitflow-emit.so.
find_program(JITFLOW_AARCH64_CC aarch64-linux-gnu-gcc)
if(JITFLOW_AARCH64_CC)
  set(emit_a64_dir ${PROJECT_BINARY_DIR}/imagemap/aarch64)
  set(emit_a64 ${emit_a64_dir}/libjitflow-emit.so.0)
  set(emit_a64_sources)
  foreach(src ${JITFLOW_EMIT_SOURCES})
    list(APPEND emit_a64_sources ${PROJECT_SOURCE_DIR}/imagemap/${src})
  endforeach()
  add_custom_command(OUTPUT ${emit_a64}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${emit_a64_dir}
    COMMAND ${JITFLOW_AARCH64_CC} -O2 -g -std=gnu11 -fPIC -shared -Wall -Wextra
            -I${PROJECT_SOURCE_DIR}/imagemap/include -I${PROJECT_SOURCE_DIR}/imagemap/emitter
            ${emit_a64_sources}
            -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/jitflow-emit.map
            -Wl,-Bsymbolic-functions -Wl,--no-undefined -Wl,-soname,libjitflow-emit.so.0
            -lpthread -o ${emit_a64}
    DEPENDS ${emit_a64_sources} ${PROJECT_SOURCE_DIR}/cmake/jitflow-emit.map
    COMMENT "Building the emitter library for AArch64"
    VERBATIM)
  add_custom_target(jitflow_emit_aarch64 ALL DEPENDS ${emit_a64})
endif()
