#!/usr/bin/env bash
# run.sh - the main job on its built-in default sweep: install and build as
# needed, sweep configs/sweeps/quickstart.cfg (the detailed fidelity: Llama
# 3, Mixtral and a DLRM on every hardware generation at 72-18432 GPUs,
# pretraining and serving) on 2 MPI ranks into quickstart.h5, print the
# per-task summary and draw the pictures (quickstart_pareto.png,
# quickstart_pareto_cost.png, quickstart_breakdown.png,
# quickstart_heatmap.png, quickstart_exposed.png, quickstart_speedup.png,
# quickstart_bound.png, and the same as PDF); then the co-design study
# configs/sweeps/codesign.cfg (H100 with 1.5x compute, 2x HBM bandwidth,
# 2x HBM capacity, 2x NIC, the 16 variants) into codesign.h5 beside it,
# its speedups over the FSDP baseline, and its pictures (the same, with
# codesign_tornado.png).
#
# usage: scripts/run.sh [OUT.h5]   (default: quickstart.h5 in the current directory)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-quickstart.h5}
"$here/scripts/setup.sh" build >/dev/null 2>&1 || "$here/scripts/setup.sh" build
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
"$here/scripts/mpirun.sh" -np 2 "$here/build/madsweep" sweep "$here/configs/sweeps/quickstart.cfg" -o "$out"
echo
# the quickstart trains on Megatron-Core, which runs no ZeRO 3: its
# speedup picture is over plain data parallelism (one device per model
# replica: no TP, PP or CP)
/usr/bin/python3 "$here/scripts/plot.py" "$out" -o "${out%.h5}" --baseline 'tp==1,pp==1,cp==1'
echo
cod="$(dirname "$out")/codesign.h5"
"$here/scripts/mpirun.sh" -np 2 "$here/build/madsweep" sweep "$here/configs/sweeps/codesign.cfg" -o "$cod"
echo
"$here/build/madsweep" best "$cod" --group model,system --baseline 'tp==1,pp==1,zero_stage==3' \
  --where 'task==pretrain,devices==1024,scale_mem_capacity_bytes==1,scale_nic_bytes_per_s==1'
echo
/usr/bin/python3 "$here/scripts/plot.py" "$cod" -o "${cod%.h5}"
