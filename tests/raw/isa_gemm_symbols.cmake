# SPDX-License-Identifier: MIT
# The ISA builds of Eigen's GEMM keep their Eigen instantiations to themselves
# (raw/cpu/eigen_gemm.hpp): each localised object defines exactly one global
# symbol, its kGemm table, so the linker can never hand an AVX copy of an
# Eigen function to the baseline code that shares its name.
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
  list(LENGTH lines count)
  if(NOT count EQUAL 1 OR NOT out MATCHES " D _ZN6strata6detail[0-9]+gemm_avx(2|512)5kGemmE$")
    message(FATAL_ERROR "${obj} defines other global symbols than its kGemm table:\n${out}")
  endif()
  message(STATUS "${obj}: ${out}")
endforeach()
