#!/usr/bin/env bash
# bench.sh - print the speed figures the issues set targets for.
# Benchmarks print figures; they never pass or fail on time.
#
# usage: scripts/bench.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin="$build/madsweep"
[ -x "$bin" ] || scripts/setup.sh "$build"

echo "== cost model, MAD-Max fidelity, one core (target >= 50,000 evaluations/s on LLaMA2-70B)"
for p in configs/points/llama2_70b_dc_A_2048_fsdp.cfg configs/points/dlrm_a_zionex_128.cfg; do
  echo "-- $p"
  taskset -c 0 "$bin" bench --seconds 3 "$p"
done
