#!/usr/bin/env bash
# Why: the GPU kit is worth its carry only if the GPU machine needs nothing else from Debian. This
# proves it here, without a GPU: `scripts/gpu_kit.sh pack` makes a kit, then, with the kit's
# packages hidden (hide_packages.sh: a mount namespace where they look uninstalled),
# `scripts/gpu_kit.sh run --no-gpu` builds against it and runs the smoke part; the test then
# checks the report (build and smoke passed, every GPU part skipped with its reason), that CMake
# found every dependency in the kit and that the programs load the kit's libraries.
# To stay within a CI budget on 2 cores it builds the subset that touches every kit package
# (SUBSET below) without optimization; docs/gpu.md ("GPU kit") says what this leaves unproven.
# Usage: gpu_kit_test.sh SOURCE_DIR WORK_DIR [COMPILER_LAUNCHER]   (exit 77: skipped)
set -euo pipefail
SOURCE="$(cd "$1" && pwd)"
WORK="$(realpath -m "$2")"
LAUNCHER="${3:-}"
HERE="$SOURCE/tests/integration/gpu_kit"
# The core library, the launcher (CLI11, OpenSSL), the Python extension (dlpack, pybind11), a
# Catch2 test binary linking Gloo, and the C++ example the kit's mpirun starts on 2 ranks.
SUBSET=runrun_core,runrun,runrun_python_core,gloo_rendezvous_store_tests,runrun_example_allreduce

fail() { echo "gpu_kit_test: FAILED: $*" >&2; exit 1; }

inside() {
  echo "gpu_kit_test: in the namespace; checking that the packages are hidden"
  local path
  for path in /usr/include/spdlog/spdlog.h /usr/include/fmt/core.h /usr/include/gloo/config.h \
              /usr/include/CLI/CLI.hpp /usr/include/dlpack/dlpack.h /usr/include/catch2/catch.hpp \
              /usr/include/openssl/evp.h /usr/lib/x86_64-linux-gnu/openmpi \
              /usr/lib/x86_64-linux-gnu/libmpi.so.40 /usr/lib/libgloo.so.0 \
              /usr/lib/x86_64-linux-gnu/libspdlog.so.1.10 /usr/bin/mpirun.openmpi \
              /etc/openmpi/openmpi-mca-params.conf; do
    [ ! -e "$path" ] || fail "$path is still visible"
  done
  ! command -v mpirun >/dev/null || fail "mpirun is still on PATH: $(command -v mpirun)"

  local args=(--no-gpu --kit "$WORK/kit" --build "$WORK/build" --out "$WORK/report"
              --build-type None --targets "$SUBSET")
  [ -n "$LAUNCHER" ] && args+=(--ccache)
  local rc=0
  GPU_KIT_FALLBACK=always GPU_KIT_TOTAL_S=540 GPU_KIT_BUDGET_BUILD=480 \
    bash "$SOURCE/scripts/gpu_kit.sh" run "${args[@]}" || rc=$?
  check_report "$WORK/report/report.md"
  ((rc == 0)) || fail "scripts/gpu_kit.sh run exited with $rc"
  check_libraries
  echo "gpu_kit_test: passed: the kit alone built runrun and ran 2 ranks; GPU parts skipped"
}

# build and smoke passed; every GPU part skipped with "no GPU: --no-gpu was given".
check_report() {
  local report="$1" part
  [ -f "$report" ] || fail "no report at $report"
  for part in build smoke; do
    grep -q "^| $part | passed |" "$report" || { cat "$report"; fail "part $part did not pass"; }
  done
  for part in ctest_gpu pytest_cuda optimizer bench sanitizer; do
    grep -q "^| $part | skipped | 0 | [0-9]* | no GPU: --no-gpu was given |" "$report" ||
      { cat "$report"; fail "part $part is not skipped with its reason"; }
  done
  grep -q "smoke rank 1/2 (mpi): exact" "$WORK/report/smoke.log" ||
    fail "no exact 2-rank result over the kit's Open MPI in smoke.log"
  grep -q "smoke rank 1/2 (gloo): exact" "$WORK/report/smoke.log" ||
    fail "no exact 2-rank result over Gloo in smoke.log"
  # Open MPI or PMIx looking for its files where Debian put them: the relocation is incomplete.
  local lost
  lost="$(grep -A1 "couldn't open the help file" "$WORK/report/smoke.log" || true)"
  [ -z "$lost" ] || fail "Open MPI/PMIx looked outside the kit: $lost"
}

# The launcher, the extension and the test binary load the kit's copies (under the kit's
# environment, as run sets it).
check_libraries() {
  # shellcheck source=../../../scripts/gpu_kit/kit_env.sh
  . "$SOURCE/scripts/gpu_kit/kit_env.sh"
  GPU_KIT_FALLBACK=always kit_env "$WORK/kit"
  local binary lib line
  for binary in "$WORK/build/launcher/runrun" "$WORK/build/python/runrun/"_core*.so \
                "$WORK/build/tests/unit/rendezvous/gloo_rendezvous_store_tests"; do
    for lib in libmpi.so libgloo.so libspdlog.so libfmt.so libcrypto.so libopen-pal.so libhwloc.so; do
      line="$(ldd "$binary" | grep "$lib" || true)"
      [ -z "$line" ] && continue
      [[ "$line" == *"=> $WORK/kit/"* ]] ||
        fail "$(basename "$binary") loads $lib from outside the kit: $line"
    done
    line="$(ldd "$binary" | grep 'not found' || true)"
    [ -z "$line" ] || fail "$(basename "$binary"): $line"
  done
  echo "gpu_kit_test: the programs load MPI, Gloo, spdlog, fmt and libcrypto from the kit"
}

if [ "${GPU_KIT_TEST_INSIDE:-0}" = 1 ]; then
  inside
  exit 0
fi

if ! command -v apt-get >/dev/null; then
  echo "gpu_kit_test: SKIP: not a Debian system (no apt-get)"
  exit 77
fi
mkdir -p "$WORK"
rm -rf "$WORK/kit" "$WORK/report"
start="$(date +%s)"
# A fresh kit, before anything is hidden: pack runs wherever this test runs, also where the
# namespace below is not permitted (then the test is skipped after it).
bash "$SOURCE/scripts/gpu_kit.sh" pack --kit "$WORK/kit"
GPU_KIT_TEST_INSIDE=1 bash "$HERE/hide_packages.sh" "$WORK/hide" \
  bash "$HERE/gpu_kit_test.sh" "$SOURCE" "$WORK" "$LAUNCHER"
echo "gpu_kit_test: $(($(date +%s) - start)) s"
