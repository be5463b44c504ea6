# All dependencies come from Debian 12 packages (scripts/install-deps); nothing is
# downloaded at build time.

find_package(Threads REQUIRED)
find_package(Protobuf 3.21 REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_package(fmt CONFIG REQUIRED)
find_package(spdlog CONFIG REQUIRED)
find_package(RapidJSON CONFIG REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS program_options)
find_package(PkgConfig REQUIRED)
pkg_check_modules(NUMA REQUIRED IMPORTED_TARGET numa)
if(QRM_BUILD_TESTS)
  find_package(Catch2 2 CONFIG REQUIRED)
endif()

find_program(QRM_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)

# Debian's RapidJSON config only sets variables; wrap it in an imported target.
if(NOT TARGET RapidJSON::RapidJSON)
  add_library(RapidJSON::RapidJSON INTERFACE IMPORTED)
  set_target_properties(RapidJSON::RapidJSON PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${RAPIDJSON_INCLUDE_DIRS}")
endif()
