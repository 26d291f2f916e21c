# Sourced by the test scripts that run this checkout's Python package without installing it:
# stage_python_package WORK CORE_MODULE copies frameworks/python/runrun and this build's
# extension into WORK/pkg (WORK is emptied first) and puts it first on PYTHONPATH; on failure
# it calls the script's own fail(). Sets RUNRUN_COLLECTIVE_TIMEOUT=60 so that a broken
# collective ends the test instead of hanging it.
stage_python_package() {
  local work="$1" core="$2"
  local source
  source="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../frameworks/python/runrun" && pwd)"
  rm -rf "$work" && mkdir -p "$work/pkg" || fail "cannot create $work"
  cp -r "$source" "$work/pkg/" && cp "$core" "$work/pkg/runrun/" || fail "cannot stage the package"
  export PYTHONPATH="$work/pkg" RUNRUN_COLLECTIVE_TIMEOUT=60
}
