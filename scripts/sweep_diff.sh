#!/bin/sh
# sweep_diff.sh - compare every dataset of two madsweep sweep files.
#
#   scripts/sweep_diff.sh np1.h5 np2.h5
#
# Runs h5diff on each dataset of A (found with h5ls -r). Root attributes
# are not compared: ranks, times and rates differ between runs by design.
# Exit status 0 when every dataset is identical, 1 otherwise.
set -eu
a=${1:?usage: sweep_diff.sh A.h5 B.h5}
b=${2:?usage: sweep_diff.sh A.h5 B.h5}
status=0
for d in $(h5ls -r "$a" | awk '$2 == "Dataset" {print $1}'); do
  if h5diff "$a" "$b" "$d" "$d" >/dev/null 2>&1; then
    echo "identical: $d"
  else
    echo "DIFFERENT: $d"
    status=1
  fi
done
exit $status
