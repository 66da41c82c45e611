#!/usr/bin/env python3
"""calibrate_roundtrip.py - a user's calibration, end to end (issue 26,
item 4): fit a stack of one's own on half of a measurement file's
deployments and predict the other half with it.

Usage: tests/calibrate_roundtrip.py DATA.csv TMPDIR BASE ENGINE VERSION_GLOB

The rows of DATA.csv whose engine is ENGINE and whose engine_version
matches VERSION_GLOB stand for a user's measurements of one cluster.
Their deployments (measured.Row.deployment: the rows that differ only in
their workload) are sorted and dealt alternately into a fitting half and
a held-out half. Then, through the public commands only:
  1. scripts/calibrate.py --base BASE --name roundtrip --out TMPDIR/rt.cfg
     on the fitting half: exit 0, a leave-one-deployment-out line;
  2. `madsweep list json --stacks TMPDIR/rt.cfg`: the fragment loads, its
     stack has BASE as base and fit declarations;
  3. scripts/validate.py --stacks TMPDIR/rt.cfg --use-stack ENGINE=roundtrip
     on the held-out half, and on the same rows with the catalogue's own
     stacks: every row evaluated (exit 0) under both.
Fails unless the calibrated stack predicts the held-out deployments no
worse than its base does (mean |err| of output tokens/s: the fit
minimizes a mean of |log| errors): the fit must carry to deployments it
has not seen. Standard library only.
"""
import csv
import fnmatch
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(os.path.dirname(HERE), "scripts")
sys.path.insert(0, SCRIPTS)
import measured  # noqa: E402
import msbatch  # noqa: E402
import validate_serving  # noqa: E402


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    print(f"$ {' '.join(cmd)}\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}")
    return proc


def stats_of(out):
    """(rows, median, mean) of the summary line `validate: N rows, ...`."""
    m = re.search(r"^validate: (\d+) rows, median \|err\| ([0-9.]+)%, mean \|err\| ([0-9.]+)%",
                  out, re.M)
    return (int(m.group(1)), float(m.group(2)), float(m.group(3))) if m else \
        (0, float("nan"), float("nan"))


def main(argv):
    data, tmp, base, engine, version = argv[1:6]
    os.makedirs(tmp, exist_ok=True)
    with open(data, newline="") as f:
        reader = csv.DictReader(f)
        fields = reader.fieldnames
        rows = [r for r in reader if r["engine"] == engine and
                fnmatch.fnmatch(r["engine_version"], version)]
    if not rows:
        sys.exit(f"no rows of engine {engine} release {version} in {data}")
    deps = {}
    for i, cols in enumerate(rows):
        cols = dict(cols, file=os.path.basename(data))
        key = repr(measured.Row(cols, validate_serving, i).deployment())
        deps.setdefault(key, []).append(rows[i])
    keys = sorted(deps)
    halves = ([], [])
    for k, key in enumerate(keys):
        halves[k % 2].extend(deps[key])
    paths = []
    for name, half in zip(("fit", "held"), halves):
        path = os.path.join(tmp, f"{name}.csv")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(half)
        paths.append(path)
    print(f"{len(rows)} rows of {len(keys)} deployments: {len(halves[0])} rows to fit, "
          f"{len(halves[1])} held out")
    frag = os.path.join(tmp, "rt.cfg")
    if os.path.exists(frag):
        os.remove(frag)
    py = sys.executable
    cal = run([py, os.path.join(SCRIPTS, "calibrate.py"), "--base", base, "--name",
               "roundtrip", "--out", frag, paths[0]])
    if cal.returncode != 0 or "leave-one-deployment-out:" not in cal.stdout:
        sys.exit("FAIL: calibrate.py --base did not fit and cross-validate")
    lj = subprocess.run([msbatch.binary(), "list", "json", "--stacks", frag],
                        capture_output=True, text=True)
    if lj.returncode != 0:
        sys.exit(f"FAIL: the fragment does not load: {lj.stderr.strip()}")
    cat = json.loads(lj.stdout)
    mine = [s for s in cat["stacks"] if s["name"] == "roundtrip"]
    fits = [f for f in cat["fits"] if f["entry"] == "roundtrip"]
    if not mine or mine[0]["base"] != base or not fits:
        sys.exit("FAIL: the fragment's stack lacks its base or its fit declarations")
    own = run([py, os.path.join(SCRIPTS, "validate.py"), "--stacks", frag, "--use-stack",
               f"{engine}=roundtrip", paths[1]])
    ref = run([py, os.path.join(SCRIPTS, "validate.py"), "--use-stack",
               f"{engine}={base}", paths[1]])
    if own.returncode != 0 or ref.returncode != 0:
        sys.exit("FAIL: a held-out row did not evaluate")
    n_own, med_own, m_own = stats_of(own.stdout)
    n_ref, med_ref, m_ref = stats_of(ref.stdout)
    print(f"held-out deployments: calibrated stack {n_own} rows, median |err| {med_own:.1f}%, "
          f"mean {m_own:.1f}%; base {base} {n_ref} rows, median |err| {med_ref:.1f}%, "
          f"mean {m_ref:.1f}%")
    if n_own != len(halves[1]) or not m_own <= m_ref:
        sys.exit("FAIL: the calibrated stack predicts the held-out deployments worse than "
                 "its base")
    print("calibrate round trip: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
