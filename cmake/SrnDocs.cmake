# SrnDocs.cmake - help texts and man pages from one source (man/README.md).
#
# man/PAGE.SECTION.txt is the text `softrnic CMD --help` prints. The build
# turns every file into
#   - a string constant of the softrnic tool (build/gen/softrnic_help.c),
#   - a man page build/man/manSECTION/PAGE.SECTION.gz,
# with tools/srn_mangen.c, so --help, the man pages and (checked by
# tests/integration/test_docs.sh) the README cannot drift apart.
# Included from the top-level CMakeLists.txt after the softrnic target.

add_executable(srn_mangen tools/srn_mangen.c)
set_target_properties(srn_mangen PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/gen)

# page -> the tool's help symbol (pages of section 1 are printed by --help)
set(SRN_MAN_PAGES
  softrnic.1:help_main softrnic-run.1:help_run softrnic-devices.1:help_devices
  softrnic-stats.1:help_stats softrnic-fabric.1:help_fabric softrnic-sim.1:help_sim
  softrnic-cc.1:help_cc softrnic.7:)

# the date of the pages (honours SOURCE_DATE_EPOCH for reproducible packages)
string(TIMESTAMP SRN_MAN_DATE "%Y-%m-%d" UTC)

set(SRN_HELP_C ${CMAKE_BINARY_DIR}/gen/softrnic_help.c)
set(SRN_HELP_ARGS)
set(SRN_HELP_DEPS)
set(SRN_MAN_OUT)
foreach(entry ${SRN_MAN_PAGES})
  string(REPLACE ":" ";" parts "${entry}")
  list(GET parts 0 file)
  list(LENGTH parts n)
  set(src ${CMAKE_SOURCE_DIR}/man/${file}.txt)
  string(REGEX REPLACE "\\.([1-8])$" "" page "${file}")
  string(REGEX REPLACE "^.*\\." "" sec "${file}")
  if(n GREATER 1)
    list(GET parts 1 sym)
    if(sym)
      list(APPEND SRN_HELP_ARGS "${sym}=${src}")
      list(APPEND SRN_HELP_DEPS ${src})
    endif()
  endif()
  set(out ${CMAKE_BINARY_DIR}/man/man${sec}/${file})
  add_custom_command(OUTPUT ${out}.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man/man${sec}
    COMMAND srn_mangen man ${src} ${out} ${page} ${sec} ${PROJECT_VERSION} ${SRN_MAN_DATE}
    COMMAND gzip -9nf ${out}
    DEPENDS srn_mangen ${src}
    COMMENT "man page ${file}" VERBATIM)
  list(APPEND SRN_MAN_OUT ${out}.gz)
endforeach()

add_custom_command(OUTPUT ${SRN_HELP_C}
  COMMAND srn_mangen c ${SRN_HELP_C} ${SRN_HELP_ARGS}
  DEPENDS srn_mangen ${SRN_HELP_DEPS}
  COMMENT "help texts of the softrnic tool" VERBATIM)
target_sources(softrnic PRIVATE ${SRN_HELP_C})
add_custom_target(softrnic_man ALL DEPENDS ${SRN_MAN_OUT})
