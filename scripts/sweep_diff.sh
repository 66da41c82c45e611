#!/bin/sh
# sweep_diff.sh - compare every dataset of two madsweep sweep files.
#
#   scripts/sweep_diff.sh np1.h5 np2.h5
#
# Runs h5diff on each dataset of A (found with h5ls -r), after checking
# both files hold the same datasets. Root attributes are not compared:
# ranks, times and rates differ between runs by design.
# Exit status 0 when every dataset is identical, 1 otherwise, 2 when a
# file is missing, not HDF5 or holds no dataset (two missing files had no
# datasets to differ: exit 0, "identical"; issue 29).
set -eu
a=${1:?usage: sweep_diff.sh A.h5 B.h5}
b=${2:?usage: sweep_diff.sh A.h5 B.h5}
status=0
list() { h5ls -r "$1" | awk '$2 == "Dataset" {print $1}'; }
for f in "$a" "$b"; do
  if ! h5ls -r "$f" >/dev/null 2>&1 || [ -z "$(list "$f")" ]; then
    echo "sweep_diff.sh: $f: missing, not an HDF5 file, or without datasets" >&2
    exit 2
  fi
done
# a dataset present in only one file is a difference too
if [ "$(list "$a")" != "$(list "$b")" ]; then
  echo "DIFFERENT: the files hold different datasets"
  status=1
fi
for d in $(list "$a"); do
  if h5diff "$a" "$b" "$d" "$d" >/dev/null 2>&1; then
    echo "identical: $d"
  else
    echo "DIFFERENT: $d"
    status=1
  fi
done
exit $status
