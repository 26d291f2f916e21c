# Why: the layer rule of docs/architecture.md ("Layers") holds only if the build refuses an
# include that breaks it; a reviewer cannot see every #include. Run as a script:
#   cmake -DROOT=<repository root> [-DSTAMP=<file>] -P cmake/check_layers.cmake
# It reads the #include lines of every C/C++ file under common/, rendezvous/, ops/, core/,
# frameworks/ and launcher/ (tests/ and examples/ may include anything), prints one line per
# include that breaks the rule, "file:line includes target: the rule", and fails; on success it
# touches STAMP when given. The build runs it before compiling anything (RunrunLayers.cmake),
# and the `layout` tests run it on trees with bad includes.
#
# The rule, bottom to top: common/ -> rendezvous/ -> ops/ -> core/ -> frameworks/; a layer
# includes only its own folder and the ones below it. Beyond that:
# - core/ takes from ops/ only the backend interface (ops/*.h: ops/'s root holds nothing else),
#   the kernels (ops/cpu/) and Adasum over any Backend (ops/adasum/), never a concrete backend
#   (ops/mpi/, ops/gloo/, ops/local/, ops/shm/, ...) nor the provider registry (ops/registry/):
#   it asks make_backend() for one.
# - ops/base/ (what backends share: argument checks, the host-synchronous base, topology from
#   hosts, block layout) and ops/adasum/ (which core/ includes) depend on no transport: ops/base/
#   includes only common/, the backend interface (ops/*.h) and itself; ops/adasum/ those and the
#   kernels (ops/cpu/).
# - ops/shm/ (the shared-memory path inside a host) is a building block transports use: it
#   depends on no transport, so it includes only common/, the backend interface (ops/*.h),
#   ops/base/, the kernels (ops/cpu/) and itself.
# - ops/algorithms/ (collective algorithms over a point-to-point step interface) likewise
#   depends on no transport: it includes only common/, the backend interface (ops/*.h),
#   ops/base/ and itself.
# - frameworks/ reaches the core through its C API only (runrun/c_api.h) besides its own csrc/.
# - launcher/ sits on common/ and rendezvous/, plus ops/backend_catalog.h (which backends this
#   build has) and ops/gpu_libraries.h (which GPU libraries this machine would load), which
#   therefore may include only common/.
# - runrun/build_config.h, generated into the build folder, is available to every layer.
# - runrun/dlpack_rules.h, the header-only tensor rules beside the C API (which dtypes and
#   layouts it takes), is available to frameworks/ too.
# - a project header is named from the repository root ("ops/mpi/mpi_waiter.h"), never by a
#   path relative to the including file, so this check sees what it is.
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED ROOT OR NOT IS_DIRECTORY "${ROOT}")
  message(FATAL_ERROR "check_layers.cmake: pass -DROOT=<repository root> (got '${ROOT}')")
endif()

set(generated_note " (and the generated runrun/build_config.h)")
set(allowed_text_common "common/")
set(allowed_text_rendezvous "common/, rendezvous/")
set(allowed_text_ops "common/, rendezvous/, ops/")
set(allowed_text_core
    "common/, rendezvous/, ops/*.h, ops/cpu/, ops/adasum/, core/ and its C API runrun/c_api.h")
set(allowed_text_frameworks
    "the C API runrun/c_api.h, its tensor rules runrun/dlpack_rules.h and its own csrc/")
set(allowed_text_launcher
    "common/, rendezvous/, launcher/, ops/backend_catalog.h and ops/gpu_libraries.h")
set(allowed_text_catalog "common/")
set(allowed_text_shm "common/, ops/*.h, ops/base/, ops/cpu/ and ops/shm/")
set(allowed_text_algorithms "common/, ops/*.h, ops/base/ and ops/algorithms/")
set(allowed_text_base "common/, ops/*.h and ops/base/")
set(allowed_text_adasum "common/, ops/*.h, ops/cpu/ and ops/adasum/")
# The stack, bottom to top; launcher/ is beside it.
set(stack common rendezvous ops core frameworks)

# The layer a file of the tree belongs to ("" for files the rule does not cover).
function(layer_of_file path out)
  set(layer "")
  if(path STREQUAL "ops/backend_catalog.h" OR path STREQUAL "ops/gpu_libraries.h")
    set(layer catalog)
  elseif(path MATCHES "^ops/shm/")
    set(layer shm)
  elseif(path MATCHES "^ops/algorithms/")
    set(layer algorithms)
  elseif(path MATCHES "^ops/base/")
    set(layer base)
  elseif(path MATCHES "^ops/adasum/")
    set(layer adasum)
  elseif(path MATCHES "^(common|rendezvous|ops|core|frameworks|launcher)/")
    set(layer ${CMAKE_MATCH_1})
  endif()
  set(${out} "${layer}" PARENT_SCOPE)
endfunction()

# The layer an included name belongs to ("" for a header outside the project).
function(layer_of_include name out)
  set(layer "")
  if(name STREQUAL "runrun/build_config.h")
    set(layer generated)
  elseif(name MATCHES "^runrun/")
    set(layer core)  # core/include/runrun/: the C API
  elseif(name MATCHES "^csrc/")
    set(layer frameworks)
  elseif(name MATCHES "^(common|rendezvous|ops|core|frameworks|launcher|tests|examples)/")
    set(layer ${CMAKE_MATCH_1})
  endif()
  set(${out} "${layer}" PARENT_SCOPE)
endfunction()

# Whether a file of layer `from` may include `name` (of layer `to`).
function(include_allowed from name to out)
  set(ok FALSE)
  if(to STREQUAL "generated" OR to STREQUAL "")
    set(ok TRUE)
  elseif(from STREQUAL "common" OR from STREQUAL "catalog")
    if(to STREQUAL "common")
      set(ok TRUE)
    endif()
  elseif(from STREQUAL "rendezvous")
    if(to MATCHES "^(common|rendezvous)$")
      set(ok TRUE)
    endif()
  elseif(from STREQUAL "ops")
    if(to MATCHES "^(common|rendezvous|ops)$")
      set(ok TRUE)
    endif()
  elseif(from STREQUAL "shm")
    if(to STREQUAL "common" OR name MATCHES "^ops/([^/]+|base/.+|cpu/.+|shm/.+)$")
      set(ok TRUE)
    endif()
  elseif(from STREQUAL "algorithms")
    if(to STREQUAL "common" OR name MATCHES "^ops/([^/]+|base/.+|algorithms/.+)$")
      set(ok TRUE)
    endif()
  elseif(from STREQUAL "base")
    if(to STREQUAL "common" OR name MATCHES "^ops/([^/]+|base/.+)$")
      set(ok TRUE)
    endif()
  elseif(from STREQUAL "adasum")
    if(to STREQUAL "common" OR name MATCHES "^ops/([^/]+|cpu/.+|adasum/.+)$")
      set(ok TRUE)
    endif()
  elseif(from STREQUAL "core")
    if(to MATCHES "^(common|rendezvous|core)$")
      set(ok TRUE)
    elseif(to STREQUAL "ops" AND name MATCHES "^ops/([^/]+|cpu/.+|adasum/.+)$")
      set(ok TRUE)
    endif()
  elseif(from STREQUAL "frameworks")
    if(name STREQUAL "runrun/c_api.h" OR name STREQUAL "runrun/dlpack_rules.h" OR
       name MATCHES "^csrc/")
      set(ok TRUE)
    endif()
  elseif(from STREQUAL "launcher")
    if(to MATCHES "^(common|rendezvous|launcher)$" OR name STREQUAL "ops/backend_catalog.h" OR
       name STREQUAL "ops/gpu_libraries.h")
      set(ok TRUE)
    endif()
  endif()
  set(${out} ${ok} PARENT_SCOPE)
endfunction()

# The rule `from` broke by including a name of layer `to`, in words.
function(rule_text from to out)
  list(FIND stack "${from}" from_index)
  list(FIND stack "${to}" to_index)
  set(allowed "${allowed_text_${from}}${generated_note}")
  if(from STREQUAL "catalog")
    set(text "${path} is shared with launcher/ and may include only ${allowed}")
  elseif(from STREQUAL "shm")
    set(text "ops/shm/ depends on no transport and may include only ${allowed}")
  elseif(from MATCHES "^(algorithms|base|adasum)$")
    set(text "ops/${from}/ depends on no transport and may include only ${allowed}")
  elseif(from STREQUAL "core" AND to STREQUAL "ops")
    string(CONCAT text "core/ never includes a concrete backend (it asks make_backend() for a "
                       "Backend) and may include only ${allowed}")
  elseif(from STREQUAL "frameworks")
    set(text "frameworks/ reaches the core through its C API only and may include only ${allowed}")
  elseif(from STREQUAL "launcher")
    set(text "launcher/ sits on common/ and rendezvous/ and may include only ${allowed}")
  elseif(to STREQUAL "tests" OR to STREQUAL "examples")
    string(CONCAT text "${from}/ is part of the library and may not include ${to}/, only "
                       "${allowed}")
  elseif(from_index GREATER_EQUAL 0 AND to_index GREATER from_index)
    set(text "${from}/ is below ${to}/ and may include only ${allowed}")
  else()
    set(text "${from}/ may include only ${allowed}")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# The 1-based number of the first line of `path` that reads `line`.
function(line_number path line out)
  file(READ "${ROOT}/${path}" content)
  string(FIND "${content}" "${line}" position)
  set(number 0)
  if(position GREATER_EQUAL 0)
    string(SUBSTRING "${content}" 0 ${position} before)
    string(REGEX MATCHALL "\n" newlines "${before}")
    list(LENGTH newlines number)
  endif()
  math(EXPR number "${number} + 1")
  set(${out} ${number} PARENT_SCOPE)
endfunction()

set(globs)
foreach(folder common rendezvous ops core frameworks launcher)
  list(APPEND globs "${ROOT}/${folder}/*")
endforeach()
file(GLOB_RECURSE files RELATIVE "${ROOT}" ${globs})
list(FILTER files INCLUDE REGEX "\\.(h|hh|hpp|c|cc|cpp|cxx|cu|cuh|inc)$")
list(SORT files)

set(violations)
set(include_line_regex "^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"]+)[>\"]")
foreach(path IN LISTS files)
  layer_of_file("${path}" from)
  if(from STREQUAL "")
    continue()
  endif()
  file(STRINGS "${ROOT}/${path}" lines REGEX "${include_line_regex}")
  foreach(line IN LISTS lines)
    string(REGEX MATCH "${include_line_regex}" matched "${line}")
    set(quote "${CMAKE_MATCH_1}")
    set(name "${CMAKE_MATCH_2}")
    layer_of_include("${name}" to)
    set(problem "")
    if(to STREQUAL "" AND quote STREQUAL "\"")
      get_filename_component(directory "${path}" DIRECTORY)
      if(EXISTS "${ROOT}/${directory}/${name}")
        string(CONCAT problem "a project header by a path relative to the including file: name "
                              "it from the repository root (${directory}/${name}) so that the "
                              "layer rule sees it")
      endif()
    else()
      include_allowed("${from}" "${name}" "${to}" ok)
      if(NOT ok)
        rule_text("${from}" "${to}" problem)
      endif()
    endif()
    if(NOT problem STREQUAL "")
      line_number("${path}" "${line}" number)
      list(APPEND violations "${path}:${number} includes ${name}: ${problem}")
    endif()
  endforeach()
endforeach()

list(LENGTH violations count)
if(count GREATER 0)
  foreach(violation IN LISTS violations)
    message(NOTICE "${violation}")
  endforeach()
  message(FATAL_ERROR "layer check: ${count} include(s) above break the layer rule "
                      "(docs/architecture.md, Layers)")
endif()
if(DEFINED STAMP)
  file(TOUCH "${STAMP}")
endif()
