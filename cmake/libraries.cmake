# The installable libraries, built from the objects the modules already compile (once):
#   libjitflow-emit.so/.a  the runtime-side emitter (libc and pthread only)
#   libjitflow.so/.a       decoder + imagemap + zones + analysis
# Every module library is compiled position-independent with hidden visibility; the public
# headers (*/include/jitflow/*.h) declare their functions with default visibility, and a
# version script puts the exported ones in one version node and hides anything else.
include(GNUInstallDirs)

# The in-tree module libraries whose objects make up libjitflow, left to right.
set(JITFLOW_LIBRARY_PARTS jitflow_decoder jitflow_zones jitflow_imagemap jitflow_analysis)
set(JITFLOW_SOVERSION ${PROJECT_VERSION_MAJOR})
set(JITFLOW_INCLUDE_DIRS
  ${PROJECT_SOURCE_DIR}/decoder/include
  ${PROJECT_SOURCE_DIR}/imagemap/include
  ${PROJECT_SOURCE_DIR}/analysis/include)

foreach(part ${JITFLOW_LIBRARY_PARTS} jitflow_emit)
  set_target_properties(${part} PROPERTIES
    POSITION_INDEPENDENT_CODE ON
    C_VISIBILITY_PRESET hidden)
  # Calls between the library's own public functions stay direct (no PLT).
  target_compile_options(${part} PRIVATE -fno-semantic-interposition)
endforeach()

# jitflow_library(NAME OUTPUT_NAME VERSION_SCRIPT PARTS...): a shared and a static library
# (NAME_shared, NAME_static) from the objects of PARTS.
function(jitflow_library name output_name version_script)
  set(objects)
  foreach(part ${ARGN})
    list(APPEND objects $<TARGET_OBJECTS:${part}>)
  endforeach()
  add_library(${name}_shared SHARED ${objects})
  add_library(${name}_static STATIC ${objects})
  set_target_properties(${name}_shared PROPERTIES
    OUTPUT_NAME ${output_name}
    VERSION ${PROJECT_VERSION}
    SOVERSION ${JITFLOW_SOVERSION}
    LINK_DEPENDS ${version_script})
  set_target_properties(${name}_static PROPERTIES OUTPUT_NAME ${output_name})
  target_link_options(${name}_shared PRIVATE -Wl,--version-script=${version_script})
  # Every symbol resolved at link time (sanitizer builds: their runtime comes with the
  # executable that loads the library).
  if(NOT JITFLOW_SANITIZE AND NOT JITFLOW_FUZZ)
    target_link_options(${name}_shared PRIVATE -Wl,--no-undefined)
  endif()
endfunction()

# --- libjitflow-emit
find_package(Threads REQUIRED)
jitflow_library(jitflow_emit jitflow-emit ${PROJECT_SOURCE_DIR}/cmake/jitflow-emit.map
                jitflow_emit)
# Calls and the address recorded in the MARKER record must both be the library's own
# jf_emitter_marker, not an executable's PLT entry for it.
target_link_options(jitflow_emit_shared PRIVATE -Wl,-Bsymbolic-functions)
# In the build tree beside the module's other outputs (build/imagemap), where tools that
# load it at run time look.
set_target_properties(jitflow_emit_shared jitflow_emit_static PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/imagemap
  ARCHIVE_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/imagemap)
foreach(t jitflow_emit_shared jitflow_emit_static)
  target_include_directories(${t} INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/imagemap/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${t} PRIVATE Threads::Threads)
endforeach()
set_target_properties(jitflow_emit_shared PROPERTIES EXPORT_NAME emit)

# --- libjitflow
jitflow_library(jitflow jitflow ${PROJECT_SOURCE_DIR}/cmake/jitflow.map
                ${JITFLOW_LIBRARY_PARTS})
foreach(t jitflow_shared jitflow_static)
  target_include_directories(${t} INTERFACE
    "$<BUILD_INTERFACE:${JITFLOW_INCLUDE_DIRS}>"
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${t} PRIVATE jitflow::ipt jitflow::opencsd_c_api PkgConfig::OPENCSD
                        PkgConfig::CAPSTONE PkgConfig::LIBELF PkgConfig::LIBARCHIVE
                        Threads::Threads m)
endforeach()
set_target_properties(jitflow_shared PROPERTIES EXPORT_NAME jitflow)

# --- installed files
install(TARGETS jitflow_emit_shared jitflow_shared EXPORT jitflowTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS jitflow_emit_static jitflow_static
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The emitter's two headers, then every other public header (libjitflow's).
install(FILES ${PROJECT_SOURCE_DIR}/imagemap/include/jitflow/emitter.h
              ${PROJECT_SOURCE_DIR}/imagemap/include/jitflow/zone_format.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/jitflow)
foreach(dir ${JITFLOW_INCLUDE_DIRS})
  install(DIRECTORY ${dir}/jitflow DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    FILES_MATCHING PATTERN "*.h")
endforeach()

# pkg-config: paths relative to the .pc file, so `cmake --install --prefix P` works too.
file(RELATIVE_PATH JITFLOW_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
string(REGEX REPLACE "/$" "" JITFLOW_PC_TO_PREFIX "${JITFLOW_PC_TO_PREFIX}")
foreach(pc jitflow jitflow-emit)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

# CMake package: find_package(jitflow) -> jitflow::emit, jitflow::jitflow.
include(CMakePackageConfigHelpers)
set(JITFLOW_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/jitflow)
install(EXPORT jitflowTargets NAMESPACE jitflow:: DESTINATION ${JITFLOW_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/jitflowConfig.cmake.in
  ${PROJECT_BINARY_DIR}/jitflowConfig.cmake INSTALL_DESTINATION ${JITFLOW_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/jitflowConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/jitflowConfig.cmake
              ${PROJECT_BINARY_DIR}/jitflowConfigVersion.cmake
  DESTINATION ${JITFLOW_CMAKE_DIR})
