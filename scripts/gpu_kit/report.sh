# Why: the record of a `scripts/gpu_kit.sh run` (run.sh): one row per part in a state file while
# the run goes on, and at the end OUT/report.md: the parts' table, the machine, and the end of the
# log of every part that failed or was cut. The device tool brings back at most 8 files from $OUT,
# so OUT holds report.md and one log per part that ran (7 at most), nothing else. Sourced.

# report_record PART STATUS SECONDS BUDGET DETAIL
report_record() {
  printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$(printf '%s' "$5" | tr '\t\n|' '  /')" \
    >>"$GPU_KIT_STATE/parts.tsv"
}

report_status_of() {
  awk -F'\t' -v p="$1" '$1 == p { s = $2 } END { print s }' "$GPU_KIT_STATE/parts.tsv" 2>/dev/null
}

report_count() {
  awk -F'\t' -v s="$1" '$2 == s { n++ } END { print n + 0 }' "$GPU_KIT_STATE/parts.tsv"
}

report_exit_status() {
  (($(report_count failed) + $(report_count cut) == 0))
}

report_write() {
  local args="$1" report="$GPU_KIT_OUT/report.md" verdict=PASSED
  report_exit_status || verdict=FAILED
  {
    echo "# runrun GPU kit run: $verdict"
    echo
    echo "\`scripts/gpu_kit.sh run $args\` in $GPU_KIT_ROOT: $(($(date +%s) - GPU_KIT_START)) s of" \
         "${GPU_KIT_TOTAL_S:-480}; $(report_count passed) passed, $(report_count failed) failed," \
         "$(report_count cut) cut, $(report_count skipped) skipped. Build: $GPU_KIT_BUILD" \
         "($GPU_KIT_BUILD_TYPE, ${GPU_KIT_JOBS} jobs, targets: ${GPU_KIT_TARGETS:-all})."
    echo
    echo "| part | result | seconds | budget | detail |"
    echo "|---|---|---|---|---|"
    awk -F'\t' '{ printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5 }' \
      "$GPU_KIT_STATE/parts.tsv"
    echo
    echo "## Machine"
    echo
    echo '```text'
    cat "$GPU_KIT_STATE/machine.txt"
    echo '```'
    echo
    echo "## Logs"
    echo
    echo "Each part that ran has its whole output in \`<part>.log\` beside this report."
    local part status
    while IFS=$'\t' read -r part status _; do
      case "$status" in failed|cut) ;; *) continue ;; esac
      echo
      echo "### $part ($status): the last 40 lines of $part.log"
      echo
      echo '```text'
      tail -n 40 "$GPU_KIT_OUT/$part.log" 2>/dev/null
      echo '```'
    done <"$GPU_KIT_STATE/parts.tsv"
  } >"$report"
  echo "gpu_kit run: $verdict; report: $report"
  awk -F'\t' '{ printf "  %-12s %-8s %5s s  %s\n", $1, $2, $3, $5 }' "$GPU_KIT_STATE/parts.tsv"
}
