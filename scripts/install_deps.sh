#!/usr/bin/env bash
# Why: `make demo` and `make test` must work on a fresh Debian 12 machine. This installs the
# system packages (apt) and the Python packages (pip, for the python3 first on the PATH) that the
# build and the tests need, and does nothing when they are already there.
# Usage: install_deps.sh [demo|all]. `demo` (make demo): what building runrun and training the
# PyTorch example need (the build's packages, torch); `all` (default; make test): everything the
# whole suite needs on top (TensorFlow, Keras, JAX, Ray, Spark and Java, Slurm and munge, ...).
set -euo pipefail
PROFILE="${1:-all}"
case "$PROFILE" in
  demo | all) ;;
  *) echo "install_deps: unknown profile '$PROFILE' (demo or all)" >&2; exit 2 ;;
esac

APT_PACKAGES=(build-essential cmake ninja-build pkg-config libopenmpi-dev openmpi-bin
  libgloo-dev libspdlog-dev libfmt-dev catch2 pybind11-dev libdlpack-dev libcli11-dev iproute2
  openssh-client procps libssl-dev ccache)
if [ "$PROFILE" = all ]; then
  APT_PACKAGES+=(slurm-wlm munge openjdk-17-jre-headless)
fi

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "install_deps: apt-get install ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  # slurm-wlm and munge ship services (munge, slurmctld, slurmd) that Debian starts on install:
  # the tests start their own (tests/integration/slurm/slurm_cluster.sh), so a policy-rc.d that
  # denies every start is in place during the install, unless the machine already has one.
  POLICY=/usr/sbin/policy-rc.d
  if [ ! -e "$POLICY" ]; then
    printf '#!/bin/sh\n# install_deps.sh: no service starts during its apt-get install\nexit 101\n' |
      $SUDO tee "$POLICY" >/dev/null
    $SUDO chmod 755 "$POLICY"
    trap '$SUDO rm -f "$POLICY"' EXIT
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  # Nor at the next boot: slurmctld and slurmd installed here are left disabled (a system munged
  # may run: the test clusters use their own, on their own socket).
  if [[ " ${missing[*]} " == *" slurm-wlm "* ]]; then
    if command -v systemctl >/dev/null; then
      $SUDO systemctl disable --quiet slurmctld.service slurmd.service >/dev/null 2>&1 || true
    elif command -v update-rc.d >/dev/null; then
      for svc in slurmctld slurmd; do $SUDO update-rc.d "$svc" disable >/dev/null 2>&1 || true; done
    fi
  fi
fi

PYTHON="${PYTHON:-python3}"
need_pip=()
"$PYTHON" -c "import torch; assert torch.__version__.startswith('2.13.0')" 2>/dev/null || need_pip+=("torch==2.13.0")
"$PYTHON" -c "import numpy" 2>/dev/null || need_pip+=(numpy)
if [ "$PROFILE" = demo ]; then
  if ((${#need_pip[@]})); then
    echo "install_deps: pip install ${need_pip[*]}"
    "$PYTHON" -m pip install -q "${need_pip[@]}"
  fi
  exit 0
fi
"$PYTHON" -c "import jax; assert jax.__version__ == '0.10.2'" 2>/dev/null || need_pip+=("jax==0.10.2")
"$PYTHON" -c "import jaxlib; assert jaxlib.__version__ == '0.10.2'" 2>/dev/null || need_pip+=("jaxlib==0.10.2")
"$PYTHON" -c "import optax; assert optax.__version__ == '0.2.8'" 2>/dev/null || need_pip+=("optax==0.2.8")
"$PYTHON" -c "import tensorflow as tf; assert tf.__version__ == '2.21.0'" 2>/dev/null || need_pip+=("tensorflow-cpu==2.21.0")
"$PYTHON" -c "import keras; assert keras.__version__ == '3.15.1'" 2>/dev/null || need_pip+=("keras==3.15.1")
"$PYTHON" -c "import matplotlib; assert matplotlib.__version__ == '3.11.2'" 2>/dev/null || need_pip+=("matplotlib==3.11.2")
"$PYTHON" -c "import pytest" 2>/dev/null || need_pip+=(pytest)
"$PYTHON" -c "import cloudpickle" 2>/dev/null || need_pip+=("cloudpickle==3.1.3")
"$PYTHON" -c "import yaml" 2>/dev/null || need_pip+=("pyyaml==6.0.3")
# Ray Train's extras (pandas, pyarrow, ...): tests/python/ray/ and runrun.ray.
"$PYTHON" -c "import ray, ray.train, pandas, pyarrow; assert ray.__version__ == '2.60.0'" 2>/dev/null || need_pip+=("ray[train]==2.60.0")
"$PYTHON" -c "import pyspark; assert pyspark.__version__ == '4.3.0'" 2>/dev/null || need_pip+=("pyspark==4.3.0")
"$PYTHON" -c "import pybind11" 2>/dev/null || need_pip+=(pybind11)
"$PYTHON" -c "import scikit_build_core" 2>/dev/null || need_pip+=(scikit-build-core)
# The style gates (docs/architecture.md, "Style gates"): ruff and lizard run in ctest (label
# layout), and so does scripts/check_format.sh, clang-format's.
"$PYTHON" -m ruff --version 2>/dev/null | grep -qx "ruff 0.17.5" || need_pip+=("ruff==0.17.5")
"$PYTHON" -c "import lizard; assert lizard.version == '1.24.3'" 2>/dev/null || need_pip+=("lizard==1.24.3")
"$PYTHON" -c "from importlib.metadata import version; assert version('clang-format') == '23.1.3'" 2>/dev/null || need_pip+=("clang-format==23.1.3")
if ((${#need_pip[@]})); then
  echo "install_deps: pip install ${need_pip[*]}"
  "$PYTHON" -m pip install -q "${need_pip[@]}"
fi
