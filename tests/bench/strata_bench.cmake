# SPDX-License-Identifier: MIT
# strata_bench's modes that run no workload (bench/strata_bench.cpp), which
# `make bench` uses: --print-isa, and --merge of the runs of two instruction sets
# into one results.json; and --merge's refusal of files that are not a run's JSON.
#   cmake -DBENCH=<strata_bench> -DWORK=<scratch dir> -P strata_bench.cmake
cmake_minimum_required(VERSION 3.19)  # string(JSON)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# Fails with `message` unless the if() condition `cond` (a string) holds.
function(expect cond message)
  cmake_language(EVAL CODE "if(NOT (${cond}))\n message(FATAL_ERROR [==[${message}]==])\nendif()")
endfunction()

execute_process(COMMAND "${BENCH}" --print-isa OUTPUT_VARIABLE isa RESULT_VARIABLE rc
                OUTPUT_STRIP_TRAILING_WHITESPACE)
expect("rc EQUAL 0" "--print-isa exited with ${rc}")
expect("isa MATCHES \"^(avx512|avx2|sse2|scalar)$\"" "--print-isa printed '${isa}'")

# Two runs as strata_bench writes them (abridged): one row each, and one only in the first.
file(WRITE "${WORK}/native.json" [=[
{"cpu": "Test CPU (family 1 model 2)", "isa": "avx512", "env": {}, "method": "interleaved",
 "reps": 10, "limits": {"copy_gb_per_s": 40.5},
 "results": [{"name": "matmul_f32_n256", "unit": "ms", "median": 0.15, "isa": "avx512",
              "cpu": "Test CPU (family 1 model 2)", "peers": [{"name": "pytorch", "median": 0.18}]},
             {"name": "exp_f32_4096x4096", "unit": "ms", "median": 3.1, "isa": "avx512",
              "cpu": "Test CPU (family 1 model 2)"}]}
]=])
file(WRITE "${WORK}/avx2.json" [=[
{"cpu": "Test CPU (family 1 model 2)", "isa": "avx2", "env": {"STRATA_ISA": "avx2"},
 "method": "interleaved", "reps": 10,
 "results": [{"name": "matmul_f32_n256", "unit": "ms", "median": 0.29, "isa": "avx2",
              "cpu": "Test CPU (family 1 model 2)"}]}
]=])
execute_process(COMMAND "${BENCH}" --merge "${WORK}/results.json" "${WORK}/native.json"
                        "${WORK}/avx2.json"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect("rc EQUAL 0" "--merge exited with ${rc}: ${err}")
file(READ "${WORK}/results.json" merged)
string(JSON cpu GET "${merged}" cpu)
expect("cpu STREQUAL \"Test CPU (family 1 model 2)\"" "merged cpu: ${cpu}")
string(JSON nisas LENGTH "${merged}" isas)
string(JSON isa0 GET "${merged}" isas 0)
string(JSON isa1 GET "${merged}" isas 1)
expect("nisas EQUAL 2 AND isa0 STREQUAL avx512 AND isa1 STREQUAL avx2" "merged isas")
string(JSON nruns LENGTH "${merged}" runs)
expect("nruns EQUAL 2" "merged runs: ${nruns}")
string(JSON limit GET "${merged}" runs 0 limits copy_gb_per_s)
string(JSON env1 GET "${merged}" runs 1 env STRATA_ISA)
expect("limit EQUAL 40.5 AND env1 STREQUAL avx2" "each run's header kept")
string(JSON has_rows ERROR_VARIABLE none GET "${merged}" runs 0 results)
expect("NOT none STREQUAL NOTFOUND" "a run's header keeps its rows")
string(JSON nrows LENGTH "${merged}" results)
expect("nrows EQUAL 3" "merged rows: ${nrows}")
# One entry per workload and instruction set, each naming both.
set(seen "")
foreach(i RANGE 2)
  string(JSON name GET "${merged}" results ${i} name)
  string(JSON row_isa GET "${merged}" results ${i} isa)
  string(JSON row_cpu GET "${merged}" results ${i} cpu)
  expect("row_cpu STREQUAL \"Test CPU (family 1 model 2)\"" "row ${i} cpu: ${row_cpu}")
  list(APPEND seen "${name}@${row_isa}")
endforeach()
list(SORT seen)
expect("seen STREQUAL \"exp_f32_4096x4096@avx512;matmul_f32_n256@avx2;matmul_f32_n256@avx512\""
       "merged rows: ${seen}")
string(JSON peer GET "${merged}" results 0 peers 0 median)
expect("peer EQUAL 0.18" "a row's peers kept: ${peer}")
expect("out MATCHES \"3 rows\"" "--merge said: ${out}")

# Files that are not a run's JSON: exit 1 naming the file, and no output written.
file(WRITE "${WORK}/garbage.json" "{\"cpu\": \"x\", \"isa\": ")
file(WRITE "${WORK}/no_results.json" "{\"cpu\": \"x\", \"isa\": \"avx2\"}")
file(WRITE "${WORK}/wrong_types.json" "{\"cpu\": 3, \"isa\": \"avx2\", \"results\": []}")
file(WRITE "${WORK}/array.json" "[1, 2, 3]")
foreach(bad garbage.json no_results.json wrong_types.json array.json missing.json)
  file(REMOVE "${WORK}/bad_out.json")
  execute_process(COMMAND "${BENCH}" --merge "${WORK}/bad_out.json" "${WORK}/native.json"
                          "${WORK}/${bad}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  expect("rc EQUAL 1" "--merge of ${bad} exited with '${rc}'")
  expect("err MATCHES \"${bad}\" AND err MATCHES \"not the JSON of a strata_bench run\""
         "--merge of ${bad} said: ${err}")
  expect("NOT EXISTS \"${WORK}/bad_out.json\"" "--merge of ${bad} wrote its output")
endforeach()
execute_process(COMMAND "${BENCH}" --merge "${WORK}/only_out.json" RESULT_VARIABLE rc
                OUTPUT_QUIET ERROR_QUIET)
expect("NOT rc EQUAL 0" "--merge without inputs exited with 0")

# --load: one small row timed while a thread spins on the last CPU; the JSON says so, and a
# run without it carries no "load".
foreach(mode load quiet)
  set(flag "")
  if(mode STREQUAL "load")
    set(flag --load)
  endif()
  execute_process(COMMAND "${BENCH}" ${flag} --filter ad_overhead_chain_3000ops --reps 1
                          --no-peers --no-limits --out "${WORK}/${mode}.json"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  expect("rc EQUAL 0" "--filter run (${mode}) exited with ${rc}: ${err}")
  file(READ "${WORK}/${mode}.json" run)
  string(JSON nrows LENGTH "${run}" results)
  string(JSON row GET "${run}" results 0 name)
  expect("nrows EQUAL 1 AND row STREQUAL ad_overhead_chain_3000ops" "${mode} run's rows")
  string(JSON load_text ERROR_VARIABLE no_load GET "${run}" load)
  if(mode STREQUAL "load")
    expect("load_text MATCHES \"^one spinning thread\" AND out MATCHES \"load: one spinning thread\""
           "--load run: JSON load '${load_text}', printed ${out}")
  else()
    expect("NOT no_load STREQUAL NOTFOUND" "a quiet run's JSON has a load: ${load_text}")
  endif()
endforeach()
