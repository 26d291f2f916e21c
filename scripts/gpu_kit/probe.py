"""What this machine's python3 offers the GPU kit's run (scripts/gpu_kit/run.sh, parts.sh).

Why: the run must say what it ran on (versions, the GPU the frameworks see, where NCCL and the
CUDA runtime were found) and skip a part with its reason when something it needs is missing,
rather than fail it. Each question imports only what it needs (torch and jax are slow to import).

Usage: python3 probe.py facts | libraries | python-headers | torch-cuda | jax-gpu
  facts           one "name: value" line each, for the report
  libraries       RUNRUN_NCCL_LIBRARY=... and RUNRUN_CUDART_LIBRARY=... lines for the shell,
                  the pip wheels' libraries (nvidia-nccl-cu13, nvidia-cuda-runtime) first,
                  then /usr/local/cuda
  python-headers  exit 0 when Python.h is there to build the extension, else say why, exit 1
  torch-cuda      exit 0 when torch sees a CUDA device, else say why, exit 1
  jax-gpu         exit 0 when jax sees a GPU, else say why, exit 1
"""

import ctypes
import glob
import os
import site
import sys
import sysconfig


def site_dirs():
    dirs = list(site.getsitepackages()) + [site.getusersitepackages()]
    return [d for d in dirs if os.path.isdir(d)]


def find_library(patterns, extra_dirs=()):
    for base in site_dirs():
        for pattern in patterns:
            hits = sorted(glob.glob(os.path.join(base, "nvidia", "**", pattern), recursive=True))
            if hits:
                return hits[0]
    for base in extra_dirs:
        for pattern in patterns:
            hits = sorted(glob.glob(os.path.join(base, pattern)))
            if hits:
                return hits[0]
    return None


def nccl_library():
    return find_library(["libnccl.so.2"], ["/usr/local/cuda/lib64", "/usr/lib/x86_64-linux-gnu"])


def cudart_library():
    return find_library(["libcudart.so.13", "libcudart.so.12"],
                        ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"])


def nccl_version(path):
    try:
        lib = ctypes.CDLL(path)
        version = ctypes.c_int()
        if lib.ncclGetVersion(ctypes.byref(version)) != 0:
            return "ncclGetVersion failed"
        code = version.value
        return f"{code // 10000}.{code // 100 % 100}.{code % 100}"
    except OSError as error:
        return f"cannot open: {error}"


def python_headers():
    header = os.path.join(sysconfig.get_paths()["include"], "Python.h")
    return os.path.exists(header), header


def torch_cuda():
    try:
        import torch
    except ImportError as error:
        return False, f"torch is not importable: {error}"
    if not torch.cuda.is_available():
        return False, f"torch {torch.__version__} sees no CUDA device"
    return True, f"torch {torch.__version__} (CUDA {torch.version.cuda}): " + ", ".join(
        torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))


def jax_gpu():
    try:
        import jax
    except ImportError as error:
        return False, f"jax is not importable: {error}"
    try:
        devices = jax.devices()
    except RuntimeError as error:
        return False, f"jax {jax.__version__} found no devices: {error}"
    gpus = [d for d in devices if d.platform == "gpu"]
    if not gpus:
        return False, f"jax {jax.__version__} sees no GPU (devices: {devices})"
    return True, f"jax {jax.__version__}: {gpus}"


def facts():
    print(f"python: {sys.executable} {sys.version.split()[0]}")
    present, header = python_headers()
    print(f"Python.h: {header} ({'present' if present else 'MISSING'})")
    try:
        import pybind11
        print(f"pybind11: {pybind11.__version__}")
    except ImportError:
        print("pybind11: not installed")
    nccl = nccl_library()
    print(f"NCCL: {nccl} ({nccl_version(nccl)})" if nccl else "NCCL: not found")
    print(f"CUDA runtime: {cudart_library() or 'not found'}")
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    for probe in (torch_cuda, jax_gpu):
        print(probe()[1])


def main():
    question = sys.argv[1] if len(sys.argv) > 1 else "facts"
    if question == "facts":
        facts()
    elif question == "libraries":
        for name, path in (("RUNRUN_NCCL_LIBRARY", nccl_library()),
                           ("RUNRUN_CUDART_LIBRARY", cudart_library())):
            if path:
                print(f"{name}={path}")
    else:
        probes = {"python-headers": lambda: (python_headers()[0], "Python.h: "
                                             + python_headers()[1]),
                  "torch-cuda": torch_cuda, "jax-gpu": jax_gpu}
        ok, why = probes[question]()
        print(why)
        sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
