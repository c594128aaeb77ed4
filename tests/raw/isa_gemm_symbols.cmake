# SPDX-License-Identifier: MIT
# The ISA builds of Eigen's GEMM keep their Eigen instantiations to themselves
# (raw/cpu/eigen_gemm.hpp): each localised object defines one global symbol,
# its kGemm table (and at most typeinfo data), so the linker can never hand
# an AVX copy of an Eigen function to the baseline code that shares its name.
#   cmake -DNM=<nm> -DOBJECTS=<obj;obj> -P isa_gemm_symbols.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT OBJECTS)
  message(FATAL_ERROR "no objects to check")
endif()
foreach(obj ${OBJECTS})
  execute_process(COMMAND ${NM} -g --defined-only ${obj} OUTPUT_VARIABLE out
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${obj}: ${err}")
  endif()
  string(STRIP "${out}" out)
  string(REPLACE "\n" ";" lines "${out}")
  set(tables 0)
  foreach(line ${lines})
    if(line MATCHES " [DR] _ZN6strata6detail[0-9]+gemm_avx(2|512)5kGemmE$")
      math(EXPR tables "${tables} + 1")
    elseif(NOT line MATCHES " [VR] _ZT[IS]")
      # Only typeinfo objects (clang's -fsanitize=function emits them for
      # function types) may stay: data, the same bytes whatever the ISA.
      message(FATAL_ERROR "${obj} defines a global symbol besides its kGemm table: ${line}")
    endif()
  endforeach()
  if(NOT tables EQUAL 1)
    message(FATAL_ERROR "${obj} does not define its kGemm table:\n${out}")
  endif()
  message(STATUS "${obj}: only its kGemm table is global")
endforeach()
