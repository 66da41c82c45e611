#!/bin/sh
# seeds.sh - seed corpora of the fuzz targets.
#
#   fuzz/seeds.sh SOURCE_DIR MADSWEEP_BINARY OUT_DIR
#
# OUT_DIR/seeds-point: configs/points/*.cfg and tests/data/bad/point_*.cfg;
# OUT_DIR/seeds-spec: configs/sweeps/*.cfg and tests/data/bad/spec_*.cfg;
# OUT_DIR/seeds-kernel: `madsweep kernel --batch` inputs (kernel lines of
# every kind, set lines, stored rows and their commands);
# OUT_DIR/seeds-results: two small sweep files written by the program
# (madmax, explicit strategies: detailed files hold a large strategy
# table, too large to mutate). The corpus-* directories (where libFuzzer keeps
# the inputs it finds) are created empty if missing.
set -eu
src=${1:?usage: seeds.sh SOURCE_DIR MADSWEEP OUT_DIR}
bin=${2:?}
out=${3:?}
for t in point spec results kernel; do
  mkdir -p "$out/seeds-$t" "$out/corpus-$t"
done
cp "$src"/configs/points/*.cfg "$out/seeds-point/"
cp "$src"/configs/sweeps/*.cfg "$out/seeds-spec/"
for f in "$src"/tests/data/bad/point_*.cfg; do [ -e "$f" ] && cp "$f" "$out/seeds-point/"; done
for f in "$src"/tests/data/bad/spec_*.cfg; do [ -e "$f" ] && cp "$f" "$out/seeds-spec/"; done
cat > "$out/seeds-kernel/one.txt" <<'LINES'
gpu=h100-sxm-80g kind=gemm m=16384 n=8192 k=8192 dtype=fp8
gpu=b200 kind=moe tokens=256 hidden=7168 inter=2048 topk=8 experts=256 ep=8 dtype=nvfp4
gpu=h200 kind=attn phase=decode batch=64 heads_q=64 heads_kv=8 head_dim=128 ctx=8192
gpu=h100-sxm-80g kind=attn phase=prefill batch=1 heads_q=32 head_dim=128 seq=4096 clock_hz=1.5e9
gpu=gb200-nvl72 kind=coll op=all_reduce bytes=1e8 gpus=16 gpus_per_node=8 algo=ring proto=ll128

set gemm_eff=0.8
gpu=a100-80g kind=gemm m=1 n=4096 k=4096 timing=python scale_mem=2
LINES
cat > "$out/seeds-kernel/store.txt" <<'LINES'
+ gpu=h100-sxm-80g kind=gemm m=64 n=2112 k=7168 dtype=fp8_block
& gpu=h100-sxm-80g kind=coll op=all_gather bytes=4e6 gpus=8
+ gpu=h100-sxm-80g kind=gemm m=0 n=1 k=1
sub 3 0 1 0
eval
eval 3
why 1
clear
eval
LINES
cat > "$out/tiny_a.cfg" <<'SPEC'
models = ["dlrm_a", "llama2_70b"];
systems = ["zionex_8", "dc_A_128"];
tasks = ["pretrain", "inference"];
global_batch = [1024, 4096];
strategies = ( { dense = "fsdp:node,ddp:rest"; embedding = "mp:all"; },
               { dense = "ddp:all"; embedding = "mp:node,ddp:rest"; } );
fidelity = "madmax";
chunk = 4;
SPEC
cat > "$out/tiny_b.cfg" <<'SPEC'
models = ["llama2_70b"];
system_grid = ( { base = "dc_A_128"; nodes = [2, 4]; nic_scale = [1.0, 2.0]; } );
tasks = ( { type = "finetune"; freeze_emb = true; min_frozen_layer = 40; } );
global_batch = [64];
strategies = ( { dense = "fsdp:node,ddp:rest"; embedding = "ddp:all"; } );
fidelity = "madmax";
chunk = 3;
SPEC
export MADSWEEP_CONFIGS="$src/configs"
"$bin" sweep "$out/tiny_a.cfg" -o "$out/seeds-results/a.h5" --quiet
"$bin" sweep "$out/tiny_b.cfg" -o "$out/seeds-results/b.h5" --quiet
ls -l "$out"/seeds-results
