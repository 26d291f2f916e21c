# perf.smoke: runs runrun_bench at -np 2 with tiny sizes and few iterations, then checks that it
# exited 0 and that every line of its output is a JSON object with the fields docs/benchmarks.md
# describes. It asserts nothing about time. Usage: cmake -DMPIEXEC=... -DBENCH=... -P smoke.cmake
execute_process(
  COMMAND ${MPIEXEC} -np 2 --oversubscribe --bind-to none ${BENCH} --json
          --sizes 4,4K --iters 2 --warmup 1 --many-count 10 --fusion-thresholds 0,64M
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 150)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "runrun_bench exited with '${rc}'\nstdout:\n${out}\nstderr:\n${err}")
endif()
string(STRIP "${out}" out)
string(REPLACE "\n" ";" lines "${out}")
set(rows 0)
foreach(line IN LISTS lines)
  string(JSON op ERROR_VARIABLE json_error GET "${line}" op)
  if(json_error)
    message(FATAL_ERROR "not a JSON object with an 'op' field: '${line}' (${json_error})")
  endif()
  if(op STREQUAL "run")
    continue()
  endif()
  foreach(field bytes tensors runtime_us raw_us ratio algbw busbw raw_busbw)
    string(JSON value ERROR_VARIABLE json_error GET "${line}" ${field})
    if(json_error OR NOT value GREATER 0)
      message(FATAL_ERROR "field '${field}' missing or not positive in '${line}'")
    endif()
  endforeach()
  math(EXPR rows "${rows} + 1")
endforeach()
# 2 runtimes x (2 allreduce + 2 many + 1 resnet50 + 4 x 2 other ops) rows.
if(NOT rows EQUAL 26)
  message(FATAL_ERROR "expected 26 result rows, got ${rows}:\n${out}")
endif()
message(STATUS "runrun_bench printed ${rows} valid JSON rows")
