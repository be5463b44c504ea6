# `cmake --install` of the whole build puts every binary, the example configurations and
# the deployment files where docs/operating.md says they are.
#
#   cmake -DQRM_BUILD_DIR=... -DBINDIR=bin -DDATADIR=share -DBINARIES="qrm-host;..."
#         -P install_layout.cmake
cmake_minimum_required(VERSION 3.25)  # script mode: the policies of the project
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)
qrm_require_defined(QRM_BUILD_DIR BINDIR DATADIR BINARIES)

qrm_make_scratch_dir(qrm-install-layout)
set(prefix ${QRM_SCRATCH_DIR}/prefix)
qrm_run_step("cmake --install (all components)"
  ${CMAKE_COMMAND} --install ${QRM_BUILD_DIR} --prefix ${prefix})

# Every binary of this build, as an ELF executable.
foreach(binary IN LISTS BINARIES)
  set(path ${prefix}/${BINDIR}/${binary})
  if(NOT EXISTS ${path})
    qrm_fail("the install lacks ${BINDIR}/${binary}")
  endif()
  file(READ ${path} magic LIMIT 4 HEX)
  if(NOT magic STREQUAL "7f454c46")
    qrm_fail("${path} is not an ELF file (starts with ${magic})")
  endif()
  execute_process(COMMAND test -x ${path} RESULT_VARIABLE not_executable)
  if(not_executable)
    qrm_fail("${path} is not executable")
  endif()
endforeach()

# Nothing else lands in bin/ (test helpers such as qrm-test-plugin stay in the build tree).
file(GLOB installed RELATIVE ${prefix}/${BINDIR} ${prefix}/${BINDIR}/*)
foreach(binary IN LISTS installed)
  if(NOT binary IN_LIST BINARIES)
    qrm_fail("unexpected file in ${BINDIR}/: ${binary}")
  endif()
endforeach()

foreach(file
    examples/configs/example1/qrm-host.json
    examples/configs/example1/qrm-cpu-plugin.json
    examples/configs/example2/qrm-memory-plugin.json
    examples/configs/example3/qrm-nic-plugin.json
    examples/deploy/systemd/qrm-host.service
    examples/deploy/systemd/qrm-cpu-plugin.service
    examples/deploy/kubernetes/README.md)
  if(NOT EXISTS ${prefix}/${DATADIR}/qrm/${file})
    qrm_fail("the install lacks ${DATADIR}/qrm/${file}")
  endif()
endforeach()

qrm_remove_scratch_dir()
