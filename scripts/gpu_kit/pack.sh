# Why: `scripts/gpu_kit.sh pack`: gathers what a bare GPU machine lacks to build and test runrun
# (packages.sh) from Debian 12's .deb files into one relocatable folder, the kit:
#   KIT/root/      the packages' files (usr/include, usr/lib/..., usr/bin, usr/share/openmpi, etc/)
#   KIT/fallback/  libcrypto/libssl 3, zlib, libudev: used only where the machine lacks them
#   KIT/manifest.txt  package versions, what was left out, the size
# Fails when a kept binary needs a library the kit lacks, or when the kit is over its size limit.
# Sourced by scripts/gpu_kit.sh; runs in a subshell of its own.

pack_main() {
  local kit="$1"
  local work
  pack_check_tools || return 1
  work="$(mktemp -d "${TMPDIR:-/tmp}/gpu-kit-pack.XXXXXX")" || return 1
  trap "rm -rf '$work'" EXIT
  local staging="$work/kit"
  mkdir -p "$staging/root" "$staging/fallback" "$work/debs" "$work/base"

  echo "pack: downloading ${#GPU_KIT_DEV_PACKAGES[@]} -dev, ${#GPU_KIT_RUNTIME_PACKAGES[@]} run-time" \
       "and ${#GPU_KIT_BASE_PACKAGES[@]} base packages (apt-get download)"
  (cd "$work/debs" && apt-get -q -o APT::Sandbox::User=root download \
     "${GPU_KIT_DEV_PACKAGES[@]}" "${GPU_KIT_RUNTIME_PACKAGES[@]}" "${GPU_KIT_BASE_PACKAGES[@]}") \
     >"$work/download.log" 2>&1 || {
    cat "$work/download.log"
    echo "pack: apt-get download failed (no apt lists? run apt-get update; no network?)" >&2
    return 1
  }

  local deb pkg
  for deb in "$work"/debs/*.deb; do
    pkg="$(dpkg-deb -f "$deb" Package)"
    if pack_is_base "$pkg"; then
      dpkg-deb -x "$deb" "$work/base"
    else
      dpkg-deb -x "$deb" "$staging/root"
    fi
  done
  pack_fallback "$work/base" "$staging/fallback"
  pack_trim "$staging/root"
  pack_relocate "$staging"
  pack_drop_unloadable_plugins "$staging" >"$work/dropped.txt" || return 1
  pack_check_closure "$staging" || return 1
  pack_manifest "$work/debs" "$work/dropped.txt" "$staging" >"$staging/manifest.txt"

  local bytes
  bytes="$(du -sb "$staging" | cut -f1)"
  awk -v b="$bytes" -v m="$GPU_KIT_MAX_BYTES" \
    'BEGIN { printf "pack: kit is %.1f MiB of at most %d MiB\n", b / 1048576, m / 1048576 }'
  echo "size_bytes $bytes" >>"$staging/manifest.txt"
  if ((bytes > GPU_KIT_MAX_BYTES)); then
    echo "pack: the kit is over its limit of $GPU_KIT_MAX_BYTES bytes" >&2
    return 1
  fi
  rm -rf "$kit"
  mkdir -p "$(dirname "$kit")"
  mv "$staging" "$kit"
  echo "pack: kit ready in $kit ($(grep -c '^package ' "$kit/manifest.txt") packages;" \
       "manifest: $kit/manifest.txt)"
}

pack_check_tools() {
  local tool
  for tool in apt-get dpkg-deb readelf; do
    command -v "$tool" >/dev/null ||
      { echo "pack: needs $tool (Debian: apt, dpkg, binutils)" >&2; return 1; }
  done
  if [ "$(dpkg --print-architecture)" != amd64 ]; then
    echo "pack: the GPU machine is x86-64; this machine is $(dpkg --print-architecture)" >&2
    return 1
  fi
}

pack_is_base() {
  local p
  for p in "${GPU_KIT_BASE_PACKAGES[@]}"; do [ "$p" = "$1" ] && return 0; done
  return 1
}

# The shared objects of the base packages, flat in fallback/ (symlinks kept).
pack_fallback() {
  local from="$1" to="$2"
  find "$from" \( -type f -o -type l \) -name 'lib*.so*' -path '*/lib/*' \
    -not -path '*/engines-3/*' -not -path '*/ossl-modules/*' -exec cp -P {} "$to/" \;
}

# What neither the build nor the tests read: documentation, Fortran and Java bindings, static
# archives (Catch2's is named by its CMake package file, so it stays).
pack_trim() {
  local root="$1"
  rm -rf "$root/usr/share/doc" "$root/usr/share/man" "$root/usr/share/lintian" \
         "$root/usr/lib/x86_64-linux-gnu/fortran" "$root/usr/share/openmpi/mpijavac"* \
         "$root/usr/bin/mpijavac"* "$root/usr/bin/mpif"* "$root/usr/bin/mpifort"* \
         "$root/usr/bin/oshfort" "$root/usr/bin/shmemfort"
  find "$root" -name '*.a' -not -name 'libCatch2WithMain.a' -delete
  find "$root" \( -name 'libmpi_java*' -o -name 'libmpi_mpifh*' -o -name 'libmpi_usempi*' \
                  -o -name '*-fortran-wrapper-data.txt' -o -name 'mpi.jar' \) -delete
}

# Makes the extracted tree usable from any folder: CMake package files that name /usr, pkg-config
# files, the alternatives links Debian makes for mpirun/mpicc, libcrypto's dev link.
pack_relocate() {
  local kit="$1" root="$1/root"
  local f
  # Gloo's imported location is absolute (/usr/lib/libgloo.so...): make it relative to the
  # package's prefix as the other packages' files already are.
  while IFS= read -r f; do
    sed -i 's#"/usr/#"${_IMPORT_PREFIX}/#g' "$f"
  done < <(grep -rl '"/usr/' "$root" --include='*[Tt]argets-*.cmake' || true)
  while IFS= read -r f; do
    local rel
    rel="$(realpath --relative-to="$(dirname "$f")" "$root/usr")"
    sed -i -E "s#^prefix=/usr\$#prefix=\${pcfiledir}/$rel#; s#([=I ])/usr/#\1\${pcfiledir}/$rel/#g" "$f"
  done < <(find "$root" -name '*.pc')
  # Debian's multiarch headers (openssl/opensslconf.h) are found by the compiler's own search
  # path there; here they go beside the others, in the include folder CMake hands out.
  local multiarch="$root/usr/include/x86_64-linux-gnu"
  if [ -d "$multiarch" ]; then
    cp -a "$multiarch/." "$root/usr/include/" && rm -rf "$multiarch"
  fi
  local name
  for name in mpirun mpiexec mpicc mpicxx mpic++; do
    [ -e "$root/usr/bin/$name.openmpi" ] && ln -sf "$name.openmpi" "$root/usr/bin/$name"
  done
  # libssl-dev's libcrypto.so/libssl.so point at the .so.3 that now lives in fallback/.
  local lib="$root/usr/lib/x86_64-linux-gnu"
  for name in libcrypto libssl; do
    if [ -L "$lib/$name.so" ]; then
      ln -sf "$(realpath --relative-to="$lib" "$kit/fallback")/$name.so.3" "$lib/$name.so"
    fi
  done
}

# The folders where the kit's shared libraries live (also what run puts on LD_LIBRARY_PATH).
pack_library_dirs() {
  local root="$1/root"
  echo "$root/usr/lib/x86_64-linux-gnu" "$root/usr/lib" "$root/usr/lib/x86_64-linux-gnu/pmix2/lib" \
       "$root/usr/lib/x86_64-linux-gnu/openmpi/lib" "$root/lib/x86_64-linux-gnu" "$1/fallback"
}

# NEEDED entries of an ELF file that neither the kit nor the C/C++ runtime provides.
pack_unmet_needs() {
  local kit="$1" file="$2" need dir found
  while read -r need; do
    found=0
    for dir in $(pack_library_dirs "$kit"); do
      [ -e "$dir/$need" ] && { found=1; break; }
    done
    if ((!found)); then
      local s
      for s in "${GPU_KIT_SYSTEM_LIBRARIES[@]}"; do [ "$s" = "$need" ] && { found=1; break; }; done
    fi
    ((found)) || echo "$need"
  done < <(readelf -d "$file" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
}

# Open MPI and PMIx plugins whose libraries (UCX, libfabric, PSM, munge, ...) the kit does not
# carry cannot load on the GPU machine: they are left out (Open MPI skips a missing component),
# and so is a library of the kit that needs one of them. Prints what was left out and why.
pack_drop_unloadable_plugins() {
  local kit="$1" changed=1 f unmet
  while ((changed)); do
    changed=0
    while IFS= read -r f; do
      unmet="$(pack_unmet_needs "$kit" "$f" | tr '\n' ' ')"
      if [ -n "$unmet" ]; then
        echo "dropped ${f#"$kit/root/"} (needs ${unmet% })"
        rm -f "$f"
        changed=1
      fi
    done < <(find "$kit/root" -type f \( -path '*/openmpi3/*.so' -o -path '*/pmix/*.so' \
                                          -o -name 'liboshmem.so*' -o -name 'libmca_common_*.so*' \))
  done
  # Links left pointing at what was dropped.
  find "$kit/root" -xtype l -delete
}

# Every ELF file left must find every library it needs in the kit or the C/C++ runtime.
pack_check_closure() {
  local kit="$1" f unmet bad=0
  while IFS= read -r f; do
    head -c 4 "$f" | grep -q 'ELF' || continue
    unmet="$(pack_unmet_needs "$kit" "$f" | tr '\n' ' ')"
    if [ -n "$unmet" ]; then
      echo "pack: ${f#"$kit/"} needs ${unmet% }, which the kit does not carry" >&2
      bad=1
    fi
  done < <(find "$kit" -type f \( -name '*.so*' -o -perm -u+x \))
  return $bad
}

pack_manifest() {
  local debs="$1" dropped="$2" kit="$3" deb role
  echo "# runrun GPU kit (scripts/gpu_kit.sh pack), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# from: $(. /etc/os-release && echo "$PRETTY_NAME"), apt-get download; role: dev (headers," \
       "CMake files), runtime (libraries, Open MPI), base (fallback/: only where the machine lacks it)"
  for deb in "$debs"/*.deb; do
    local pkg
    pkg="$(dpkg-deb -f "$deb" Package)"
    role=runtime
    pack_is_base "$pkg" && role=base
    [[ " ${GPU_KIT_DEV_PACKAGES[*]} " == *" $pkg "* ]] && role=dev
    echo "package $pkg $(dpkg-deb -f "$deb" Version) $(dpkg-deb -f "$deb" Architecture) $role"
  done
  sed 's/^/# /' "$dropped"
}
