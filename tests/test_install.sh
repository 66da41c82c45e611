#!/bin/sh
# test_install.sh - the install a centre would package (issue 19):
# `cmake --install BUILD --prefix P` puts bin/madsweep, the catalogues and
# sweep specs under P/share/madsweep, the scripts and the Python loader
# beside them; the prefix is then moved (so nothing can point back into
# the build), and from another directory P2/bin/madsweep lists the
# hardware and runs a 2-rank quickstart sweep whose file records
# catalogues read from P2/share/madsweep/configs; --configs still
# overrides. Every installed Python script imports from the prefix alone,
# and validate.py (training and kernel tables) and calibrate.py --check
# run there with their helper modules, finding PREFIX/bin/madsweep by
# themselves (issue 29: validate.py's helpers were not installed); the
# documentation and CHANGELOG.md are installed. Also checks the packaging
# files' syntax.
# usage: test_install.sh BUILD SRC TMP MPIRUN...
set -u
BUILD=$1 SRC=$2 TMP=$3
shift 3
MPIRUN="$* -np 2"
fail() { echo "FAIL: $*"; exit 1; }
unset MADSWEEP_CONFIGS # the test environment points it at the source tree
rm -rf "$TMP" && mkdir -p "$TMP/work"
cmake --install "$BUILD" --prefix "$TMP/p" >"$TMP/install.log" 2>&1 ||
  { cat "$TMP/install.log"; fail "cmake --install"; }
mv "$TMP/p" "$TMP/p2" || fail "cannot move the prefix"
P="$TMP/p2"
for f in bin/madsweep share/madsweep/configs/hardware.cfg \
         share/madsweep/configs/sweeps/quickstart.cfg share/madsweep/scripts/sweep.sbatch \
         share/madsweep/scripts/mpirun.sh \
         share/madsweep/python/madsweep_h5.py share/madsweep/packaging/modulefile.lua \
         share/doc/madsweep/README.md share/doc/madsweep/CHANGELOG.md \
         share/doc/madsweep/docs/robust-input.md; do
  [ -e "$P/$f" ] || fail "$f is not installed"
done
# every installed script imports with only the prefix's scripts on the path
for s in "$P"/share/madsweep/scripts/*.py; do
  m=$(basename "$s" .py)
  (cd "$TMP/work" && env -u MADSWEEP PYTHONPATH= "${MADSWEEP_PYTHON:-python3}" -c "import sys; sys.path[:0] = [sys.argv[1]]; sys.argv[1:] = []; import $m" \
     "$P/share/madsweep/scripts") >imp.txt 2>&1 || { cat imp.txt; fail "installed $m.py does not import"; }
done
cd "$TMP/work" || fail "cd"
"$P/bin/madsweep" list hardware >list.txt 2>&1 || { cat list.txt; fail "list hardware"; }
grep -q "h100-sxm-80g" list.txt || { cat list.txt; fail "no h100 in list hardware"; }
$MPIRUN "$P/bin/madsweep" sweep "$P/share/madsweep/configs/sweeps/quickstart.cfg" \
  -o q.h5 --quiet >sweep.log 2>&1 || { cat sweep.log; fail "2-rank quickstart sweep"; }
h5dump -d /provenance/catalogues q.h5 >prov.txt 2>&1 || fail "no /provenance/catalogues"
grep -q "$P/share/madsweep/configs" prov.txt ||
  { grep -i cfg prov.txt | head; fail "the catalogues were not read from the prefix"; }
grep -q "$SRC/configs" prov.txt && fail "the catalogues were read from the source tree"
# validate.py and calibrate.py from the prefix, on a copy of two rows of
# each file kind they read (the copies are data, not part of the install)
head -n 3 "$SRC/tests/data/calibration.csv" >train.csv
head -n 3 "$SRC/tests/data/kernels/gemm.csv" >gemm.csv
for f in train.csv gemm.csv; do
  env -u MADSWEEP "$P/share/madsweep/scripts/validate.py" "$f" >val.txt 2>&1 ||
    { cat val.txt; fail "installed validate.py on $f"; }
  grep -q "^validate: .*rows, median" val.txt || { cat val.txt; fail "validate.py $f: no summary"; }
done
env -u MADSWEEP "$P/share/madsweep/scripts/calibrate.py" --check \
  "$SRC/tests/data/dlrm_calibration.csv" >cal.txt 2>&1 ||
  { cat cal.txt; fail "installed calibrate.py --check"; }
"$P/bin/madsweep" list hardware --configs "$TMP/none" >over.txt 2>&1 &&
  fail "--configs of a missing directory did not override the prefix"
python3 -c "import ast,sys; ast.parse(open(sys.argv[1]).read())" \
  "$SRC/packaging/spack/madsweep/package.py" || fail "package.py does not parse"
echo "test_install: all passed"
