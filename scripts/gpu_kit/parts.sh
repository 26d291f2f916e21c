# Why: the parts of `scripts/gpu_kit.sh run` (run.sh), one function each, each run in a process of
# its own under its budget. A part prints "SUMMARY: ..." for the report's table, exits 77 after
# "SKIP: why" when something it needs is missing, and bounds each of its steps by what is left of
# its budget (part_step), so that one stuck step does not eat the others' time. Sourced.

part_skip() { echo "SKIP: $*"; exit 77; }

PART_PASSED=() PART_FAILED=() PART_CUT=() PART_NOTES=()

# part_step NAME SECONDS COMMAND...: one step, at most SECONDS and never past the part's deadline
# (a shell function of these files runs as it is: they are quick).
part_step() {
  local name="$1" seconds="$2" left start rc
  shift 2
  left="$(part_seconds_left)"
  ((seconds > left)) && seconds=$left
  echo
  echo "=== $name (at most $seconds s): $*"
  start="$(date +%s)"
  if declare -F "$1" >/dev/null; then "$@"; else timeout -k 5 "$seconds" "$@"; fi
  rc=$?
  local took=$(($(date +%s) - start))
  if ((rc == 0)); then
    echo "=== $name: passed in $took s"
    PART_PASSED+=("$name")
  else
    if ((rc == 124 || rc == 137)); then
      echo "=== $name: CUT after $seconds s"
      PART_CUT+=("$name")
    else
      echo "=== $name: FAILED (exit status $rc) after $took s"
    fi
    PART_FAILED+=("$name")
  fi
  return $rc
}

# Ends the part: its summary; exit 1 when a step failed, 124 (cut) when one ran out of time.
part_done() {
  local extra="${1:-}"
  if ((${#PART_NOTES[@]})); then
    extra="${extra:+$extra; }$(part_joined "${PART_NOTES[@]}")"
  fi
  if ((${#PART_FAILED[@]})); then
    echo "SUMMARY: ${#PART_FAILED[@]} of $((${#PART_PASSED[@]} + ${#PART_FAILED[@]})) steps" \
         "failed: $(part_joined "${PART_FAILED[@]}")${extra:+; $extra}"
    ((${#PART_CUT[@]})) && exit 124
    exit 1
  fi
  echo "SUMMARY: ${#PART_PASSED[@]} steps passed${extra:+; $extra}"
  exit 0
}

part_joined() {
  local joined
  joined="$(printf '%s; ' "$@")"
  echo "${joined%; }"
}

part_build() {
  local build="$GPU_KIT_BUILD" usr="$GPU_KIT_KIT/root/usr" python
  python="$("$PYTHON" -c 'import sys; print(sys.executable)')" || exit 1
  # A cache from another kit folder would keep that kit's paths.
  if [ -f "$build/CMakeCache.txt" ] &&
     ! grep -qx "CMAKE_PREFIX_PATH:UNINITIALIZED=$usr" "$build/CMakeCache.txt"; then
    echo "gpu_kit: $build was configured for another kit; configuring afresh"
    rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
  fi
  local args=(-S "$GPU_KIT_ROOT" -B "$build" -DCMAKE_BUILD_TYPE="$GPU_KIT_BUILD_TYPE"
    -DCMAKE_PREFIX_PATH="$usr" -DPython3_EXECUTABLE="$python" -DOPENSSL_ROOT_DIR="$usr"
    -DMPI_C_COMPILER="$usr/bin/mpicc" -DMPIEXEC_EXECUTABLE="$usr/bin/mpiexec"
    -DRUNRUN_WITH_MPI=ON -DRUNRUN_WITH_GLOO=ON)
  if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then args+=(-G Ninja); fi
  if ((GPU_KIT_CCACHE)) && command -v ccache >/dev/null; then
    args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  local python_note="Python extension for $python"
  if "$PYTHON" "$GPU_KIT_LIB/probe.py" python-headers; then
    args+=(-DRUNRUN_BUILD_PYTHON=ON)
  else
    args+=(-DRUNRUN_BUILD_PYTHON=OFF)
    python_note="NO Python extension (no Python.h for $python)"
  fi
  local shim_note=""
  if ! part_kit_headers_compile; then
    if part_kit_headers_compile -include cstdint; then
      args+=("-DCMAKE_CXX_FLAGS=-include cstdint")
      shim_note="; the kit's headers needed -include cstdint with $(c++ --version | head -n 1)"
    fi
  fi
  part_step configure 180 cmake "${args[@]}" || part_done
  part_step "dependencies from the kit" 10 part_check_dependencies "$build/CMakeCache.txt" || part_done
  local targets=()
  [ -n "$GPU_KIT_TARGETS" ] && targets=(--target ${GPU_KIT_TARGETS//,/ })
  part_step compile 100000 cmake --build "$build" -j "$GPU_KIT_JOBS" "${targets[@]}" || part_done
  part_python_package
  part_done "$GPU_KIT_BUILD_TYPE, $GPU_KIT_JOBS jobs, targets ${GPU_KIT_TARGETS:-all};\
 $python_note$shim_note"
}

# Whether this machine's compiler takes the kit's headers as runrun includes them (Debian built
# them for GCC 12; GCC 13 and later no longer include <cstdint> through other standard headers,
# which older Gloo headers rely on). Extra arguments go to the compiler.
part_kit_headers_compile() {
  local usr="$GPU_KIT_KIT/root/usr"
  printf '%s\n' '#include <gloo/context.h>' '#include <gloo/rendezvous/context.h>' \
    '#include <gloo/rendezvous/prefix_store.h>' '#include <gloo/transport/tcp/device.h>' \
    '#include <gloo/transport/unbound_buffer.h>' '#include <gloo/types.h>' \
    '#include <spdlog/spdlog.h>' '#include <CLI/CLI.hpp>' '#include <catch2/catch.hpp>' |
    c++ -std=c++20 -fsyntax-only -DSPDLOG_FMT_EXTERNAL -DSPDLOG_COMPILED_LIB -isystem "$usr/include" \
      "$@" -x c++ - && echo "the kit's headers compile with $(c++ --version | head -n 1) $*"
}

# Where CMake found each dependency the kit supplies: a build that used a copy outside the kit
# (the machine's own) would prove nothing about the kit, so that fails the build part.
part_check_dependencies() {
  local cache="$1" key value bad=0
  for key in fmt_DIR spdlog_DIR Gloo_DIR Catch2_DIR CLI11_DIR DLPACK_INCLUDE_DIR OPENSSL_INCLUDE_DIR \
             OPENSSL_CRYPTO_LIBRARY MPI_C_HEADER_DIR MPI_mpi_LIBRARY MPIEXEC_EXECUTABLE; do
    value="$(sed -n "s/^$key:[A-Z]*=//p" "$cache")"
    if [[ "$value" == "$GPU_KIT_KIT"/* ]]; then
      echo "  $key = $value (kit)"
    else
      echo "  $key = ${value:-not set} (NOT FROM THE KIT)"
      bad=1
    fi
  done
  echo "  pybind11_DIR = $(sed -n 's/^pybind11_DIR:[A-Z]*=//p' "$cache") (the python's own)"
  return $bad
}

# The package as python imports it: the sources beside the built runrun._core, in the build folder
# (the source tree's own runrun/ may hold another build's module).
part_python_package() {
  compgen -G "$GPU_KIT_BUILD/python/runrun/_core*.so" >/dev/null || return 0
  tar -C "$GPU_KIT_ROOT/frameworks/python" --exclude='*.so' --exclude=__pycache__ -cf - runrun |
    tar -C "$GPU_KIT_BUILD/python" -xf -
}

part_python_env() {
  compgen -G "$GPU_KIT_BUILD/python/runrun/_core*.so" >/dev/null ||
    part_skip "the Python extension was not built (see build.log)"
  export PYTHONPATH="$GPU_KIT_BUILD/python${PYTHONPATH:+:$PYTHONPATH}"
  export PATH="$GPU_KIT_BUILD/launcher:$PATH"
}

part_smoke() {
  local b="$GPU_KIT_BUILD"
  part_step "C++ example, 2 ranks under the kit's mpirun" 30 \
    mpirun -np 2 --oversubscribe --bind-to none "$b/examples/cpp/runrun_example_allreduce"
  part_step "Catch2 test binary (Gloo store)" 60 "$b/tests/unit/rendezvous/gloo_rendezvous_store_tests"
  if ! compgen -G "$b/python/runrun/_core*.so" >/dev/null; then
    PART_FAILED+=("python: the extension was not built (build.log)")
    part_done
  fi
  part_python_env
  part_step "python, 2 ranks, runrun --mpi" 60 \
    "$b/launcher/runrun" --mpi -np 2 -H localhost:2 "$PYTHON" "$GPU_KIT_LIB/smoke.py"
  part_step "python, 2 ranks, runrun --gloo" 60 \
    "$b/launcher/runrun" --gloo -np 2 -H localhost:2 "$PYTHON" "$GPU_KIT_LIB/smoke.py"
  part_done "CPU only: the kit's Open MPI, Gloo, the launcher and the Python extension"
}

part_ctest_gpu() {
  part_step "ctest -L gpu" "$(part_seconds_left)" ctest --test-dir "$GPU_KIT_BUILD" -L gpu \
    -LE gpu_kit -j 8 --timeout 120 --output-on-failure
  part_done "$(grep -a 'tests passed' "$GPU_KIT_OUT/ctest_gpu.log" | tail -n 1)"
}

# part_pytest NAME FILE OPERATIONS CONTROLLER RANKS [pytest args...]: tests/python/run_pytest.sh
# on one CUDA test file; logs per rank under BUILD/pytest/.
part_pytest() {
  local name="$1" file="$2" operations="$3" controller="$4" np="$5" seconds
  shift 5
  seconds="$(part_seconds_left)"
  ((seconds > 75)) && seconds=75
  # NCCL's INFO lines show which communicators it made (part_nccl_note counts them).
  [ "$operations" = nccl ] && local -x NCCL_DEBUG=INFO
  local tag="${file%.py}-$operations-"
  RUNRUN_GPU_OPERATIONS="$operations" RUNRUN_PYTEST_NP="$np" RUNRUN_PYTEST_CONTROLLERS="$controller" \
    RUNRUN_PYTEST_DIR="$GPU_KIT_ROOT/tests/python/$file" RUNRUN_PYTEST_TAG="$tag" \
    RUNRUN_PYTEST_TIMEOUT="$((seconds - 5))" \
    part_step "$name" "$seconds" bash "$GPU_KIT_ROOT/tests/python/run_pytest.sh" "$GPU_KIT_BUILD" "$@"
  # pytest's counts on rank 0 ("21 passed, 1 deselected in 9.1s"): tests skipped on a GPU
  # machine would pass the step and are worth seeing in the report.
  local counts
  counts="$(grep -aE '^[0-9]+ (passed|failed|skipped|deselected|error)' \
    "$GPU_KIT_BUILD/pytest/$tag$controller-np$np/rank_0.log" 2>/dev/null | tail -n 1)"
  PART_NOTES+=("$name: ${counts:-no pytest result}")
}

part_need_torch_cuda() {
  local why
  why="$("$PYTHON" "$GPU_KIT_LIB/probe.py" torch-cuda 2>&1)" || part_skip "$why"
  echo "$why"
}

part_pytest_cuda() {
  part_python_env
  part_need_torch_cuda
  part_nccl_of_the_wheel
  # Two processes share the GPU: JAX must not take most of its memory at start.
  export XLA_PYTHON_CLIENT_PREALLOCATE=false
  local torch=test_torch_cuda.py not_optimizer=(-k "not distributed_optimizer")
  part_pytest "torch, 1 rank over NCCL" $torch nccl mpi 1 "${not_optimizer[@]}"
  part_pytest "torch, 2 ranks on one GPU, staged over MPI" $torch staging mpi 2 "${not_optimizer[@]}"
  part_pytest "torch, 2 ranks on one GPU, staged over Gloo" $torch staging gloo 2 "${not_optimizer[@]}"
  local jax_note="" why
  if why="$("$PYTHON" "$GPU_KIT_LIB/probe.py" jax-gpu 2>&1)"; then
    part_pytest "jax, 1 rank over NCCL" test_jax_cuda.py nccl mpi 1
    part_pytest "jax, 2 ranks on one GPU, staged over MPI" test_jax_cuda.py staging mpi 2
    part_pytest "jax, 2 ranks on one GPU, staged over Gloo" test_jax_cuda.py staging gloo 2
  else
    jax_note="jax runs skipped: $why"
    echo "$jax_note"
  fi
  part_done "$(part_nccl_note)${jax_note:+; $jax_note}"
}

# Whether NCCL really ran: its INFO lines (NCCL_DEBUG=INFO in the NCCL runs) name each
# communicator it made.
part_nccl_note() {
  echo "NCCL communicators initialized: $(grep -ac 'Init COMPLETE' "$GPU_KIT_OUT/$GPU_KIT_PART.log")"
}

part_optimizer() {
  part_python_env
  part_need_torch_cuda
  part_nccl_of_the_wheel
  local torch=test_torch_cuda.py only=(-k distributed_optimizer)
  part_pytest "DistributedOptimizer on CUDA vs CPU, 1 rank over NCCL" $torch nccl mpi 1 "${only[@]}"
  part_pytest "DistributedOptimizer on CUDA vs CPU, 2 ranks staged over MPI" $torch staging mpi 2 \
    "${only[@]}"
  part_done "$(part_nccl_note)"
}

# The pip wheel's libnccl for the Python runs: torch has it loaded (runrun finds that copy
# anyway), a JAX process need not have it loaded when the first op searches.
part_nccl_of_the_wheel() {
  local line
  line="$("$PYTHON" "$GPU_KIT_LIB/probe.py" libraries | grep '^RUNRUN_NCCL_LIBRARY=')" || return 0
  export "${line?}"
  echo "$line"
}

# RUNRUN_NCCL_LIBRARY / RUNRUN_CUDART_LIBRARY for programs that do not import a framework.
part_gpu_libraries() {
  local line
  while IFS= read -r line; do export "${line?}"; echo "$line"; done \
    < <("$PYTHON" "$GPU_KIT_LIB/probe.py" libraries)
  [ -n "${RUNRUN_NCCL_LIBRARY:-}" ] ||
    part_skip "no libnccl.so.2 found (the nvidia-nccl-cu13 wheel of $PYTHON, /usr/local/cuda)"
}

part_bench() {
  local bench="$GPU_KIT_BUILD/tests/perf/runrun_bench"
  [ -x "$bench" ] || { echo "SUMMARY: $bench was not built"; exit 1; }
  part_gpu_libraries
  part_step "runrun vs raw NCCL, 1 rank, 1 MiB to 1 GiB" "$(part_seconds_left)" \
    mpirun -np 1 --bind-to none "$bench" --cases cuda_allreduce,cuda_broadcast,cuda_allgather \
    --sizes 1M,4M,16M,64M,256M,1G
  part_done "table in bench.log"
}

part_sanitizer_path() {
  command -v compute-sanitizer 2>/dev/null || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null
}

part_sanitizer() {
  local bench="$GPU_KIT_BUILD/tests/perf/runrun_bench" sanitizer
  sanitizer="$(part_sanitizer_path)" ||
    part_skip "compute-sanitizer not found (PATH, /usr/local/cuda/bin)"
  [ -x "$bench" ] || { echo "SUMMARY: $bench was not built"; exit 1; }
  part_gpu_libraries
  local tool operations runs=4
  for tool in memcheck racecheck; do
    for operations in nccl staging; do
      RUNRUN_GPU_OPERATIONS="$operations" \
        part_step "$tool, runrun_bench's CUDA cases over $operations" \
        $(($(part_seconds_left) / runs)) mpirun -np 1 --bind-to none "$sanitizer" --tool "$tool" \
        --error-exitcode 3 "$bench" --cases cuda_allreduce,cuda_broadcast,cuda_allgather \
        --sizes 4K,1M --iters 2 --warmup 1
      runs=$((runs - 1))
    done
  done
  if grep -aq 'Device not supported' "$GPU_KIT_OUT/sanitizer.log"; then
    part_skip "compute-sanitizer does not support this machine's device ('Device not supported')"
  fi
  part_done "memcheck and racecheck, NCCL and staging"
}
