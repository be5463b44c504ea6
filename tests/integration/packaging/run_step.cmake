# Helpers shared by the packaging test scripts (included with include()).

# qrm_fail(<message>...): stops the script. The scratch directory (qrm_make_scratch_dir) is
# removed first unless the environment sets QRM_KEEP_SCRATCH=1, to look at it afterwards.
function(qrm_fail)
  string(CONCAT text ${ARGN})
  if(QRM_SCRATCH_DIR)
    if("$ENV{QRM_KEEP_SCRATCH}" STREQUAL "1")
      string(APPEND text "\n(scratch directory kept: ${QRM_SCRATCH_DIR})")
    else()
      file(REMOVE_RECURSE "${QRM_SCRATCH_DIR}")
      string(APPEND text "\n(set QRM_KEEP_SCRATCH=1 to keep the scratch directory)")
    endif()
  endif()
  message(FATAL_ERROR "${text}")
endfunction()

# qrm_run_step(<description> <command> [args...]): runs the command and stops the script
# with its output and exit code if it fails. On success its output goes to
# QRM_STEP_OUTPUT in the caller's scope (quiet logs, full detail on failure).
function(qrm_run_step description)
  string(TIMESTAMP started "%s")
  execute_process(COMMAND ${ARGN}
                  RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  string(TIMESTAMP finished "%s")
  math(EXPR seconds "${finished} - ${started}")
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " command)
    qrm_fail("${description} failed (exit ${rc}) after ${seconds} s\n"
             "command: ${command}\n${out}")
  endif()
  message(STATUS "${description}: ok (${seconds} s)")
  set(QRM_STEP_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

# qrm_require_defined(<var>...): the script's -D arguments.
macro(qrm_require_defined)
  foreach(qrm_var ${ARGN})
    if(NOT DEFINED ${qrm_var})
      message(FATAL_ERROR "${CMAKE_SCRIPT_MODE_FILE}: -D${qrm_var}=... is required")
    endif()
  endforeach()
endmacro()

# qrm_make_scratch_dir(<name>): a fresh directory under the system temp directory, in
# QRM_SCRATCH_DIR (outside the qrm build tree, so that a path into the build tree leaking
# into the installed package cannot go unnoticed). qrm_remove_scratch_dir() on success.
macro(qrm_make_scratch_dir name)
  qrm_make_temp_dir_(QRM_SCRATCH_DIR ${name})
endmacro()

macro(qrm_remove_scratch_dir)
  file(REMOVE_RECURSE "${QRM_SCRATCH_DIR}")
endmacro()

function(qrm_make_temp_dir_ var name)
  set(tmp "$ENV{TMPDIR}")
  if(NOT tmp)
    set(tmp /tmp)
  endif()
  # Never reuse (or delete) a directory another run may be using.
  foreach(attempt RANGE 10)
    string(RANDOM LENGTH 10 ALPHABET abcdefghijklmnopqrstuvwxyz0123456789 suffix)
    set(dir "${tmp}/${name}-${suffix}")
    if(NOT EXISTS "${dir}")
      break()
    endif()
  endforeach()
  file(MAKE_DIRECTORY "${dir}")
  set(${var} "${dir}" PARENT_SCOPE)
endfunction()
