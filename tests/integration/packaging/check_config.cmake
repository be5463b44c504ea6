# An example configuration is accepted by its binary and means what it says.
#
# Runs `BINARY --config CONFIG --print-config` (exit 0: every key is known and well-typed),
# then checks that each key of CONFIG appears in the printed effective configuration with
# the same value: a value that the binary would silently ignore or reinterpret fails here.
#
#   cmake -DBINARY=<path> -DCONFIG=<file.json> -P check_config.cmake
cmake_minimum_required(VERSION 3.25)  # script mode: the policies of the project
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)
qrm_require_defined(BINARY CONFIG)

get_filename_component(name ${BINARY} NAME)
qrm_run_step("${name} --config ${CONFIG} --print-config"
  ${BINARY} --config ${CONFIG} --print-config)
set(effective "${QRM_STEP_OUTPUT}")
string(JSON effective_type ERROR_VARIABLE error TYPE "${effective}")
if(error OR NOT effective_type STREQUAL "OBJECT")
  qrm_fail("--print-config did not print a JSON object (${error}):\n${effective}")
endif()

file(READ ${CONFIG} config)
string(JSON key_count ERROR_VARIABLE error LENGTH "${config}")
if(error)
  qrm_fail("${CONFIG} is not JSON: ${error}")
endif()
if(key_count EQUAL 0)
  qrm_fail("${CONFIG} sets nothing")
endif()

# qrm_json_value(<out> <json> <key>): the member as JSON text, for string(JSON EQUAL).
function(qrm_json_value out json key)
  string(JSON type TYPE "${json}" "${key}")
  string(JSON value GET "${json}" "${key}")
  if(type STREQUAL "STRING")
    # JSON-quote it: GET returns the raw string.
    string(REPLACE "\\" "\\\\" value "${value}")
    string(REPLACE "\"" "\\\"" value "${value}")
    set(value "\"${value}\"")
  elseif(type STREQUAL "BOOLEAN")
    if(value)
      set(value true)
    else()
      set(value false)
    endif()
  elseif(type STREQUAL "NULL")
    set(value null)
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

math(EXPR last "${key_count} - 1")
foreach(index RANGE ${last})
  string(JSON key MEMBER "${config}" ${index})
  string(REPLACE "-" "_" printed_key "${key}")  # the printed form uses '_'
  string(JSON printed_type ERROR_VARIABLE error TYPE "${effective}" "${printed_key}")
  if(error)
    qrm_fail("${CONFIG}: key ${key} is missing from the effective configuration:\n${effective}")
  endif()
  qrm_json_value(want "${config}" "${key}")
  string(JSON want_type TYPE "${config}" "${key}")
  if(want_type MATCHES "^(OBJECT|ARRAY)$" AND printed_type STREQUAL "STRING")
    # An object for a string option (a role table) arrives as its compact JSON text.
    string(JSON got GET "${effective}" "${printed_key}")
  elseif(want_type MATCHES "^(NUMBER|BOOLEAN)$" AND printed_type STREQUAL "STRING")
    # A scalar for a string option (a size that may also be "auto") is its text.
    string(JSON got GET "${effective}" "${printed_key}")
    string(JSON want GET "${config}" "${key}")
    if(want_type STREQUAL "BOOLEAN")
      if(want)
        set(want true)
      else()
        set(want false)
      endif()
    endif()
    if(NOT want STREQUAL got)
      qrm_fail("${CONFIG}: ${key} is ${want} in the file but \"${got}\" in effect")
    endif()
    continue()
  else()
    qrm_json_value(got "${effective}" "${printed_key}")
  endif()
  string(JSON same ERROR_VARIABLE error EQUAL "${want}" "${got}")
  if(error OR NOT same)
    qrm_fail("${CONFIG}: ${key} is ${want} in the file but ${got} in effect ${error}")
  endif()
endforeach()
message(STATUS "${name}: all ${key_count} keys of ${CONFIG} in effect")
