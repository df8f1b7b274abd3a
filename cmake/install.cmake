# What `cmake --install build [--prefix P]` installs, and the Debian package (cpack -G DEB).
include(${CMAKE_CURRENT_LIST_DIR}/libraries.cmake)

install(TARGETS jitflow RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Man pages, from the built command's --help at build time (cmake/manpages.sh): one for
# jitflow and one per subcommand, whatever subcommands it has.
set(JITFLOW_MAN_DIR ${PROJECT_BINARY_DIR}/man)
add_custom_command(OUTPUT ${JITFLOW_MAN_DIR}/jitflow.1
  COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0 # sanitizer builds
          ${PROJECT_SOURCE_DIR}/cmake/manpages.sh $<TARGET_FILE:jitflow> ${JITFLOW_MAN_DIR}
          ${PROJECT_VERSION}
  DEPENDS jitflow ${PROJECT_SOURCE_DIR}/cmake/manpages.sh
  COMMENT "Man pages from jitflow --help")
add_custom_target(jitflow_man ALL DEPENDS ${JITFLOW_MAN_DIR}/jitflow.1)
install(DIRECTORY ${JITFLOW_MAN_DIR}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
  FILES_MATCHING PATTERN "*.1")

install(FILES ${PROJECT_SOURCE_DIR}/cmake/jitflow.bash-completion
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME jitflow)

install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
  FILES_MATCHING PATTERN "*.md")

# Runtime glue, where each runtime looks for it: LuaJIT's module path (package.path has
# PREFIX/share/lua/5.1/?.lua).
if(EXISTS ${PROJECT_SOURCE_DIR}/tools/runtimes/luajit)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/tools/runtimes/luajit/
    DESTINATION ${CMAKE_INSTALL_DATADIR}/lua/5.1 FILES_MATCHING PATTERN "*.lua")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/packaging.cmake)
