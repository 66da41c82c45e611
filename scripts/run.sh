#!/usr/bin/env bash
# run.sh - the main job on its built-in default sweep: install and build as
# needed, sweep configs/sweeps/quickstart.cfg on 2 MPI ranks into
# quickstart.h5, print the best strategies and draw the Pareto frontier.
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
echo "best strategy for each model and task:"
"$here/build/madsweep" best "$out" --group model,task
/usr/bin/python3 "$here/scripts/plot_pareto.py" "$out" -o "${out%.h5}_pareto.png"
