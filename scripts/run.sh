#!/usr/bin/env bash
# run.sh - the main job on its built-in default: install and build as
# needed, then evaluate the MAD-Max reference's LLM example point.
#
# usage: scripts/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
build/madsweep eval configs/points/llama2_70b_dc_A_2048_fsdp.cfg
