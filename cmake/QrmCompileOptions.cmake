# Project-wide compile options, applied through the qrm_options interface target so
# that only our own targets (never generated or third-party code we do not own)
# get -Werror.

add_library(qrm_options INTERFACE)
add_library(qrm::options ALIAS qrm_options)
target_compile_options(qrm_options INTERFACE -Wall -Wextra -Werror -Wshadow=local
                                             -Wnon-virtual-dtor -Wno-missing-field-initializers)
target_include_directories(qrm_options INTERFACE ${PROJECT_SOURCE_DIR})

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
