# Why: `scripts/gpu_kit.sh run`: one command on the GPU machine that builds runrun against the kit
# and runs the GPU checks (parts.sh), each part in a process of its own under `timeout` with its
# own budget, all within GPU_KIT_TOTAL_S, so a part that hangs or runs long is cut and reported
# while the others still run. Results go to report.md (report.sh). Sourced by scripts/gpu_kit.sh.

# shellcheck source=kit_env.sh
. "$GPU_KIT_LIB/kit_env.sh"
# shellcheck source=parts.sh
. "$GPU_KIT_LIB/parts.sh"
# shellcheck source=report.sh
. "$GPU_KIT_LIB/report.sh"

GPU_KIT_PARTS_IN_ORDER=(build smoke ctest_gpu pytest_cuda optimizer bench sanitizer)
# Seconds each part may take at most (GPU_KIT_BUDGET_<PART> overrides); the sum is over the
# total on purpose: parts usually end well inside theirs, and the total cuts the last ones.
# The whole Release build is about 750 CPU seconds (Debian 12, GCC 12): about a minute on 16 cores.
declare -A GPU_KIT_DEFAULT_BUDGET=([build]=180 [smoke]=40 [ctest_gpu]=60 [pytest_cuda]=170
  [optimizer]=45 [bench]=90 [sanitizer]=80)
# Parts that need a GPU; the others run everywhere.
GPU_KIT_GPU_PARTS=" ctest_gpu pytest_cuda optimizer bench sanitizer "

run_main() {
  local arguments="$*"
  local kit="$GPU_KIT_ROOT/.gpu-kit" build="$GPU_KIT_ROOT/build-gpu-kit" out="${OUT:-}"
  export GPU_KIT_NO_GPU=0 GPU_KIT_PARTS="" GPU_KIT_TARGETS="" GPU_KIT_BUILD_TYPE=Release
  export GPU_KIT_JOBS GPU_KIT_CCACHE=0
  GPU_KIT_JOBS="$(nproc)"
  while (($#)); do
    case "$1" in
      --no-gpu) GPU_KIT_NO_GPU=1; shift ;;
      --kit) kit="$(realpath -m "$2")"; shift 2 ;;
      --build) build="$(realpath -m "$2")"; shift 2 ;;
      --out) out="$(realpath -m "$2")"; shift 2 ;;
      --parts) GPU_KIT_PARTS=",$2,"; shift 2 ;;
      --targets) GPU_KIT_TARGETS="$2"; shift 2 ;;
      --build-type) GPU_KIT_BUILD_TYPE="$2"; shift 2 ;;
      --jobs) GPU_KIT_JOBS="$2"; shift 2 ;;
      --ccache) GPU_KIT_CCACHE=1; shift ;;
      -h|--help) usage; return 0 ;;
      *) echo "gpu_kit run: unknown argument '$1'" >&2; usage >&2; return 2 ;;
    esac
  done
  export GPU_KIT_BUILD="$build" GPU_KIT_OUT="${out:-$build/report}"
  export GPU_KIT_STATE="$build/gpu-kit-state"
  export GPU_KIT_START GPU_KIT_DEADLINE PYTHON="${PYTHON:-python3}"
  GPU_KIT_START="$(date +%s)"
  GPU_KIT_DEADLINE=$((GPU_KIT_START + ${GPU_KIT_TOTAL_S:-480}))
  kit_env "$kit" || return 1
  mkdir -p "$GPU_KIT_OUT" "$GPU_KIT_STATE"
  rm -f "$GPU_KIT_STATE/parts.tsv" "$GPU_KIT_OUT"/*.log "$GPU_KIT_OUT/report.md"
  export GPU_KIT_GPU_REASON
  GPU_KIT_GPU_REASON="$(run_gpu_missing_reason)"
  echo "gpu_kit run: kit $kit, build $build, report $GPU_KIT_OUT/report.md"
  [ -n "$GPU_KIT_GPU_REASON" ] && echo "gpu_kit run: GPU parts skipped: $GPU_KIT_GPU_REASON"
  run_machine_facts >"$GPU_KIT_STATE/machine.txt" 2>&1

  local part
  for part in "${GPU_KIT_PARTS_IN_ORDER[@]}"; do
    run_part "$part"
  done
  report_write "$arguments"
  report_exit_status
}

# Empty when the GPU parts can run, else why not.
run_gpu_missing_reason() {
  if ((GPU_KIT_NO_GPU)); then echo "--no-gpu was given"; return; fi
  command -v nvidia-smi >/dev/null || { echo "nvidia-smi is not installed"; return; }
  local listing
  listing="$(nvidia-smi -L 2>&1)" || { echo "nvidia-smi failed: ${listing%%$'\n'*}"; return; }
  grep -q '^GPU ' <<<"$listing" || echo "nvidia-smi lists no GPU"
}

run_selected() {
  [ -z "$GPU_KIT_PARTS" ] || [ "$1" = build ] || [[ "$GPU_KIT_PARTS" == *",$1,"* ]]
}

# Runs one part under timeout and records: passed, failed, skipped (exit 77, "SKIP: why" in its
# log) or cut (past its budget, or no time left of the total).
run_part() {
  local part="$1" budget var left limit log="$GPU_KIT_OUT/$1.log"
  var="GPU_KIT_BUDGET_${part^^}"
  budget="${!var:-${GPU_KIT_DEFAULT_BUDGET[$part]}}"
  if ! run_selected "$part"; then
    report_record "$part" skipped 0 "$budget" "not in --parts"; return
  fi
  if [[ "$GPU_KIT_GPU_PARTS" == *" $part "* && -n "$GPU_KIT_GPU_REASON" ]]; then
    report_record "$part" skipped 0 "$budget" "no GPU: $GPU_KIT_GPU_REASON"; return
  fi
  if [ "$part" != build ] && [ "$(report_status_of build)" != passed ]; then
    report_record "$part" skipped 0 "$budget" "the build did not pass (build.log)"; return
  fi
  left=$((GPU_KIT_DEADLINE - $(date +%s) - 5))
  limit=$((budget < left ? budget : left))
  if ((limit < 10)); then
    report_record "$part" cut 0 "$budget" "no time left of the run's ${GPU_KIT_TOTAL_S:-480} s"
    return
  fi
  echo "gpu_kit run: $part (at most $limit s) ..."
  local start rc
  start="$(date +%s)"
  export GPU_KIT_PART_DEADLINE=$((start + limit))
  timeout -k 10 "$limit" bash "$GPU_KIT_ROOT/scripts/gpu_kit.sh" __part "$part" >"$log" 2>&1
  rc=$?
  local took=$(($(date +%s) - start)) detail
  detail="$(grep -a '^SUMMARY: ' "$log" | tail -n 1 | cut -c10-)"
  case "$rc" in
    0) report_record "$part" passed "$took" "$budget" "$detail" ;;
    77) report_record "$part" skipped "$took" "$budget" \
          "$(grep -a '^SKIP: ' "$log" | tail -n 1 | cut -c7-)" ;;
    124|137) echo "gpu_kit: cut after $limit s" >>"$log"
             report_record "$part" cut "$took" "$budget" "ran past its $limit s; $detail" ;;
    *) report_record "$part" failed "$took" "$budget" "exit status $rc; $detail" ;;
  esac
  echo "gpu_kit run: $part: $(report_status_of "$part") in $took s"
}

# In the part's own process (scripts/gpu_kit.sh __part NAME).
run_one_part() {
  local part="$1"
  export GPU_KIT_PART="$part"
  set -o pipefail
  cd "$GPU_KIT_ROOT" || exit 1
  "part_$part"
}

# Seconds left to the current part (at least 5): for the timeouts of its steps.
part_seconds_left() {
  local left=$((GPU_KIT_PART_DEADLINE - $(date +%s) - 3))
  echo $((left < 5 ? 5 : left))
}

run_machine_facts() {
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  host: $(hostname)  cores: $(nproc)"
  echo "os: $( (. /etc/os-release && echo "$PRETTY_NAME") 2>/dev/null)  kernel: $(uname -r)"
  echo "memory: $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 |
      sed 's/^/gpu: /'
  else
    echo "gpu: nvidia-smi not installed"
  fi
  local nvcc
  nvcc="$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)"
  echo "nvcc: ${nvcc:-none} $([ -n "$nvcc" ] && "$nvcc" --version | tail -n 1)"
  echo "compute-sanitizer: $(part_sanitizer_path || echo none)"
  echo "compilers: $(c++ --version 2>&1 | head -n 1); $(cmake --version | head -n 1);" \
       "ninja $(ninja --version 2>/dev/null || echo none)"
  echo "kit: $GPU_KIT_KIT ($(grep -c '^package ' "$GPU_KIT_KIT/manifest.txt") packages," \
       "$(awk '/^size_bytes/ {printf "%.1f MiB", $2 / 1048576}' "$GPU_KIT_KIT/manifest.txt"));" \
       "fallback libraries on the path: $GPU_KIT_FALLBACK_USED"
  timeout 60 "$PYTHON" "$GPU_KIT_LIB/probe.py" facts 2>&1
}
