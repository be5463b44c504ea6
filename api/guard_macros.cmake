# Post-processes a generated .pb.h (cmake -DHEADER=<file> -P guard_macros.cmake).
#
# CRI's enum Signal has values named SIGABRT, SIGTERM, ... which <signal.h> defines as
# macros, so the generated header fails to compile when <csignal> was included first. This
# wraps the header's declarations in push_macro/undef ... pop_macro for every such value,
# so include order does not matter. Headers without SIG* enum values are left unchanged.
if(NOT HEADER)
  message(FATAL_ERROR "guard_macros.cmake: HEADER is required")
endif()
file(READ "${HEADER}" text)
string(FIND "${text}" "qrm: signal macro guard" already)
if(NOT already EQUAL -1)
  return()
endif()

string(REGEX MATCHALL "\n  SIG[A-Z0-9_]+ = " hits "${text}")
set(names "")
foreach(hit IN LISTS hits)
  string(REGEX REPLACE "^\n  (SIG[A-Z0-9_]+) = $" "\\1" name "${hit}")
  list(APPEND names "${name}")
endforeach()
list(REMOVE_DUPLICATES names)
if(NOT names)
  return()
endif()

set(push "// qrm: signal macro guard (see api/guard_macros.cmake)\n")
set(pop "// qrm: end of signal macro guard\n")
foreach(name IN LISTS names)
  string(APPEND push "#pragma push_macro(\"${name}\")\n#undef ${name}\n")
  string(APPEND pop "#pragma pop_macro(\"${name}\")\n")
endforeach()

set(open_marker "// @@protoc_insertion_point(includes)\n")
set(close_marker "// @@protoc_insertion_point(global_scope)\n")
string(FIND "${text}" "${open_marker}" open_at)
string(FIND "${text}" "${close_marker}" close_at)
if(open_at EQUAL -1 OR close_at EQUAL -1)
  message(FATAL_ERROR "guard_macros.cmake: insertion points not found in ${HEADER}")
endif()
string(REPLACE "${open_marker}" "${open_marker}${push}" text "${text}")
string(REPLACE "${close_marker}" "${close_marker}${pop}" text "${text}")
file(WRITE "${HEADER}" "${text}")
