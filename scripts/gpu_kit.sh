#!/usr/bin/env bash
# Why: the GPU machine (docs/gpu.md, "GPU kit") is lent for minutes, has no apt and no network,
# and lacks runrun's Debian dependencies. `pack` gathers them here into a relocatable folder;
# `run`, there, builds runrun against that folder and runs every GPU check in one command, each
# part with its own time budget, into a report. The pieces live in scripts/gpu_kit/.
set -uo pipefail
GPU_KIT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
GPU_KIT_LIB="$GPU_KIT_ROOT/scripts/gpu_kit"
# shellcheck source=gpu_kit/packages.sh
. "$GPU_KIT_LIB/packages.sh"

usage() {
  cat <<EOF
Usage: scripts/gpu_kit.sh pack [--kit DIR]
       scripts/gpu_kit.sh run  [--no-gpu] [--kit DIR] [--build DIR] [--out DIR] [--parts LIST]
                               [--targets LIST] [--build-type TYPE] [--jobs N] [--ccache]

pack   (here, Debian 12 with apt) downloads the Debian packages runrun builds against (gloo,
       spdlog, fmt, CLI11, dlpack, Catch2, OpenSSL headers, Open MPI and their run-time
       libraries), extracts them into DIR (default .gpu-kit, git-ignored, at most 48 MiB) and
       writes DIR/manifest.txt. Fails when a library is missing from the kit or it is too big.
run    (on the GPU machine, in the checkout, the kit carried) builds runrun against the kit and
       this machine's python3 in a separate build folder (default build-gpu-kit, Release, all
       cores), then runs the parts, each with its own time budget (the whole within
       \$GPU_KIT_TOTAL_S, default 480 s); a part that runs out of time is cut and reported.
       Parts: build smoke ctest_gpu pytest_cuda optimizer bench sanitizer.
       The report is OUT/report.md with one log per part (OUT: --out, else \$OUT, else
       BUILD/report). Exit status 0 only when no part failed or was cut.
  --no-gpu        skip every GPU part (with the reason in the report); the same happens
                  without nvidia-smi or a GPU
  --parts LIST    only these parts (comma-separated; build always runs, and is quick when done)
  --targets LIST  build only these CMake targets (comma-separated; default: all)
  --build-type T  CMAKE_BUILD_TYPE (default Release)
  --jobs N        build jobs (default: all cores)
  --ccache        compile through ccache when it is installed
Environment: PYTHON (default python3), GPU_KIT_TOTAL_S, GPU_KIT_BUDGET_<PART> (seconds),
GPU_KIT_FALLBACK=auto|always|never (the kit's libcrypto/zlib/libudev on the library path).
EOF
}

main() {
  local command="${1:-}"
  shift || true
  case "$command" in
    pack)
      local kit="$GPU_KIT_ROOT/.gpu-kit"
      while (($#)); do
        case "$1" in
          --kit) kit="$(realpath -m "$2")"; shift 2 ;;
          -h|--help) usage; return 0 ;;
          *) echo "gpu_kit pack: unknown argument '$1'" >&2; usage >&2; return 2 ;;
        esac
      done
      # shellcheck source=gpu_kit/pack.sh
      (. "$GPU_KIT_LIB/pack.sh" && pack_main "$kit")
      ;;
    run)
      # shellcheck source=gpu_kit/run.sh
      . "$GPU_KIT_LIB/run.sh"
      run_main "$@"
      ;;
    __part)  # internal: one part, in a process of its own so that `timeout` can end it
      . "$GPU_KIT_LIB/run.sh"
      run_one_part "$@"
      ;;
    -h|--help|help) usage ;;
    *) usage >&2; return 2 ;;
  esac
}

main "$@"
