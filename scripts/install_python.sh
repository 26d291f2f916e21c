#!/usr/bin/env bash
# Why: installs the `runrun` Python package for the given interpreter from the CMake build
# (frameworks/ owns the details). Placeholder until the Python package lands.
set -euo pipefail
PYTHON="$1"; BUILD_DIR="$2"
if [ -x frameworks/install_from_build.sh ]; then
  bash frameworks/install_from_build.sh "$PYTHON" "$BUILD_DIR"
fi
