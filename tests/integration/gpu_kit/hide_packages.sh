#!/usr/bin/env bash
# Why: the GPU kit must be self-sufficient on a machine without runrun's Debian packages. This
# runs a command in a mount namespace of its own where the kit's packages (and pybind11-dev) look
# uninstalled: an overlay on /usr whose whiteouts remove every file of theirs (headers, CMake and
# pkg-config files, libraries, Open MPI's programs and plugins), empty folders over theirs in /etc.
# Nothing outside the namespace changes. Needs root (mount namespaces, overlayfs); exits 77 (a
# ctest skip) with the reason when they are not permitted.
# Usage: hide_packages.sh WORK_DIR COMMAND [ARGS...]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"

skip() { echo "hide_packages: SKIP: $*"; exit 77; }

if [ "${1:-}" = __inside ]; then
  shift
  work="$1"; shift
  mount -t tmpfs gpu-kit-hide "$work/mnt" 2>"$work/mount.err" ||
    skip "cannot mount a tmpfs in a mount namespace: $(cat "$work/mount.err")"
  upper="$work/mnt/usr-upper"
  mkdir -p "$upper" "$work/mnt/usr-work"
  while read -r kind path; do
    case "$path" in
      /usr/*)
        rel="${path#/usr/}"
        mkdir -p "$upper/$(dirname "$rel")"
        mknod "$upper/$rel" c 0 0  # an overlay whiteout: the path does not exist above it
        ;;
      /etc/*)
        if [ "$kind" = dir ]; then mount -t tmpfs gpu-kit-empty "$path"
        else mount --bind /dev/null "$path"; fi
        ;;
      *) echo "hide_packages: cannot hide $path (outside /usr and /etc)" >&2; exit 1 ;;
    esac
  done <"$work/hidden.txt"
  mount -t overlay gpu-kit-usr -o "lowerdir=/usr,upperdir=$upper,workdir=$work/mnt/usr-work" /usr \
    2>"$work/mount.err" || skip "cannot mount an overlay on /usr: $(cat "$work/mount.err")"
  hash -r
  exec "$@"
fi

work="$(realpath -m "${1:?usage: hide_packages.sh WORK_DIR COMMAND [ARGS...]}")"
shift
(($#)) || { echo "usage: hide_packages.sh WORK_DIR COMMAND [ARGS...]" >&2; exit 2; }
[ "$(id -u)" = 0 ] || skip "hiding packages needs root (mount namespaces), running as $(id -un)"
command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
command -v dpkg >/dev/null || skip "not a Debian system (no dpkg)"
mkdir -p "$work/mnt"
# shellcheck source=../../../scripts/gpu_kit/packages.sh
. "$ROOT/scripts/gpu_kit/packages.sh"
python3 "$HERE/hidden_paths.py" "${GPU_KIT_DEV_PACKAGES[@]}" "${GPU_KIT_RUNTIME_PACKAGES[@]}" \
  "${GPU_KIT_ALSO_HIDDEN[@]}" >"$work/hidden.txt"
unshare -m true 2>"$work/unshare.err" ||
  skip "unshare -m is not permitted: $(cat "$work/unshare.err")"
exec unshare -m --propagation private bash "$HERE/hide_packages.sh" __inside "$work" "$@"
