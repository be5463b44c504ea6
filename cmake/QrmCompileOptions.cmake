# Project-wide compile options, applied through the qrm_options interface target so
# that only our own targets (never generated or third-party code we do not own)
# get -Werror.

add_library(qrm_options INTERFACE)
add_library(qrm::options ALIAS qrm_options)
target_compile_options(qrm_options INTERFACE -Wall -Wextra -Werror -Wshadow=local
                                             -Wnon-virtual-dtor -Wno-missing-field-initializers)
target_include_directories(qrm_options INTERFACE ${PROJECT_SOURCE_DIR})
# Clang checks the lock annotations of our code (common/thread_annotations.h): every
# QRM_GUARDED_BY member touched without its mutex, every QRM_REQUIRES function called without
# it, is an error. CI's clang build is the fuzz build (scripts/fuzz builds every product binary
# in it for this reason).
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  target_compile_options(qrm_options INTERFACE -Wthread-safety)
endif()

# Each function and object in its own section, and the linker drops the ones nothing calls:
# most of the generated CRI and plugin-protocol code and many template instances go unused
# by any one binary. Text that stays is mapped and, with the kernel's fault-around, mostly
# resident: qrm-host's .text goes from 2.9 to 2.4 MiB and bench P7 from 30.1 to 29.5 MiB.
# Everything (generated code included) but Debug builds, whose debuggers like it whole.
add_compile_options($<$<NOT:$<CONFIG:Debug>>:-ffunction-sections>
                    $<$<NOT:$<CONFIG:Debug>>:-fdata-sections>)
add_link_options($<$<NOT:$<CONFIG:Debug>>:-Wl,--gc-sections>)

if(QRM_SANITIZE)
  set(QRM_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all
                          -fno-omit-frame-pointer)
  add_compile_options(${QRM_SANITIZER_FLAGS})
  add_link_options(${QRM_SANITIZER_FLAGS})
endif()

# qrm_add_library(NAME SOURCES ... DEPS ...) declares target qrm_NAME with alias
# qrm::NAME; every library gets the project options and the repo root on its
# include path, so headers are included as "dir/header.h".
# The options are a build-tree-only usage requirement ($<BUILD_INTERFACE:>): in-tree
# consumers get them exactly as before, but an installed library (cmake/QrmInstall.cmake)
# must not impose our -Werror or our source directory on an out-of-tree plugin.
function(qrm_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(qrm_${name} STATIC ${ARG_SOURCES})
  add_library(qrm::${name} ALIAS qrm_${name})
  target_link_libraries(qrm_${name} PUBLIC $<BUILD_INTERFACE:qrm::options> ${ARG_DEPS}
                                    PRIVATE ${ARG_PRIVATE_DEPS})
endfunction()
