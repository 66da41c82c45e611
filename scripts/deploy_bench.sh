#!/bin/bash
# deploy_bench.sh - the deployer's question answered end to end, timed
# (issue 28: under 1 s of wall clock on 2 ranks): the serving study of
# configs/sweeps/deploy.cfg (Llama 3 70B on 16 H200 at an SLA, aggregated
# and disaggregated layouts, three engines, their knobs) swept on 2 MPI
# ranks, answered with `madsweep best` at 16 GPUs, and the winner's launch
# command (`madsweep point --engine-args`).
#   scripts/deploy_bench.sh [BUILD_DIR] [OUT_DIR]
# Prints the answer, the command, and "deploy_bench: wall S s (sweep + best)".
set -e
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
out=${2:-${TMPDIR:-/tmp}/madsweep-deploy-bench}
mkdir -p "$out"
exe="$build/madsweep"
mpirun=${MPIRUN:-mpirun}
TIMEFORMAT='%R %U %S'
timing=$( { time { $mpirun -np 2 "$exe" sweep "$here/configs/sweeps/deploy.cfg" \
                       -o "$out/deploy.h5" --quiet &&
                   "$exe" best "$out/deploy.h5" --where deployment_devices==16 \
                       --by output_tokens_per_s_per_device --top 1 --csv > "$out/best.csv"; } ; } 2>&1 )
"$exe" best "$out/deploy.h5" --where deployment_devices==16 \
    --by output_tokens_per_s_per_device --group stack --top 1
id=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "id") c = i } NR == 2 { print $c }' \
    "$out/best.csv")
"$exe" point "$out/deploy.h5" "$id" --engine-args
# wall clock, and the CPU time of the ranks and best: on a loaded machine
# the wall clock waits for the CPUs, not for the work
echo "$timing" | awk '{ printf "deploy_bench: wall %.3f s (sweep + best, 2 ranks); CPU %.3f s\n", $1, $2 + $3 }'
