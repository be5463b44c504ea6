# The example plugin builds out of tree against an installed qrm.
#
# Installs the development component of the qrm build into a fresh prefix, checks that the
# installed CMake package is self-contained (no path into the qrm source or build tree, no
# -Werror for consumers), configures examples/accelerator-slots as a project of its own with
# CMAKE_PREFIX_PATH=<prefix>, builds it and runs the plugin with --help.
#
#   cmake -DQRM_BUILD_DIR=... -DQRM_SOURCE_DIR=... -DLIBDIR=lib -DGENERATOR=...
#         -DCXX_COMPILER=... [-DEXTRA_FLAGS="..."] [-DJOBS=2] -P out_of_tree_example.cmake
cmake_minimum_required(VERSION 3.25)  # script mode: the policies of the project
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)
qrm_require_defined(QRM_BUILD_DIR QRM_SOURCE_DIR LIBDIR GENERATOR CXX_COMPILER)
if(NOT JOBS)
  set(JOBS 2)
endif()

qrm_make_scratch_dir(qrm-out-of-tree)
set(prefix ${QRM_SCRATCH_DIR}/prefix)
set(build ${QRM_SCRATCH_DIR}/build)

# 1. Install what a plugin author needs: libraries, headers, the CMake package.
qrm_run_step("install the development component"
  ${CMAKE_COMMAND} --install ${QRM_BUILD_DIR} --prefix ${prefix} --component development)

foreach(file
    ${LIBDIR}/cmake/qrm/qrmConfig.cmake
    ${LIBDIR}/cmake/qrm/qrmConfigVersion.cmake
    ${LIBDIR}/cmake/qrm/qrmTargets.cmake
    ${LIBDIR}/libqrm_sdk.a
    ${LIBDIR}/libqrm_api.a
    ${LIBDIR}/libqrm_common.a
    ${LIBDIR}/libqrm_checkpoint.a
    include/plugins/sdk/resource_plugin.h
    include/plugins/sdk/run.h
    include/api/resourceplugin_v1alpha1.pb.h
    include/api/resourceplugin_v1alpha1.grpc.pb.h
    include/common/status.h
    include/checkpoint/checkpoint_file.h)
  if(NOT EXISTS ${prefix}/${file})
    qrm_fail("the install lacks ${file}")
  endif()
endforeach()
# Only the development component was asked for.
if(EXISTS ${prefix}/bin)
  qrm_fail("--component development installed binaries: ${prefix}/bin")
endif()

# 2. The package must work without the qrm trees and must not impose our warnings.
file(GLOB package_files ${prefix}/${LIBDIR}/cmake/qrm/*.cmake)
foreach(file IN LISTS package_files)
  file(READ ${file} text)
  foreach(tree QRM_BUILD_DIR QRM_SOURCE_DIR)
    string(FIND "${text}" "${${tree}}" at)
    if(NOT at EQUAL -1)
      qrm_fail("${file} refers to the qrm ${tree} (${${tree}})")
    endif()
  endforeach()
  string(FIND "${text}" "-Werror" at)
  if(NOT at EQUAL -1)
    qrm_fail("${file} passes -Werror to consumers")
  endif()
endforeach()

# 3. Configure and build the example as its own project.
set(configure_args
  -S ${QRM_SOURCE_DIR}/examples/accelerator-slots
  -B ${build}
  -G ${GENERATOR}
  -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
  -DCMAKE_PREFIX_PATH=${prefix}
  -DCMAKE_BUILD_TYPE=Debug  # -O0: the quickest build; the point is that it builds and links
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
if(EXTRA_FLAGS)  # e.g. the sanitizer flags the installed libraries were built with
  list(APPEND configure_args "-DCMAKE_CXX_FLAGS=${EXTRA_FLAGS}"
                             "-DCMAKE_EXE_LINKER_FLAGS=${EXTRA_FLAGS}")
endif()
qrm_run_step("configure examples/accelerator-slots against the install"
  ${CMAKE_COMMAND} ${configure_args})

# The headers must come from the install: neither the qrm source root nor its build tree
# may be on the include path (the example's own headers are staged in its build dir).
file(READ ${build}/compile_commands.json commands)
foreach(flag "-I${QRM_SOURCE_DIR} " "-isystem ${QRM_SOURCE_DIR} " "${QRM_BUILD_DIR}")
  string(FIND "${commands}" "${flag}" at)
  if(NOT at EQUAL -1)
    qrm_fail("the out-of-tree build uses the qrm trees (found \"${flag}\") in "
             "${build}/compile_commands.json")
  endif()
endforeach()
string(FIND "${commands}" "-isystem ${prefix}/include" at)
if(at EQUAL -1)
  qrm_fail("the out-of-tree build does not use ${prefix}/include:\n${commands}")
endif()

qrm_run_step("build qrm-example-accel-plugin out of tree"
  ${CMAKE_COMMAND} --build ${build} --parallel ${JOBS})

# 4. The plugin runs and describes its flags.
qrm_run_step("qrm-example-accel-plugin --help" ${build}/qrm-example-accel-plugin --help)
foreach(flag --plugin-dir --resource --numa-nodes --slots-per-node --state --log-level)
  string(FIND "${QRM_STEP_OUTPUT}" "${flag}" at)
  if(at EQUAL -1)
    qrm_fail("--help does not mention ${flag}:\n${QRM_STEP_OUTPUT}")
  endif()
endforeach()

qrm_remove_scratch_dir()
