#!/usr/bin/env bash
# fuzz.sh - run the libFuzzer targets of fuzz/ under ASan and UBSan.
#
# usage: scripts/fuzz.sh SECONDS [TARGET...]   (targets: point spec results kernel;
#                                               default: all four)
# Installs clang if needed, builds build-fuzz (CC=clang, -DMADSWEEP_FUZZ=ON),
# makes the seed corpora (fuzz/seeds.sh) and fuzzes each target for SECONDS
# seconds. New inputs that add coverage are kept in build-fuzz/fuzz/corpus-*;
# a crash, hang (10 s per input), leak or sanitizer report stops the target,
# leaves its input in build-fuzz/fuzz/artifacts/ and fails the run (turn
# it into a case of tests/data/bad/ with its expected message). Prints the
# number of executions of each target.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds=${1:?usage: scripts/fuzz.sh SECONDS [point|spec|results|kernel ...]}
shift
targets=("$@")
((${#targets[@]})) || targets=(point spec results kernel)

# libFuzzer and the sanitizer runtimes of clang are in libclang-rt-14-dev,
# only recommended by clang (setup.sh installs without recommends)
scripts/setup.sh --install clang libclang-rt-14-dev
CC=clang cmake -S . -B build-fuzz -DMADSWEEP_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j "$(nproc)" >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd build-fuzz && ctest -R '^fuzz_seeds$' --output-on-failure >/dev/null)

dir=build-fuzz/fuzz
mkdir -p "$dir/artifacts"
export MADSWEEP_CONFIGS="$root/configs"
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$root/fuzz/lsan.supp:print_suppressions=0"
status=0
for t in "${targets[@]}"; do
  log="$dir/fuzz_$t.log"
  if "$dir/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -max_len=65536 -print_final_stats=1 -artifact_prefix="$dir/artifacts/$t-" \
       "$dir/corpus-$t" "$dir/seeds-$t" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz_$t: ${runs:-?} executions in ${seconds} s, no finding"
  else
    echo "fuzz_$t: FINDING (see $log and $dir/artifacts/):"
    grep -E "^==|SUMMARY|Test unit written" "$log" | head -5
    status=1
  fi
done
exit $status
