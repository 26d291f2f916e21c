#!/usr/bin/env bash
# Why: `make install` makes the `runrun` Python package importable by the given interpreter from
# the CMake build: it copies the built extension runrun._core next to the package sources
# (frameworks/python/runrun, git-ignored *.so) and puts that folder on the interpreter's path with
# a .pth file, so source edits need no reinstall. Fast when nothing changed (a cmp and one import).
# Usage: frameworks/install_from_build.sh PYTHON BUILD_DIR
set -euo pipefail
PYTHON="${1:?usage: install_from_build.sh PYTHON BUILD_DIR}"
BUILD_DIR="${2:?usage: install_from_build.sh PYTHON BUILD_DIR}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PKG_SRC="$ROOT/frameworks/python"

shopt -s nullglob
built=("$BUILD_DIR"/python/runrun/_core*.so)
if ((${#built[@]} != 1)); then
  echo "install_from_build: expected one runrun._core module under $BUILD_DIR/python/runrun," \
       "found ${#built[@]}; build first (cmake --build $BUILD_DIR)" >&2
  exit 1
fi
target="$PKG_SRC/runrun/$(basename "${built[0]}")"
if ! cmp -s "${built[0]}" "$target"; then
  # Replace atomically: a running process may have the old module mapped.
  cp "${built[0]}" "$target.tmp.$$" && mv -f "$target.tmp.$$" "$target"
fi

site="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
pth="$site/runrun-build.pth"
if [ "$(cat "$pth" 2>/dev/null || true)" != "$PKG_SRC" ]; then
  echo "$PKG_SRC" > "$pth"
fi

# A wheel installed by `pip install .` would shadow the build tree; say so rather than test the
# wrong copy.
found="$(cd / && "$PYTHON" -c 'import runrun, os; print(os.path.dirname(runrun.__file__))')"
if [ "$found" != "$PKG_SRC/runrun" ]; then
  echo "install_from_build: '$PYTHON' imports runrun from $found, not from this build;" \
       "run '$PYTHON -m pip uninstall -y runrun' and retry" >&2
  exit 1
fi
