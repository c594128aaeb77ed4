# Runs COMMAND (a ;-list) with the environment variable NAME=VALUE and checks that
# it exits with CODE and prints something matching REGEX (stdout and stderr together).
# ctest then reports a wrong exit code or a missing message as the failure it is.
execute_process(COMMAND ${CMAKE_COMMAND} -E env "${NAME}=${VALUE}" ${COMMAND}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT code STREQUAL "${CODE}")
  message(FATAL_ERROR "exit code ${code}, expected ${CODE}; output:\n${all}")
endif()
if(NOT all MATCHES "${REGEX}")
  message(FATAL_ERROR "output does not match '${REGEX}':\n${all}")
endif()
message(STATUS "exit code ${code} and the expected message:\n${all}")
