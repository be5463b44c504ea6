# The systemd units in examples/deploy/systemd: each runs its own binary with
# --config /etc/qrm/<binary>.json, restarts on failure, creates its directories 0700, and
# systemd accepts every line.
#
# `systemd-analyze verify` only warns about unknown keys or bad values (exit 0), so any
# output fails the test. It also checks that ExecStart= is executable: the units are copied
# with ExecStart= pointing at the binary of this build when it exists (/bin/true otherwise).
#
#   cmake -DUNIT_DIR=<dir> -DBINARIES="qrm-host=/path/to/qrm-host;..." [-DSYSTEMD_ANALYZE=...]
#         -P check_systemd_units.cmake
cmake_minimum_required(VERSION 3.25)  # script mode: the policies of the project
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)
qrm_require_defined(UNIT_DIR)

file(GLOB units ${UNIT_DIR}/qrm-*.service)
list(LENGTH units unit_count)
if(unit_count EQUAL 0)
  qrm_fail("no qrm-*.service in ${UNIT_DIR}")
endif()

qrm_make_scratch_dir(qrm-systemd-units)
foreach(unit IN LISTS units)
  get_filename_component(binary ${unit} NAME_WE)  # qrm-host.service -> qrm-host
  file(READ ${unit} text)

  set(exec_start "/usr/local/bin/${binary} --config /etc/qrm/${binary}.json")
  string(FIND "${text}" "\nExecStart=${exec_start}\n" at)
  if(at EQUAL -1)
    qrm_fail("${unit}: expected the line ExecStart=${exec_start}")
  endif()
  foreach(line "Restart=on-failure" "RestartSec=" "WantedBy=multi-user.target")
    string(FIND "${text}" "\n${line}" at)
    if(at EQUAL -1)
      qrm_fail("${unit}: lacks ${line}")
    endif()
  endforeach()
  # Directories systemd creates are 0755 unless told otherwise; operating.md promises 0700.
  foreach(kind State Runtime)
    string(FIND "${text}" "\n${kind}Directory=" at)
    string(FIND "${text}" "\n${kind}DirectoryMode=0700\n" mode_at)
    if(NOT at EQUAL -1 AND mode_at EQUAL -1)
      qrm_fail("${unit}: ${kind}Directory= without ${kind}DirectoryMode=0700")
    endif()
  endforeach()

  set(program /bin/true)
  foreach(entry IN LISTS BINARIES)
    if(entry MATCHES "^${binary}=(.+)$")
      set(program ${CMAKE_MATCH_1})
    endif()
  endforeach()
  string(REPLACE "ExecStart=/usr/local/bin/${binary} " "ExecStart=${program} " text "${text}")
  file(WRITE ${QRM_SCRATCH_DIR}/${binary}.service "${text}")
endforeach()

if(SYSTEMD_ANALYZE)
  file(GLOB copies ${QRM_SCRATCH_DIR}/*.service)
  qrm_run_step("systemd-analyze verify" ${SYSTEMD_ANALYZE} verify ${copies})
  if(NOT QRM_STEP_OUTPUT STREQUAL "")
    qrm_fail("systemd-analyze verify warned:\n${QRM_STEP_OUTPUT}")
  endif()
else()
  message(STATUS "systemd-analyze not found: checked the ExecStart= lines only")
endif()
qrm_remove_scratch_dir()
message(STATUS "${unit_count} units checked")
