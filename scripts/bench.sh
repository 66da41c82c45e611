#!/usr/bin/env bash
# bench.sh - print the speed and memory figures the issues set targets for.
# Benchmarks print figures; they never pass or fail on time.
#
# usage: scripts/bench.sh [BUILD_DIR] [PART]  (PART: all (default), cost,
#                                          sweep, grid or scale; the sweep part
#                                          writes ~4 GB to $BENCH_DIR,
#                                          default /dev/shm; the scale part
#                                          runs > 10^9 detailed points at
#                                          np=2: 20-25 min on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
part=${2:-all}
bin="$build/madsweep"
dir=${BENCH_DIR:-/dev/shm}
[ -x "$bin" ] || scripts/setup.sh "$build"
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

if [ "$part" = all ] || [ "$part" = cost ]; then
echo "== cost model on one core (targets: >= 50,000/s MAD-Max LLaMA2-70B, >= 1,000,000/s detailed Llama-3-70B with its band)"
for p in configs/points/llama2_70b_dc_A_2048_fsdp.cfg configs/points/dlrm_a_zionex_128.cfg \
         configs/points/detailed_llama3_70b.cfg; do
  echo "-- $p"
  taskset -c 0 "$bin" bench --seconds 3 "$p"
done

fi

if [ "$part" = all ] || [ "$part" = sweep ]; then
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
fi

if [ "$part" = all ] || [ "$part" = scale ]; then
echo "== scale: configs/sweeps/scale.cfg, > 10^9 valid detailed points kept as the top 5 per"
echo "   (model, hardware, task), np=2; and the same spec cut to one stack and one batch"
echo "   (1.3 % of the points), to show that memory per rank does not grow with the space"
small="$dir/madsweep-scale-small.cfg"
sed 's/^stacks = .*/stacks = ["megatron-core"];/; s/^global_batch = .*/global_batch = [1152];/' \
  configs/sweeps/scale.cfg > "$small"
for spec in "$small" configs/sweeps/scale.cfg; do
  out="$dir/madsweep-scale.h5"
  rm -f "$out"
  mpirun -np 2 "$bin" sweep "$spec" -o "$out" --quiet
  /usr/bin/python3 - "$out" "$spec" <<'PY'
import math, os, sys, h5py
path, spec = sys.argv[1], sys.argv[2]
f = h5py.File(path, "r")
a = {k: (v.item() if hasattr(v, "item") else v) for k, v in f.attrs.items()}
P = a["ranks"]; N = a["points_evaluated"]; T = a["elapsed_s"]
rate = N / T / P
size = os.path.getsize(path)
print("%s: %d valid points (of %d combinations), %d kept rows, %d groups" % (
    os.path.basename(spec), a["points_valid"], a["points_total"], a["rows_kept"],
    f["groups"].shape[0]))
print("  np=%d: %.1f s, %.0f evaluations/s per rank; file %.2f MB; peak memory of a rank %.1f MB"
      % (P, T, rate, size / 1e6, a["peak_rss_bytes"] / 1e6))
syncs = max(1, a["reduce_syncs"])
print("  count pass %.2f s; %d sync points (a checkpoint a minute, and the last): merges "
      "%.4f s (slowest rank), final re-evaluation %.4f s; rank 0's root-only work %.4f s "
      "= %.3f%% of the run" % (a["count_s"], syncs, a["reduce_merge_s"], a["reduce_final_s"],
      a["reduce_root_s"], 100 * a["reduce_root_s"] / T))
# on paper, 1,024 ranks: evaluation scales with P (dynamic chunks of about
# equal cost); the count pass divides its blocks over P; every sync point
# (one per checkpoint interval of 60 s, and the last) merges over a tree
# of log2 P levels, each at most the measured one-level merge (states of
# the same size: groups x K), and costs rank 0 the measured root-only work
# (writing the checkpoint or /groups), which does not depend on P; the
# kept rows are re-evaluated in slices.
Q = 1024
t_eval = N / (rate * Q)
syncs_q = 1 + int(t_eval // 60)
level = a["reduce_merge_s"] / syncs / max(1, math.log2(P))
t_count = a["count_s"] * P / Q
t_merge = syncs_q * level * math.log2(Q)
t_root = syncs_q * a["reduce_root_s"] / syncs
t_final = a["reduce_final_s"] * P / Q
total = t_eval + t_count + t_merge + t_root + t_final
chunks = a["chunks"]
print("  on paper at %d ranks: %.2f s = eval %.2f + count %.4f + merges %.4f (%d sync x %d "
      "levels) + root-only %.4f + final %.4f; root's share (its merges and root-only work) "
      "%.2f%%; rank 0 serves %.0f chunk draws/s (chunk = %d ids; a larger `chunk` divides it)"
      % (Q, total, t_eval, t_count, t_merge, syncs_q, int(math.log2(Q)), t_root, t_final,
         100 * (t_root + t_merge) / total, chunks / t_eval, a["chunk_ids"]))
print("  10^11 points at %d ranks: %.0f s of evaluation" % (Q, 1e11 / (rate * Q)))
PY
  rm -f "$out"
done
rm -f "$small"
fi

if [ "$part" = all ] || [ "$part" = grid ]; then
echo "== grid: hardware scale grids of n variants (one model, one strategy, one rank;"
echo "   targets: 64,000 in <= 3 s, 512,000 in <= 15 s; time must grow with n, not n^2),"
echo "   and a grid too large to generate, refused at once with its size"
spec="$dir/madsweep-grid.cfg"
for side in 20 40 80; do # side^3 variants: three scaled figures
  n=$((side * side * side))
  /usr/bin/python3 - "$side" >"$spec" <<'PY'
import sys
k = int(sys.argv[1])
f = ", ".join("%.2f" % (1 + i / 100) for i in range(k))
print('name = "grid"; models = ["llama3-8b"]; tasks = ["pretrain"]; global_batch = [64];')
print('strategies = ( { tp = 8; } );')
print('system_grid = ( { hardware = "h100-sxm-80g"; nodes = [1]; devices_per_node = [8];')
print('  scale = { peak_bf16_flops = [%s]; mem_bw_bytes_per_s = [%s]; nic_bytes_per_s = [%s]; }; } );'
      % (f, f, f))
PY
  for quiet in --quiet ""; do
    out="$dir/madsweep-grid.h5"
    rm -f "$out"
    /usr/bin/time -f "%e %M" -o "$dir/madsweep-grid.time" \
      "$bin" sweep "$spec" -o "$out" $quiet >/dev/null
    read -r secs kib < <(tail -n 1 "$dir/madsweep-grid.time")
    what="(--quiet)"
    [ -n "$quiet" ] || what="(with the summary: a line a variant, each re-evaluated)"
    echo "n=$n variants $what: $secs s, peak memory $((kib / 1024)) MiB"
  done
  rm -f "$out"
done
/usr/bin/python3 - >"$spec" <<'PY'
f = ", ".join("%.3f" % (1 + i / 1000) for i in range(1000))
print('name = "grid"; models = ["llama3-8b"]; tasks = ["pretrain"]; global_batch = [64];')
print('strategies = ( { tp = 8; } );')
print('system_grid = ( { hardware = "h100-sxm-80g"; nodes = [1]; devices_per_node = [8];')
print('  scale = { peak_bf16_flops = [%s]; mem_bw_bytes_per_s = [%s]; nic_bytes_per_s = [%s]; }; } );'
      % (f, f, f))
PY
/usr/bin/time -f "%e %M" -o "$dir/madsweep-grid.time" \
  "$bin" sweep "$spec" -o "$dir/madsweep-grid.h5" --quiet 2>"$dir/madsweep-grid.err" || true
read -r secs kib < <(tail -n 1 "$dir/madsweep-grid.time")
echo "n=10^9 variants: refused in $secs s (peak memory $((kib / 1024)) MiB): $(cut -c1-160 "$dir/madsweep-grid.err")..."
rm -f "$spec" "$dir/madsweep-grid.h5" "$dir/madsweep-grid.time" "$dir/madsweep-grid.err"
fi
