#!/bin/sh
# seeds.sh - seed corpora of the fuzz targets.
#
#   fuzz/seeds.sh SOURCE_DIR MADSWEEP_BINARY OUT_DIR
#
# OUT_DIR/seeds-point: configs/points/*.cfg and tests/data/bad/point_*.cfg;
# OUT_DIR/seeds-spec: configs/sweeps/*.cfg and tests/data/bad/spec_*.cfg;
# OUT_DIR/seeds-results: two small sweep files written by the program
# (madmax, explicit strategies: detailed files hold a large strategy
# table, too large to mutate). The corpus-* directories (where libFuzzer keeps
# the inputs it finds) are created empty if missing.
set -eu
src=${1:?usage: seeds.sh SOURCE_DIR MADSWEEP OUT_DIR}
bin=${2:?}
out=${3:?}
for t in point spec results; do
  mkdir -p "$out/seeds-$t" "$out/corpus-$t"
done
cp "$src"/configs/points/*.cfg "$out/seeds-point/"
cp "$src"/configs/sweeps/*.cfg "$out/seeds-spec/"
for f in "$src"/tests/data/bad/point_*.cfg; do [ -e "$f" ] && cp "$f" "$out/seeds-point/"; done
for f in "$src"/tests/data/bad/spec_*.cfg; do [ -e "$f" ] && cp "$f" "$out/seeds-spec/"; done
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
