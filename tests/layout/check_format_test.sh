#!/usr/bin/env bash
# Why: layout.cpp_format must fail on a file clang-format would change and pass a formatted
# one, or it checks nothing (scripts/check_format.sh --strict).
# Usage: tests/layout/check_format_test.sh WORK_DIR
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="${1:?usage: check_format_test.sh WORK_DIR}"
mkdir -p "$work"
printf 'int  main( ){return 0;}\n' >"$work/unformatted.cc"
printf 'int main() { return 0; }\n' >"$work/formatted.cc"
out="$(bash "$root/scripts/check_format.sh" --strict "$work/unformatted.cc" 2>&1)"
rc=$?
[ "$rc" = 1 ] || { echo "FAIL: an unformatted file gave exit $rc: $out"; exit 1; }
grep -q "unformatted.cc: .* would change" <<<"$out" || { echo "FAIL: not named: $out"; exit 1; }
out="$(bash "$root/scripts/check_format.sh" --strict "$work/formatted.cc" 2>&1)" ||
  { echo "FAIL: a formatted file failed: $out"; exit 1; }
echo "check_format fires on an unformatted file and passes a formatted one"
