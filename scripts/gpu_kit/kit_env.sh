# Why: the environment under which the kit's packages work from any folder (scripts/gpu_kit.sh
# run, and the self-sufficiency test): Open MPI and PMIx relocated to the kit (OPAL_PREFIX,
# PMIX_PREFIX and PMIx's plugin path), its programs first on PATH, its libraries on
# LD_LIBRARY_PATH (Debian's binaries have no run path, and libgloo's own needs are not covered
# by runrun's), CMake pointed at it.
# Sourced; kit_env KIT exports everything and sets GPU_KIT_FALLBACK_USED.

kit_env() {
  local kit="$1" root="$1/root"
  if [ ! -f "$kit/manifest.txt" ]; then
    echo "gpu_kit: no kit in $kit (run 'scripts/gpu_kit.sh pack' on a Debian 12 machine;" \
         "on the device machine carry the folder with the run)" >&2
    return 1
  fi
  export GPU_KIT_KIT="$kit"
  export OPAL_PREFIX="$root/usr"
  export OPAL_SYSCONFDIR="$root/etc/openmpi"  # Debian's MCA defaults (no openib, ofi, ucx)
  # PMIx: its prefix (help files) and, which the prefix does not move, its plugins (zlib).
  export PMIX_PREFIX="$root/usr/lib/x86_64-linux-gnu/pmix2"
  export PMIX_MCA_mca_base_component_path="$PMIX_PREFIX/lib/pmix"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export PATH="$root/usr/bin:$PATH"
  export CMAKE_PREFIX_PATH="$root/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  local dirs="$root/usr/lib/x86_64-linux-gnu:$root/usr/lib:$root/usr/lib/x86_64-linux-gnu/pmix2/lib"
  dirs="$dirs:$root/lib/x86_64-linux-gnu"
  GPU_KIT_FALLBACK_USED="$(kit_fallback_needed "$kit")"
  [ "${GPU_KIT_FALLBACK_USED%% *}" = yes ] && dirs="$dirs:$kit/fallback"
  export LD_LIBRARY_PATH="$dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export GPU_KIT_FALLBACK_USED
}

# "yes (why)" when the kit's fallback/ libraries go on the library path, else "no (why)".
# GPU_KIT_FALLBACK: auto (default: only when this machine lacks one of them), always, never.
kit_fallback_needed() {
  local kit="$1" lib soname missing=""
  case "${GPU_KIT_FALLBACK:-auto}" in
    always) echo "yes (GPU_KIT_FALLBACK=always)"; return ;;
    never) echo "no (GPU_KIT_FALLBACK=never)"; return ;;
  esac
  for lib in "$kit"/fallback/lib*.so.*; do
    soname="$(basename "$lib")"
    [[ "$soname" =~ ^lib[^.]*\.so\.[0-9]+$ ]] || continue
    if ! ldconfig -p 2>/dev/null | grep -q "^[[:space:]]*$soname "; then
      missing="$missing $soname"
    fi
  done
  if [ -n "$missing" ]; then echo "yes (this machine lacks$missing)"
  else echo "no (this machine has libcrypto 3, zlib and libudev)"; fi
}
