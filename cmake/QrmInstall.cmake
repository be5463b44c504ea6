# `cmake --install`: the binaries, the SDK (static libraries and headers) and a CMake
# package, so that a plugin outside this repository builds with
#
#   find_package(qrm REQUIRED)
#   target_link_libraries(my-plugin PRIVATE qrm::sdk)
#
# Included last from the top-level CMakeLists.txt, when every target exists; targets that
# are not part of this checkout are skipped (if(TARGET)).
#
# Components: `runtime` (binaries, example configs and deployment files) and `development`
# (libraries, headers, the CMake package). `cmake --install BUILD --component development`
# is all a plugin author needs.
#
# Layout under the prefix (GNUInstallDirs):
#   bin/qrm-host, bin/qrm-cpu-plugin, ...
#   include/<repo path>/*.h, e.g. include/plugins/sdk/resource_plugin.h,
#                                 include/api/resourceplugin_v1alpha1.pb.h
#   lib/libqrm_sdk.a, ...
#   lib/cmake/qrm/qrmConfig.cmake, qrmConfigVersion.cmake, qrmTargets*.cmake
#   share/qrm/examples/{configs,deploy}/...
#   share/qrm/proto/*.proto (the protocols a plugin or a pod-resources client speaks)
#   share/qrm/examples/accelerator-slots/ (the example plugin's sources, a project of its own)

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(QRM_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/qrm)

# --- Binaries --------------------------------------------------------------------------
foreach(binary qrm-host qrm-cpu-plugin qrm-memory-plugin qrm-nic-plugin qrmctl qrm-advisor
               qrm-scheduler-extender qrm-drain-planner qrm-fake-machine
               qrm-example-accel-plugin)
  if(TARGET ${binary})
    install(TARGETS ${binary} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
  endif()
endforeach()

# --- Libraries and their headers -------------------------------------------------------
# Every library an out-of-tree plugin may link, and every library those link publicly (a
# static library's private dependencies are link dependencies of its users, so they are
# exported too). Each is exported as qrm::<name>, the same name it has in-tree.
#   sdk:        what a plugin links (ResourcePlugin, PluginServer, Run)
#   api:        the generated protocol code the SDK's headers include
#   common:     Status, CpuSet, NumaMask, logging; common_grpc: Status <-> grpc::Status
#   checkpoint: crash-safe state files (the example plugin's state)
#   machine:    topology discovery; qos: role table; config: flags plus a JSON config file
set(QRM_EXPORTED_LIBRARIES
  api common common_grpc metrics http grpc_listener config checkpoint sdk machine qos)

# The public headers: what a plugin author includes, and everything those include. The rest
# (grpc_services.h, netlink.h, sysfs.h, the checkpoint's codecs, ...) are internals of their
# library and are not installed, so a plugin cannot come to depend on them. The configure
# step below fails when a public header includes one that is not public. (api's headers are
# generated; see below.)
set(QRM_PUBLIC_HEADERS
  common/status.h common/cpu_set.h common/numa_mask.h common/id_list.h common/log.h
  common/protocol_keys.h common/grpc_status.h common/mutex.h common/thread_annotations.h
  common/metrics/metrics.h common/http/http_server.h common/config/config.h
  checkpoint/checkpoint_file.h checkpoint/state_file.h checkpoint/journal.h
  plugins/sdk/resource_plugin.h plugins/sdk/plugin_server.h plugins/sdk/run.h
  plugins/sdk/pod_ledger.h plugins/sdk/entry_fields.h plugins/sdk/responses.h
  plugins/sdk/plugin_flags.h
  machine/discovery.h machine/topology.h machine/numa_layout.h
  qos/qos_requirement.h)

foreach(header IN LISTS QRM_PUBLIC_HEADERS)
  file(STRINGS ${PROJECT_SOURCE_DIR}/${header} includes REGEX "^#include \"")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" included "${line}")
    if(NOT included IN_LIST QRM_PUBLIC_HEADERS AND NOT included MATCHES "^api/")
      message(FATAL_ERROR "QrmInstall: public header ${header} includes ${included}, which is "
                          "not public; add it to QRM_PUBLIC_HEADERS or stop including it")
    endif()
  endforeach()
  cmake_path(GET header PARENT_PATH header_dir)
  install(FILES ${PROJECT_SOURCE_DIR}/${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${header_dir}
          COMPONENT development)
endforeach()

# The generated protocol headers live in the build tree (api/CMakeLists.txt); their include
# directory is a plain absolute path there, which an installed package must not carry.
# Rewrite such paths (in the build or source tree) as build-tree-only; the installed targets
# get include/ below instead. Already-wrapped entries ("$<...>") are left alone, so this
# keeps working if api/CMakeLists.txt wraps its path itself.
function(qrm_wrap_build_tree_includes target)
  foreach(property INTERFACE_INCLUDE_DIRECTORIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES)
    get_target_property(dirs ${target} ${property})
    if(NOT dirs)
      continue()
    endif()
    set(wrapped "")
    foreach(dir IN LISTS dirs)
      cmake_path(IS_PREFIX PROJECT_BINARY_DIR "${dir}" NORMALIZE in_build_tree)
      cmake_path(IS_PREFIX PROJECT_SOURCE_DIR "${dir}" NORMALIZE in_source_tree)
      if(IS_ABSOLUTE "${dir}" AND (in_build_tree OR in_source_tree))
        list(APPEND wrapped "$<BUILD_INTERFACE:${dir}>")
      else()
        list(APPEND wrapped "${dir}")
      endif()
    endforeach()
    set_property(TARGET ${target} PROPERTY ${property} "${wrapped}")
  endforeach()
endfunction()

set(QRM_INSTALLED_TARGETS "")
foreach(name IN LISTS QRM_EXPORTED_LIBRARIES)
  if(NOT TARGET qrm_${name})
    message(FATAL_ERROR "QrmInstall: library qrm_${name} is exported but does not exist")
  endif()
  set_target_properties(qrm_${name} PROPERTIES EXPORT_NAME ${name})
  # The headers are C++20; say so, so that a consumer's compiler is switched to it. (In-tree
  # every target already compiles as C++20: this changes no in-tree command line.)
  target_compile_features(qrm_${name} INTERFACE cxx_std_20)
  qrm_wrap_build_tree_includes(qrm_${name})
  list(APPEND QRM_INSTALLED_TARGETS qrm_${name})
endforeach()

# The generated protocol headers (api/*.pb.h, api/*.grpc.pb.h) are sources of qrm_api.
get_target_property(QRM_API_HEADERS qrm_api SOURCES)
list(FILTER QRM_API_HEADERS INCLUDE REGEX "\\.h$")
install(FILES ${QRM_API_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/api COMPONENT development)

install(TARGETS ${QRM_INSTALLED_TARGETS}
  EXPORT qrmTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT qrmTargets
  NAMESPACE qrm::
  DESTINATION ${QRM_INSTALL_CMAKEDIR}
  COMPONENT development)

# --- The CMake package -----------------------------------------------------------------
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/qrmConfig.cmake.in
  ${PROJECT_BINARY_DIR}/qrmConfig.cmake
  INSTALL_DESTINATION ${QRM_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the SDK's interface, so only the same minor matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/qrmConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/qrmConfig.cmake ${PROJECT_BINARY_DIR}/qrmConfigVersion.cmake
  DESTINATION ${QRM_INSTALL_CMAKEDIR}
  COMPONENT development)

# --- Example configurations and deployment files ---------------------------------------
foreach(dir configs deploy)
  if(IS_DIRECTORY ${PROJECT_SOURCE_DIR}/examples/${dir})
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/${dir}
            DESTINATION ${CMAKE_INSTALL_DATADIR}/qrm/examples
            COMPONENT runtime)
  endif()
endforeach()

# --- What a plugin author starts from ----------------------------------------------------
# The protocol definitions docs/plugin-authoring.md links to, for authors who generate their
# own code (another language, another gRPC version) or read them beside the headers.
install(FILES
    ${PROJECT_SOURCE_DIR}/api/resourceplugin_v1alpha1.proto
    ${PROJECT_SOURCE_DIR}/api/pluginregistration_v1.proto
    ${PROJECT_SOURCE_DIR}/api/podresources_v1.proto
  DESTINATION ${CMAKE_INSTALL_DATADIR}/qrm/proto
  COMPONENT development)
# The example plugin's sources: a CMake project of its own that builds against this install
# (copy it to start a plugin). USE_SOURCE_PERMISSIONS keeps tests/smoke_test.sh executable.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/accelerator-slots
  DESTINATION ${CMAKE_INSTALL_DATADIR}/qrm/examples
  COMPONENT development
  USE_SOURCE_PERMISSIONS)
