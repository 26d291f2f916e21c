# The layer check fires (issue 10, point 7): cmake/check_layers.cmake run on a small tree that
# keeps every rule passes, and the same tree plus one bad include per rule fails, printing each
# one as "file:line includes name: the rule". Run as
#   cmake -DCHECKER=<check_layers.cmake> -DWORK=<scratch folder> -P check_layers_test.cmake
cmake_minimum_required(VERSION 3.25)

set(failures)
macro(fail what)
  string(APPEND failures "\n  ${what}")
endmacro()

# Writes `path` under `root`: two comment lines, then one #include per further argument:
# "name" for a name, <name> for one written "<name>", or the argument as it is when it starts
# with "#".
function(write root path)
  set(lines "// test file" "// line 2")
  foreach(name ${ARGN})
    if(name MATCHES "^[<#]")
      list(APPEND lines "${name}")
    else()
      list(APPEND lines "#include \"${name}\"")
    endif()
  endforeach()
  list(TRANSFORM lines PREPEND "#include " REGEX "^<")
  string(JOIN "\n" body ${lines})
  file(WRITE "${root}/${path}" "${body}\n")
endfunction()

function(run_checker root out_output out_result)
  execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${root} -P ${CHECKER}
                  OUTPUT_VARIABLE output ERROR_VARIABLE output RESULT_VARIABLE result)
  set(${out_output} "${output}" PARENT_SCOPE)
  set(${out_result} "${result}" PARENT_SCOPE)
endfunction()

# A tree where every include keeps the rule.
function(write_good_tree root)
  file(REMOVE_RECURSE "${root}")
  write(${root} common/errors.h <string> runrun/build_config.h)
  write(${root} rendezvous/client.cc common/errors.h rendezvous/client.h)
  write(${root} rendezvous/client.h)
  write(${root} ops/backend_catalog.h runrun/build_config.h common/errors.h)
  write(${root} ops/gpu_libraries.h <string>)
  write(${root} ops/backend.h common/errors.h)
  write(${root} ops/cpu/kernels.h ops/backend.h)
  write(${root} ops/mpi/mpi_backend.h <mpi.h>)
  write(${root} ops/gloo/store.cc rendezvous/client.h "#  include \"ops/backend.h\""
        <gloo/context.h>)
  write(${root} ops/base/checks.h ops/backend.h common/errors.h ops/base/layout.h)
  write(${root} ops/base/layout.h)
  write(${root} ops/adasum/adasum.h ops/backend.h ops/cpu/kernels.h ops/adasum/adasum.h)
  write(${root} ops/registry/provider.h ops/backend.h ops/mpi/mpi_backend.h)
  write(${root} core/runtime/runtime.cc ops/backend.h ops/cpu/kernels.h ops/backend_catalog.h
        ops/adasum/adasum.h core/runtime/runtime.h runrun/c_api.h)
  write(${root} core/runtime/runtime.h)
  write(${root} core/include/runrun/c_api.h <stdint.h>)
  write(${root} core/include/runrun/dlpack_rules.h <dlpack/dlpack.h>)
  write(${root} frameworks/csrc/module.cc <runrun/c_api.h> <runrun/dlpack_rules.h> csrc/errors.h
        <pybind11/pybind11.h>)
  write(${root} frameworks/csrc/errors.h)
  write(${root} launcher/main.cc ops/backend_catalog.h ops/gpu_libraries.h common/errors.h
        rendezvous/client.h runrun/build_config.h)
  write(${root} ops/shm/group.cc common/errors.h ops/backend.h ops/cpu/kernels.h ops/shm/group.h
        ops/base/layout.h)
  write(${root} ops/shm/group.h)
  write(${root} tests/unit/anything.cc core/runtime/runtime.h ops/mpi/mpi_backend.h)
  write(${root} examples/cpp/example.cc ops/mpi/mpi_backend.h)
endfunction()

set(good "${WORK}/good")
write_good_tree(${good})
run_checker(${good} output result)
if(NOT result EQUAL 0)
  fail("a tree that keeps the rule failed the check:\n${output}")
endif()

set(bad "${WORK}/bad")
write_good_tree(${bad})
write(${bad} ops/gloo/up.cc ops/backend.h core/runtime/tensor.h)
write(${bad} common/up.h ops/backend.h)
write(${bad} rendezvous/up.cc ops/backend.h)
write(${bad} ops/up.h <runrun/c_api.h>)
write(${bad} core/concrete.cc ops/mpi/mpi_backend.h)
write(${bad} core/test_only.cc tests/unit/anything.h)
write(${bad} frameworks/csrc/inside.cc core/runtime/runtime.h)
write(${bad} launcher/backend.cc ops/backend.h core/runtime/runtime.h)
write(${bad} ops/backend_catalog.h ops/backend.h)
write(${bad} ops/gpu_libraries.h ops/nccl/nccl_library.h)
write(${bad} ops/mpi/relative.cc mpi_backend.h)
write(${bad} ops/shm/transport.cc ops/gloo/store.h rendezvous/client.h)
write(${bad} core/registry.cc ops/registry/provider.h)
write(${bad} ops/base/transport.h ops/gloo/store.h)
write(${bad} ops/adasum/transport.cc ops/local/local_backend.h)
run_checker(${bad} output result)
if(result EQUAL 0)
  fail("a tree with bad includes passed the check")
endif()

# Each expected line, as the checker prints it (the beginning of it, for the long ones).
set(generated "(and the generated runrun/build_config.h)")
set(launcher_rule "launcher/ sits on common/ and rendezvous/ and may include only common/, "
                  "rendezvous/, launcher/, ops/backend_catalog.h and ops/gpu_libraries.h "
                  "${generated}")
string(CONCAT launcher_rule ${launcher_rule})
set(expected
  "ops/gloo/up.cc:4 includes core/runtime/tensor.h: ops/ is below core/ and may include only common/, \
rendezvous/, ops/ ${generated}"
  "common/up.h:3 includes ops/backend.h: common/ is below ops/ and may include only common/ \
${generated}"
  "rendezvous/up.cc:3 includes ops/backend.h: rendezvous/ is below ops/ and may include only \
common/, rendezvous/ ${generated}"
  "ops/up.h:3 includes runrun/c_api.h: ops/ is below core/ and may include only"
  "core/concrete.cc:3 includes ops/mpi/mpi_backend.h: core/ never includes a concrete backend"
  "core/test_only.cc:3 includes tests/unit/anything.h: core/ is part of the library and may not \
include tests/, only common/"
  "frameworks/csrc/inside.cc:3 includes core/runtime/runtime.h: frameworks/ reaches the core through its \
C API only and may include only the C API runrun/c_api.h, its tensor rules \
runrun/dlpack_rules.h and its own csrc/"
  "launcher/backend.cc:3 includes ops/backend.h: ${launcher_rule}"
  "launcher/backend.cc:4 includes core/runtime/runtime.h: ${launcher_rule}"
  "ops/backend_catalog.h:3 includes ops/backend.h: ops/backend_catalog.h is shared with \
launcher/ and may include only common/ ${generated}"
  "ops/gpu_libraries.h:3 includes ops/nccl/nccl_library.h: ops/gpu_libraries.h is shared with \
launcher/ and may include only common/ ${generated}"
  "ops/mpi/relative.cc:3 includes mpi_backend.h: a project header by a path relative to the \
including file: name it from the repository root (ops/mpi/mpi_backend.h)"
  "ops/shm/transport.cc:3 includes ops/gloo/store.h: ops/shm/ depends on no transport and may \
include only common/, ops/*.h, ops/base/, ops/cpu/ and ops/shm/ ${generated}"
  "ops/shm/transport.cc:4 includes rendezvous/client.h: ops/shm/ depends on no transport"
  "core/registry.cc:3 includes ops/registry/provider.h: core/ never includes a concrete backend \
(it asks make_backend() for a Backend) and may include only common/, rendezvous/, ops/*.h, \
ops/cpu/, ops/adasum/, core/"
  "ops/base/transport.h:3 includes ops/gloo/store.h: ops/base/ depends on no transport and may \
include only common/, ops/*.h and ops/base/ ${generated}"
  "ops/adasum/transport.cc:3 includes ops/local/local_backend.h: ops/adasum/ depends on no \
transport and may include only common/, ops/*.h, ops/cpu/ and ops/adasum/ ${generated}")
foreach(line IN LISTS expected)
  string(FIND "${output}" "${line}" position)
  if(position LESS 0)
    fail("the check did not print: ${line}")
  endif()
endforeach()
string(FIND "${output}" "17 include(s) above break the layer rule" position)
if(position LESS 0)
  fail("the check did not count 17 bad includes")
endif()
# Nothing from the good part of the tree is reported (a reported file starts its line).
string(CONCAT good_files "(^|\n)(tests|examples|core/runtime|launcher/main|ops/gloo/store|"
                         "ops/shm/group|ops/base/checks|ops/adasum/adasum|ops/registry)")
string(REGEX MATCH "${good_files}[^\n]* includes" reported "${output}")
if(reported)
  fail("the check reported an include that keeps the rule: ${reported}")
endif()

if(failures)
  message(NOTICE "checker output on the bad tree:\n${output}")
  message(FATAL_ERROR "layer check test failed:${failures}")
endif()
message(STATUS "layer check: the good tree passes and every bad include is reported")
