#!/usr/bin/env bash
# bench.sh - print the speed and memory figures the issues set targets for.
# Benchmarks print figures; they never pass or fail on time.
#
# usage: scripts/bench.sh [BUILD_DIR]     (the sweep part writes ~4 GB to
#                                          $BENCH_DIR, default /dev/shm)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin="$build/madsweep"
dir=${BENCH_DIR:-/dev/shm}
[ -x "$bin" ] || scripts/setup.sh "$build"
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

echo "== cost model on one core (targets: >= 50,000/s MAD-Max LLaMA2-70B, >= 200,000/s detailed Llama-3-70B)"
for p in configs/points/llama2_70b_dc_A_2048_fsdp.cfg configs/points/dlrm_a_zionex_128.cfg \
         configs/points/detailed_llama3_70b.cfg; do
  echo "-- $p"
  taskset -c 0 "$bin" bench --seconds 3 "$p"
done

echo "== sweep of configs/sweeps/bench.cfg (targets: np=2 >= 1.8x np=1, >= 50,000 points/s per rank)"
for np in 1 2; do
  out="$dir/madsweep-bench-np$np.h5"
  rm -f "$out"
  /usr/bin/time -f "np=$np: max resident memory of a rank %M KiB" \
    mpirun -np "$np" "$bin" sweep configs/sweeps/bench.cfg -o "$out" --quiet 2>&1
  /usr/bin/python3 - "$out" "$np" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
a = f.attrs
def get(k):
    v = a[k]
    return v.item() if hasattr(v, "item") else v
print("np=%s: %d points evaluated in %.2f s: %.0f points/s, %.0f per rank" % (
    sys.argv[2], get("points_evaluated"), get("elapsed_s"), get("evals_per_s"),
    get("evals_per_s") / int(sys.argv[2])))
PY
  rm -f "$out"
done
