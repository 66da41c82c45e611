#!/usr/bin/env bash
# slurm_cluster.sh - a single-node Slurm cluster on this machine, for tests.
#
# usage: scripts/slurm_cluster.sh start DIR   start munged, slurmctld, slurmd
#        scripts/slurm_cluster.sh stop DIR    stop the daemons started in DIR
#
# Everything lives in DIR: a fresh munge key and socket, slurm.conf (on free
# TCP ports, so it never meets a site's Slurm), state, spool, logs and pid
# files. Clients reach it with SLURM_CONF=DIR/slurm.conf (`start` prints the
# line to eval). The node is this host (hostname -s, 127.0.0.1) with the CPU
# layout slurmd -C reports; one partition "debug". As on a stock Debian
# cluster, MpiDefault is none (jobs pick --mpi=pmix themselves). The daemons
# run as root (slurmd must, to start job steps): `start` needs root, and
# installs Debian's slurm-wlm and munge when they are missing
# (scripts/setup.sh --install). It exits 77 when the cluster cannot start
# (no root, no packages, a daemon that does not come up), saying why, so a
# test can report a skip; `stop` kills only the pids recorded in DIR.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cmd=${1:?usage: slurm_cluster.sh start|stop DIR}
dir=${2:?usage: slurm_cluster.sh start|stop DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

cannot() {
  echo "slurm_cluster: cannot start a Slurm cluster: $*" >&2
  exit 77
}

stop() {
  local f pid
  for f in slurmd slurmctld munged; do
    if [ -s "$dir/$f.pid" ]; then
      pid=$(cat "$dir/$f.pid")
      kill "$pid" 2>/dev/null
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null
      rm -f "$dir/$f.pid"
    fi
  done
}

# two free TCP ports on 127.0.0.1
free_ports() {
  "${PYTHON:-python3}" - <<'PY'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

if [ "$cmd" = stop ]; then
  stop
  exit 0
fi
[ "$cmd" = start ] || { echo "usage: slurm_cluster.sh start|stop DIR" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || cannot "slurmd must run as root (this is uid $(id -u))"
"$here/setup.sh" --install slurm-wlm munge >&2 || cannot "apt-get could not install slurm-wlm and munge"
for b in munged slurmctld slurmd sbatch srun scontrol sinfo; do
  command -v "$b" >/dev/null || cannot "$b is missing after installing slurm-wlm and munge"
done
stop # a cluster left over in DIR

mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/munge.key"
munged -f --socket="$dir/munge/socket" --key-file="$dir/munge/munge.key" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
  --seed-file="$dir/munge/seed" || cannot "munged did not start (see $dir/munged.log)"
munge -S "$dir/munge/socket" -n </dev/null | unmunge -S "$dir/munge/socket" >/dev/null ||
  cannot "munge credentials do not round-trip (see $dir/munged.log)"

node=$(hostname -s)
layout=$(slurmd -C 2>/dev/null | head -n 1 | sed 's/^NodeName=[^ ]* //; s/ *RealMemory=[0-9]*//')
[ -n "$layout" ] || layout="CPUs=$(nproc)"
read -r ctld_port d_port < <(free_ports) || cannot "no free TCP ports"
cat >"$dir/slurm.conf" <<EOF
# written by scripts/slurm_cluster.sh for a test cluster; not for production
ClusterName=madsweep-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
KillWait=5
MinJobAge=600
SlurmdTimeout=120
MessageTimeout=30
NodeName=$node NodeAddr=127.0.0.1 $layout State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF" || cannot "slurmctld did not start (see $dir/slurmctld.log)"
slurmd -f "$SLURM_CONF" || cannot "slurmd did not start (see $dir/slurmd.log)"
for _ in $(seq 60); do
  state=$(sinfo -h -n "$node" -o %T 2>/dev/null | head -n 1)
  case "$state" in
    idle*|mixed*|allocated*) echo "export SLURM_CONF=$SLURM_CONF"; exit 0 ;;
    down*|drain*) scontrol update nodename="$node" state=resume >/dev/null 2>&1 ;;
  esac
  sleep 0.5
done
tail -n 5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2
stop
cannot "the node did not become idle within 30 s (state '${state:-none}')"
