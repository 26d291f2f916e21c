#!/usr/bin/env bash
# Why: the C++ style by machine (.clang-format at the root; docs/architecture.md, "Style
# gates"): lists the files clang-format would change and how many lines, with the pinned
# clang-format from PyPI (scripts/install_deps.sh). ctest layout.cpp_format runs it with
# --strict over the tree (formatted once, in a commit of its own: 425f229); to format a file:
# clang-format -i --style=file FILE.
# Usage: scripts/check_format.sh [--strict] [FILE...]  (default: every tracked .cc/.h/.cu)
set -euo pipefail
cd "$(dirname "$0")/.."
STYLE="file:$PWD/.clang-format"  # also for files outside the tree (the checker's own test)
STRICT=0
if [ "${1:-}" = "--strict" ]; then STRICT=1; shift; fi
PYTHON="${PYTHON:-python3}"
CLANG_FORMAT="$("$PYTHON" -c 'import clang_format; print(clang_format.get_executable("clang-format"))' 2>/dev/null || true)"
if [ ! -x "$CLANG_FORMAT" ]; then
  echo "check_format: the pinned clang-format is missing: pip install clang-format==23.1.3" \
       "(scripts/install_deps.sh installs it)" >&2
  exit 2
fi
if (($#)); then files=("$@"); else mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cu'); fi
changed=0
lines=0
for f in "${files[@]}"; do
  n=$("$CLANG_FORMAT" --style="$STYLE" "$f" | diff "$f" - | grep -c '^>' || true)
  if [ "$n" -gt 0 ]; then
    echo "$f: $n line(s) would change"
    changed=$((changed + 1))
    lines=$((lines + n))
  fi
done
echo "check_format: $changed of ${#files[@]} files would change ($lines lines); $("$CLANG_FORMAT" --version)"
if [ "$STRICT" = 1 ] && [ "$changed" -gt 0 ]; then exit 1; fi
exit 0
