#!/usr/bin/env bash
# run.sh - the main job on its built-in default sweep: install and build as
# needed, sweep configs/sweeps/quickstart.cfg (the detailed fidelity: Llama
# 3, Mixtral and a DLRM on every hardware generation at 72-18432 GPUs,
# pretraining and serving) on 2 MPI ranks into quickstart.h5, print the
# per-task summary and draw the pictures (quickstart_pareto.png,
# quickstart_pareto_cost.png, quickstart_breakdown.png,
# quickstart_heatmap.png, and the same as PDF).
#
# usage: scripts/run.sh [OUT.h5]   (default: quickstart.h5 in the current directory)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-quickstart.h5}
"$here/scripts/setup.sh" build >/dev/null 2>&1 || "$here/scripts/setup.sh" build
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
mpirun -np 2 "$here/build/madsweep" sweep "$here/configs/sweeps/quickstart.cfg" -o "$out"
echo
/usr/bin/python3 "$here/scripts/plot.py" "$out" -o "${out%.h5}"
