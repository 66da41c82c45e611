#!/usr/bin/python3
"""test_plot.py - scripts/plot.py, the pictures of scripts/run.sh, on a
real sweep file and on files it must refuse.

Sweeps configs/sweeps/recipes.cfg with the madsweep binary
($MADSWEEP_BINARY, one process) and plots it: exit 0, and every picture
plot.py says it wrote exists as a non-empty PNG and PDF. A missing file
and a file that is not HDF5 exit 2 with one line naming the file and no
traceback (issue 29: both ended in an h5py traceback), as do a bad
--baseline and an output directory that is not there; an unfinished sweep
is refused naming it.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import h5py

SRC = os.environ["MADSWEEP_SOURCE_DIR"]
BIN = os.environ["MADSWEEP_BINARY"]
PLOT = os.path.join(SRC, "scripts", "plot.py")


def plot(*args):
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, PLOT, *args], capture_output=True, text=True,
                          env=env)


class Plot(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        base = os.environ.get("MADSWEEP_TEST_TMP", tempfile.gettempdir())
        cls.dir = os.path.join(base, "test_plot")
        shutil.rmtree(cls.dir, ignore_errors=True)
        os.makedirs(cls.dir)
        cls.h5 = os.path.join(cls.dir, "recipes.h5")
        spec = os.path.join(SRC, "configs", "sweeps", "recipes.cfg")
        res = subprocess.run([BIN, "sweep", spec, "-o", cls.h5, "--quiet"],
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stderr

    def test_pictures(self):
        prefix = os.path.join(self.dir, "rec")
        res = plot(self.h5, "-o", prefix)
        self.assertEqual(res.returncode, 0, res.stderr)
        wrote = [l.split()[2] for l in res.stdout.splitlines() if l.startswith("plot.py: wrote")]
        self.assertGreaterEqual(len(wrote), 5, res.stdout)
        for png in wrote:
            for path in (png, png[:-4] + ".pdf"):
                self.assertTrue(os.path.getsize(path) > 1000, path)

    def test_refused(self):
        junk = os.path.join(self.dir, "junk.h5")
        with open(junk, "w") as f:
            f.write("not hdf5\n")
        for path in (os.path.join(self.dir, "missing.h5"), junk):
            res = plot(path, "-o", os.path.join(self.dir, "x"))
            self.assertEqual(res.returncode, 2, res.stderr)
            self.assertNotIn("Traceback", res.stderr)
            self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
            self.assertIn(path, res.stderr)
        # a bad --baseline or an output directory that is not there: refused
        # before any picture (a traceback after the first pictures before)
        for args, want in (([self.h5, "--baseline", "tp>>1"], "is not COLUMN==INTEGER"),
                           ([self.h5, "--baseline", "nosuch==1"], "is not a strategy column"),
                           ([self.h5, "-o", os.path.join(self.dir, "no", "x")],
                            "is not a writable directory")):
            res = plot(*args)
            self.assertEqual(res.returncode, 2, res.stderr)
            self.assertIn(want, res.stderr)
            self.assertNotIn("Traceback", res.stderr)
            self.assertEqual(res.stdout, "")
        unfinished = os.path.join(self.dir, "unfinished.h5")
        shutil.copy(self.h5, unfinished)
        with h5py.File(unfinished, "r+") as f:
            f.attrs["complete"] = 0
        res = plot(unfinished, "-o", os.path.join(self.dir, "x"))
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("unfinished sweep", res.stderr)
        self.assertNotIn("Traceback", res.stderr)


if __name__ == "__main__":
    unittest.main()
