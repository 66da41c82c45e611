#!/usr/bin/env bash
# test.sh - the whole test suite: a -Werror build with every CTest test
# (unit, parity, MPI, bad inputs, damaged files, stops and faults, a real
# single-node Slurm cluster), then the same suite built and run once more
# under AddressSanitizer + UndefinedBehaviorSanitizer (the Slurm test
# once only), then each libFuzzer target for 20 s (scripts/fuzz.sh). Any
# failure, any warning and any sanitizer report fails the run (exit
# status non-zero).
#
# usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

# Open MPI refuses root without these; CI runs as root on 2 cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

echo "== packages of the Slurm and fuzz tests"
# What the suite needs beyond the build (a clean Debian 12 has none of it):
# a real Slurm cluster (tests/test_slurm.sh, scripts/slurm_cluster.sh) and
# clang with its libFuzzer and sanitizer runtimes (scripts/fuzz.sh), so
# that a missing package fails here instead of turning into a skip.
scripts/setup.sh --install slurm-wlm munge clang libclang-rt-14-dev
echo "== build (warnings are errors)"
scripts/setup.sh build -DMADSWEEP_WERROR=ON
echo "== tests"
(cd build && ctest --output-on-failure --timeout 600)

echo "== build with AddressSanitizer + UndefinedBehaviorSanitizer"
scripts/setup.sh build-asan -DMADSWEEP_WERROR=ON -DMADSWEEP_SANITIZE=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo
echo "== tests under the sanitizers"
# Leaks inside Open MPI's own libraries are suppressed (tests/lsan.supp);
# ours are not. Any UBSan report aborts the test (halt_on_error).
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:exitcode=86"
export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
(cd build-asan && ctest --output-on-failure --timeout 900)
echo "== fuzz targets, 20 s each, under ASan + UBSan"
unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS # fuzz.sh sets its own
scripts/fuzz.sh 20
echo "== all tests passed, with and without sanitizers"
