# qrm_add_test(NAME LABEL <unit|integration|e2e|chaos> [SERIAL] SOURCES ... DEPS ...)
# builds one Catch2 executable and registers each of its TEST_CASEs with CTest,
# named "NAME:<test case>" and labelled LABEL, so `ctest -L unit` selects a tier.
# SERIAL: its test cases run alone (RUN_SERIAL), for tests that measure the machine's CPU
# usage and would misread another test's load as their own.
include(Catch)

function(qrm_add_test name)
  cmake_parse_arguments(ARG "SERIAL" "LABEL" "SOURCES;DEPS" ${ARGN})
  if(NOT ARG_LABEL)
    message(FATAL_ERROR "qrm_add_test(${name}): LABEL is required")
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE qrm_catch_main qrm::options ${ARG_DEPS})
  set(serial FALSE)
  if(ARG_SERIAL)
    set(serial TRUE)
  endif()
  catch_discover_tests(${name}
    TEST_PREFIX "${name}:"
    PROPERTIES LABELS ${ARG_LABEL} RUN_SERIAL ${serial}
    EXTRA_ARGS --warn NoAssertions)
endfunction()
