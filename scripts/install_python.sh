#!/usr/bin/env bash
# Why: installs the `runrun` Python package for the given interpreter from the CMake build
# (frameworks/install_from_build.sh owns the details).
set -euo pipefail
PYTHON="$1"; BUILD_DIR="$2"
bash frameworks/install_from_build.sh "$PYTHON" "$BUILD_DIR"
