# Why: one place that names the Debian 12 packages the GPU kit carries (scripts/gpu_kit.sh pack)
# and the ones its self-sufficiency test hides (tests/integration/gpu_kit). Sourced, not run.
# The GPU machine (docs/gpu.md, "GPU kit") has a compiler, CMake, ninja, CUDA and a python3 with
# torch, jax and pybind11, but none of these.

# Headers, CMake package files and pkg-config files runrun builds against.
GPU_KIT_DEV_PACKAGES=(libgloo-dev libspdlog-dev libfmt-dev libcli11-dev libdlpack-dev catch2
  libopenmpi-dev libssl-dev)

# The shared libraries those link to, and Open MPI's launcher, plugins and help files with what
# they need at run time (ldd of libmpi, mpirun, libgloo).
GPU_KIT_RUNTIME_PACKAGES=(libgloo0 libspdlog1.10 libfmt9 libopenmpi3 openmpi-bin openmpi-common
  libpmix2 libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7 libhiredis0.14 libibverbs1
  libnl-3-200 libnl-route-3-200 libmunge2)

# Libraries every glibc system has in some version (libcrypto 3, zlib, libudev): kept apart in
# the kit's fallback/ folder and put on the library path only where the machine lacks them, so
# a framework's own copies are never shadowed by Debian's.
GPU_KIT_BASE_PACKAGES=(libssl3 zlib1g libudev1)

# Hidden by the self-sufficiency test besides the kit's own packages: pybind11 must come from
# the python3 the build is for (pip's), as on the GPU machine (Debian's 2.10 predates Python 3.12).
GPU_KIT_ALSO_HIDDEN=(pybind11-dev)

# Libraries no kit carries: the C/C++ runtime of any Linux with a compiler.
GPU_KIT_SYSTEM_LIBRARIES=(linux-vdso.so.1 ld-linux-x86-64.so.2 libc.so.6 libm.so.6
  libpthread.so.0 libdl.so.2 librt.so.1 libutil.so.1 libstdc++.so.6 libgcc_s.so.1 libatomic.so.1)

# At most this much on disk (the device tool carries 64 MiB of the checkout in all).
GPU_KIT_MAX_BYTES=$((48 * 1024 * 1024))
