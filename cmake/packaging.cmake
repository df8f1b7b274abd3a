# `cpack -G DEB` in the build folder: jitflow_VERSION-1_ARCH.deb with everything
# `cmake --install` installs, under /usr. The library dependencies (libipt2, libopencsd1,
# libelf1, libcapstone4, libcjson1, libc6) come from dpkg-shlibdeps, which reads what the
# binaries actually link; qemu-user is what `jitflow record` runs programs under.
set(CPACK_PACKAGE_NAME jitflow)
set(CPACK_PACKAGE_VENDOR "the jitflow developers")
set(CPACK_PACKAGE_CONTACT "the jitflow developers <jitflow@invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "exact control-flow traces (Intel PT, CoreSight) of JIT-compiled code")
set(CPACK_PACKAGE_DESCRIPTION
  "jitflow decodes hardware control-flow traces (Intel PT, ARM CoreSight ETMv4/ETE/PTM) and reconstructs the exact path through JIT-compiled code from the code-zone records a runtime writes. It reports per-trace and per-guard exit statistics, the interpreter/jitted/native split and instructions per bytecode range. `jitflow record` makes Intel PT recordings under QEMU on machines without trace hardware. Includes libjitflow (decoder and analysis) and libjitflow-emit (the emitter a runtime links), with headers, pkg-config files and a CMake package.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON) # shlibs file and ldconfig triggers
set(CPACK_DEBIAN_PACKAGE_DEPENDS "qemu-user")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "linux-perf, libopencsd-bin")
include(CPack)
