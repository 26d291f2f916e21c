#!/usr/bin/env bash
# `pip install .` from the repository works (issue 4, point 1): builds the wheel with the
# project's own build (scikit-build-core over CMake), installs it into a fresh virtual
# environment that sees the system's torch, and runs a 2-rank allreduce with the installed
# `runrun` launcher and package — not the build tree's.
# Usage: pip_install_test.sh SOURCE_DIR PYTHON [BUILD_DIR C_COMPILER CXX_COMPILER WERROR LAUNCHER]
# With the ctest build's directory, compilers and launcher, pip's build uses the same compilers
# and (when the build has one) the same ccache, in BUILD_DIR-packaging-test beside BUILD_DIR:
# with the cache's paths relative to SOURCE_DIR, it is mostly cache hits, which is what makes
# this test take seconds instead of minutes. It checks pip's packaging, not the compiler.
set -euo pipefail
src="$1"; python="$2"; ctest_build="${3:-}"; cc="${4:-}"; cxx="${5:-}"
werror="${6:-OFF}"; launcher="${7:-}"
work=$(mktemp -d)
pip_build="$work/build"
settings=()
if [ -n "$ctest_build" ]; then
  pip_build="$ctest_build-packaging-test"
  # The same flags as the ctest build, or nothing would be a cache hit.
  settings+=(-C "cmake.define.CMAKE_C_COMPILER=$cc" -C "cmake.define.CMAKE_CXX_COMPILER=$cxx"
             -C "cmake.define.RUNRUN_WERROR=$werror")
fi
if [ -n "$launcher" ]; then
  export CCACHE_BASEDIR="$src" CCACHE_NOHASHDIR=1
  settings+=(-C "cmake.define.CMAKE_C_COMPILER_LAUNCHER=$launcher"
             -C "cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=$launcher")
fi
trap 'rm -rf "$work" "$pip_build"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
"$python" -m venv --system-site-packages "$work/venv"
# No build isolation: the build tools are installed already (scripts/install_deps.sh), and the
# build must not download anything.
"$work/venv/bin/python" -m pip install -q --no-deps --no-build-isolation \
  --config-settings=build-dir="$pip_build" "${settings[@]}" "$src"
cd "$work"
"$work/venv/bin/python" -c "import runrun, sys; assert runrun.__file__.startswith('$work/venv'), runrun.__file__"
timeout 120 "$work/venv/bin/runrun" -np 2 "$work/venv/bin/python" -c "
import runrun.torch as hvd, torch
hvd.init()
t = hvd.allreduce(torch.ones(3) * (hvd.rank() + 1), op=hvd.Sum, name='x')
assert t.tolist() == [3.0, 3.0, 3.0], t
assert hvd.__file__.startswith('$work/venv'), hvd.__file__
print('rank', hvd.rank(), 'installed package OK')
hvd.shutdown()
"
echo PASS
