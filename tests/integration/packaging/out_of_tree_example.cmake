# The example plugin builds and passes its tests out of tree, the way docs/plugin-authoring.md
# tells a plugin author to start.
#
# Installs the development component of the qrm build into a fresh prefix, checks that the
# installed CMake package is self-contained (no path into the qrm source or build tree, no
# -Werror for consumers), copies the installed example (share/qrm/examples/accelerator-slots)
# to a directory of its own, configures it as a project with CMAKE_PREFIX_PATH=<prefix>,
# builds it, runs the plugin with --help and runs its tests with ctest: the unit tests (the
# ResourcePlugin methods called directly) and the smoke test (the plugin process on its socket,
# driven by the example's stand-in client).
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
set(source ${QRM_SCRATCH_DIR}/my-plugin)  # cp -r <prefix>/share/qrm/examples/accelerator-slots my-plugin
set(build ${source}/build)                # cmake -S my-plugin -B my-plugin/build

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
    include/common/protocol_keys.h
    include/checkpoint/checkpoint_file.h
    ${LIBDIR}/libqrm_machine.a
    include/machine/discovery.h
    # The protocols the guide links to, and the example it starts from.
    share/qrm/proto/resourceplugin_v1alpha1.proto
    share/qrm/proto/pluginregistration_v1.proto
    share/qrm/proto/podresources_v1.proto
    share/qrm/examples/accelerator-slots/CMakeLists.txt
    share/qrm/examples/accelerator-slots/tests/smoke_test.sh)
  if(NOT EXISTS ${prefix}/${file})
    qrm_fail("the install lacks ${file}")
  endif()
endforeach()
# Internals of the libraries are not installed: a plugin cannot come to depend on them.
foreach(file
    include/plugins/sdk/grpc_services.h
    include/machine/netlink.h
    include/machine/sysfs.h
    include/checkpoint/canonical_json.h
    include/common/grpc/peer_checked_listener.h
    include/testing/machine/fake_machine.h)
  if(EXISTS ${prefix}/${file})
    qrm_fail("the install contains ${file}, an internal header")
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

# 3. Copy the installed example, as the guide says, and configure and build it as its own
#    project.
file(COPY ${prefix}/share/qrm/examples/accelerator-slots/ DESTINATION ${source}
     USE_SOURCE_PERMISSIONS)
set(configure_args
  -S ${source}
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
qrm_run_step("configure the installed example against the install"
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

qrm_run_step("build the example plugin, its client and its tests out of tree"
  ${CMAKE_COMMAND} --build ${build} --parallel ${JOBS})

# 4. The plugin runs and describes its flags.
qrm_run_step("qrm-example-accel-plugin --help" ${build}/qrm-example-accel-plugin --help)
foreach(flag --plugin-dir --resource --numa-nodes --slots-per-node --state-dir --log-level)
  string(FIND "${QRM_STEP_OUTPUT}" "${flag}" at)
  if(at EQUAL -1)
    qrm_fail("--help does not mention ${flag}:\n${QRM_STEP_OUTPUT}")
  endif()
endforeach()

# 5. Its tests pass: both of them ran (a test that is not registered cannot fail).
qrm_run_step("ctest in the out-of-tree build"
  ${CMAKE_CTEST_COMMAND} --test-dir ${build} --output-on-failure)
foreach(test accel_unit_test accel_smoke_test)
  if(NOT QRM_STEP_OUTPUT MATCHES "${test} [.]+ +Passed")
    qrm_fail("ctest did not pass ${test}:\n${QRM_STEP_OUTPUT}")
  endif()
endforeach()

qrm_remove_scratch_dir()
