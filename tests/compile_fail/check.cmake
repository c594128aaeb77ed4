# SPDX-License-Identifier: MIT
# Compiles one snippet (-fsyntax-only) and checks the compiler's verdict:
#   cmake -DCXX=... -DSTD=-std=c++20 -DINCLUDE=<root> -DSNIPPET=<file> -P check.cmake
# A snippet with a "// expect: <regex>" line must fail to compile with exactly
# one error, whose text matches <regex>; a snippet without one must compile.
# Each "// expect-not: <regex>" line names a message the compiler's output must
# not contain (a hint that would be false there).
file(STRINGS "${SNIPPET}" expect_lines REGEX "^// expect: ")
file(STRINGS "${SNIPPET}" expect_not_lines REGEX "^// expect-not: ")
execute_process(
  COMMAND "${CXX}" ${STD} -fsyntax-only "-I${INCLUDE}" "${SNIPPET}"
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out)
if(NOT expect_lines)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${SNIPPET} should compile, but the compiler says:\n${out}")
  endif()
  message(STATUS "${SNIPPET} compiles")
  return()
endif()
list(GET expect_lines 0 expect)
string(REGEX REPLACE "^// expect: " "" expect "${expect}")
if(rc EQUAL 0)
  message(FATAL_ERROR "${SNIPPET} compiled, but should fail with: ${expect}")
endif()
if(NOT out MATCHES "${expect}")
  message(FATAL_ERROR "${SNIPPET}: the compiler's message does not match '${expect}':\n${out}")
endif()
foreach(line ${expect_not_lines})
  string(REGEX REPLACE "^// expect-not: " "" unwanted "${line}")
  if(out MATCHES "${unwanted}")
    message(FATAL_ERROR "${SNIPPET}: the compiler's output contains '${unwanted}':\n${out}")
  endif()
endforeach()
string(REGEX MATCHALL "error:" errors "${out}")
list(LENGTH errors n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "${SNIPPET}: ${n} errors instead of one:\n${out}")
endif()
message(STATUS "${SNIPPET} fails with the expected message")
