#!/usr/bin/env bash
# The Kubernetes examples (examples/kubernetes) do what their comments say, checked without a
# cluster: both parse as the operators' resources; the MPIJob launcher's command, given the
# hostfile the MPI Operator would mount, makes runrun plan workers x slotsPerWorker ranks on the
# worker pods (--dry-run, through mpirun and with --gloo); the PyTorchJob's command, run here as one
# process per pod with the variables the training operator sets, forms one job of all of them.
# Needs PyYAML; the PyTorchJob part needs torch and the runrun Python package.
# Usage: kubernetes_manifests_test.sh RUNRUN_BINARY [PYTHON] (default: python3 on PATH)
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../launcher/lib.sh" "$1" /bin/true
REPO="$(cd "$here/../../.." && pwd)"
# Absolute: the launcher runs from a scratch directory.
RUNRUN_BINARY="$(readlink -f "$(command -v "$RUNRUN_BINARY")")" || fail "no runrun binary: $1"
MPIJOB="$REPO/examples/kubernetes/mpijob.yaml"
PYTORCHJOB="$REPO/examples/kubernetes/pytorchjob.yaml"
PYTHON="$(command -v "${2:-python3}")" || fail "no Python interpreter: ${2:-python3}"
"$PYTHON" -c "import yaml" 2>/dev/null || fail "PyYAML is not installed (python3 -c 'import yaml')"

# manifest FILE: checks FILE's structure and prints shell assignments of what the test uses.
manifest() {
  "$PYTHON" - "$1" <<'EOF'
import shlex, sys, yaml

path = sys.argv[1]
docs = [d for d in yaml.safe_load_all(open(path)) if d is not None]
assert len(docs) == 1, f"{path}: {len(docs)} documents, expected 1"
job = docs[0]
spec = job["spec"]

def containers(replica):
    cs = replica["template"]["spec"]["containers"]
    assert len(cs) == 1, f"{path}: {len(cs)} containers in a pod, expected 1"
    return cs[0]

def out(name, value):
    words = value if isinstance(value, list) else [value]
    text = " ".join(shlex.quote(str(w)) for w in words)
    print(f"{name}=({text})" if isinstance(value, list) else f"{name}={text}")

if job["kind"] == "MPIJob":
    assert job["apiVersion"] == "kubeflow.org/v2beta1", job["apiVersion"]
    replicas = spec["mpiReplicaSpecs"]
    assert set(replicas) == {"Launcher", "Worker"}, set(replicas)
    assert replicas["Launcher"]["replicas"] == 1
    assert spec["mpiImplementation"] == "OpenMPI"
    assert spec["runPolicy"]["cleanPodPolicy"] and spec["sshAuthMountPath"]
    slots = spec["slotsPerWorker"]
    assert isinstance(slots, int) and slots >= 1, slots
    launcher, worker = containers(replicas["Launcher"]), containers(replicas["Worker"])
    argv = launcher.get("command", []) + launcher.get("args", [])
    assert argv[0] == "runrun", f"the launcher runs {argv[0]}, not runrun"
    host_options = {"-np", "-n", "-H", "--host", "--hosts", "--hostfile", "-hostfile"}
    assert not host_options & set(argv), "the hosts must come from the operator's hostfile"
    # Each rank runs runrun's rank shim at the launcher's path: the same image everywhere.
    assert worker["image"] == launcher["image"], "the workers run another image"
    out("job_name", job["metadata"]["name"])
    out("job_namespace", job["metadata"].get("namespace", "default"))
    out("slots", slots)
    out("workers", replicas["Worker"]["replicas"])
    out("launcher_args", argv[1:])
elif job["kind"] == "PyTorchJob":
    assert job["apiVersion"] == "kubeflow.org/v1", job["apiVersion"]
    replicas = spec["pytorchReplicaSpecs"]
    assert set(replicas) == {"Master", "Worker"}, set(replicas)
    assert replicas["Master"]["replicas"] == 1 and replicas["Worker"]["replicas"] >= 1
    master, worker = containers(replicas["Master"]), containers(replicas["Worker"])
    for c in (master, worker):
        assert c["name"] == "pytorch", "the operator sets its variables in the 'pytorch' container"
        secret = [e for e in c.get("env", []) if e["name"] == "RUNRUN_RENDEZVOUS_SECRET"]
        assert len(secret) == 1, "RUNRUN_RENDEZVOUS_SECRET is not set from a Secret"
        assert secret[0]["valueFrom"]["secretKeyRef"]["optional"] is True
    argv = master.get("command", []) + master.get("args", [])
    assert argv == worker.get("command", []) + worker.get("args", []), "pods run different commands"
    assert "runrun" not in argv[0], "a PyTorchJob pod runs the script itself, not the launcher"
    ports = [p["containerPort"] for p in master.get("ports", []) if p["name"] == "pytorchjob-port"]
    out("master_port", ports[0] if ports else 23456)  # the operator's default
    out("world_size", sum(r["replicas"] for r in replicas.values()))
    out("pod_argv", argv)
else:
    raise SystemExit(f"{path}: unexpected kind {job['kind']}")
EOF
}

# clean_env: removes what would make this shell's processes look launched by mpirun, Slurm,
# torchrun or runrun (the test may itself run under any of them).
clean_env() {
  local name
  for name in $(compgen -e); do
    case "$name" in
      SLURM_* | SRUN_* | OMPI_* | PMIX_* | PMI_* | PRTE_* | RUNRUN_* | PET_* | TORCHELASTIC_* | \
        WORLD_SIZE | RANK | LOCAL_RANK | LOCAL_WORLD_SIZE | GROUP_RANK | MASTER_ADDR | MASTER_PORT)
        unset "$name" ;;
    esac
  done
}

echo "== both manifests parse as an MPIJob and a PyTorchJob"
mpijob_vars="$(manifest "$MPIJOB")" || fail "$MPIJOB is not the expected MPIJob"
eval "$mpijob_vars"
pytorchjob_vars="$(manifest "$PYTORCHJOB")" || fail "$PYTORCHJOB is not the expected PyTorchJob"
eval "$pytorchjob_vars"

echo "== MPIJob: the launcher's command with the operator's hostfile (--dry-run)"
# As the operator writes it (OpenMPI): one line per worker pod, its name under the job's Service.
HOSTFILE="$WORK/mpi/hostfile"
mkdir -p "$WORK/mpi"
hosts=()
for ((i = 0; i < workers; i++)); do
  hosts+=("$job_name-worker-$i.$job_name.$job_namespace.svc")
  echo "${hosts[$i]} slots=$slots" >>"$HOSTFILE"
done
np=$((workers * slots))
host_list="$(printf '%s,' "${hosts[@]/%/:$slots}")"
host_list="${host_list%,}"
# launcher_pod_dry_run NAME [OPTION...]: `runrun --dry-run OPTION... ARGS` with the variables the
# operator sets in the launcher pod; output in $WORK/NAME.out and .err.
launcher_pod_dry_run() {
  local name="$1"
  shift
  (
    clean_env
    export OMPI_MCA_orte_default_hostfile="$HOSTFILE" OMPI_MCA_orte_keep_fqdn_hostnames=true
    export OMPI_MCA_plm_rsh_args="-o ConnectionAttempts=10" OMPI_MCA_orte_set_default_slots="$slots"
    cd "$WORK" && exec "$RUNRUN_BINARY" --dry-run "$@" "${launcher_args[@]}"
  ) >"$WORK/$name.out" 2>"$WORK/$name.err"
}
from_hostfile="from the hostfile $HOSTFILE that OMPI_MCA_orte_default_hostfile names"

launcher_pod_dry_run mpirun
expect_rc $? 0 "runrun --dry-run in the launcher pod"
[ "$(wc -l <"$WORK/mpirun.out")" = 1 ] || fail "expected one mpirun command (mpirun.out)"
command="$(cat "$WORK/mpirun.out")"
[[ "$command" == *mpirun* ]] || fail "no mpirun command: $command"
[[ "$command" == *" -np $np "* ]] || fail "the mpirun command lacks -np $np: $command"
[[ "$command" == *" -H $host_list "* ]] || fail "the mpirun command lacks -H $host_list: $command"
[[ "$command" == *" -- ${launcher_args[*]}" ]] ||
  fail "the mpirun command does not end with the launcher's args: $command"
[ "$(grep -cF -- "$from_hostfile" "$WORK/mpirun.err")" = 1 ] ||
  fail "stderr has no single line saying the hosts are $from_hostfile (mpirun.err)"
expect_line "$WORK/mpirun.err" "$np processes on "

launcher_pod_dry_run gloo --gloo
expect_rc $? 0 "runrun --dry-run --gloo in the launcher pod"
[ "$(wc -l <"$WORK/gloo.out")" = "$np" ] || fail "expected $np rank commands (gloo.out)"
for ((i = 0; i < workers; i++)); do
  [ "$(grep -cF -- "${hosts[$i]} " "$WORK/gloo.out")" = "$slots" ] ||
    fail "expected $slots rank commands on ${hosts[$i]} (gloo.out)"
done
for ((rank = 0; rank < np; rank++)); do
  expect_line "$WORK/gloo.out" "--gloo-rank $rank -- "
done
[ "$(grep -cF -- "$from_hostfile" "$WORK/gloo.err")" = 1 ] ||
  fail "stderr has no single line saying the hosts are $from_hostfile (gloo.err)"

echo "== PyTorchJob: $world_size pods' command with the operator's variables (local processes)"
"$PYTHON" -c "import runrun.torch" 2>/dev/null ||
  fail "the runrun Python package (runrun.torch) is not installed: make install"
# The image has the repository's examples/ under /workspace, and its python3 has runrun: $PYTHON.
local_argv=("${pod_argv[@]//\/workspace\//$REPO/}")
[ "${local_argv[0]}" = python3 ] && local_argv[0]="$PYTHON"
for word in "${local_argv[@]}"; do
  [[ "$word" != "$REPO"/* || -e "$word" ]] || fail "the pods run $word, which the repository lacks"
done
POD_PIDS=()
kill_pods() { local pid; for pid in "${POD_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done; }
CLEANUPS+=(kill_pods)
# run_pods NAME COMMAND...: one process per pod (pod RANK's output in $WORK/NAME.RANK.out/.err),
# each with what the training operator sets: rank 0 is the master, the workers follow.
run_pods() {
  local name="$1" rank failed=0
  shift
  POD_PIDS=()
  for ((rank = 0; rank < world_size; rank++)); do
    (
      clean_env
      export WORLD_SIZE="$world_size" RANK="$rank" MASTER_ADDR=127.0.0.1 MASTER_PORT="$master_port"
      export PET_MASTER_ADDR=127.0.0.1 PET_MASTER_PORT="$master_port" PET_NPROC_PER_NODE=auto
      export PET_NODE_RANK="$rank" PET_NNODES="$world_size" PYTHONUNBUFFERED=1
      [ -n "${POD_SECRET:-}" ] && export RUNRUN_RENDEZVOUS_SECRET="$POD_SECRET"
      [ -n "${POD_RENDEZVOUS_PORT:-}" ] && export RUNRUN_RENDEZVOUS_PORT="$POD_RENDEZVOUS_PORT"
      cd "$WORK" && exec timeout 300 "$@"
    ) >"$WORK/$name.$rank.out" 2>"$WORK/$name.$rank.err" &
    POD_PIDS+=($!)
  done
  for ((rank = 0; rank < world_size; rank++)); do
    wait "${POD_PIDS[$rank]}" || { echo "pod $rank ($name) exited with status $?" >&2; failed=1; }
  done
  [ "$failed" = 0 ] || fail "the $name job failed"
}

# The manifest's own command, with the Secret present (as its secretKeyRef would fill it in).
POD_SECRET="$("$PYTHON" -c 'import secrets; print(secrets.token_hex(32))')"
run_pods example "${local_argv[@]}"
expect_line "$WORK/example.0.out" "\($world_size processes\)"

# The cluster tests' check (sizes, equal parameters, the result of one process on the global
# batch), without the optional Secret and with the port fixed.
POD_SECRET=""
POD_RENDEZVOUS_PORT="$("$PYTHON" -c \
  'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
run_pods check "$PYTHON" "$here/train_check.py" "$world_size" --tag "$TOKEN"
for ((rank = 0; rank < world_size; rank++)); do
  expect_line "$WORK/check.$rank.out" "^TRAIN_CHECK OK rank $rank of $world_size "
done
echo "PASS"
