#!/usr/bin/env python3
"""test_validate_input.py - the validators on bad measurement files (issue
29): scripts/validate.py (training, serving, DLRM, kernel tables and
AIConfigurator's silicon format) and scripts/calibrate.py --check.

Each bad file is made from a row of the shipped copies in tests/data/:
  - empty, a header and no rows, not UTF-8, a row with more cells than the
    header: exit 2 naming the file (they exited 0 with "median nan%" or
    ended in a traceback);
  - a measured cell of 0, NaN, inf or a negative number: that row fails
    with the cell named, is never scored (a 0 divided by zero, the others
    were scored), and the summary has no "nan";
  - a UTF-8 byte-order mark: read as the same file without it (the first
    column's name took the mark, and every row was unmappable).
Usage: tests/test_validate_input.py (binary: $MADSWEEP, else build/madsweep;
scratch files under $MADSWEEP_TEST_TMP, else a temporary directory).
"""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, "data")
TMP = (os.path.join(os.environ["MADSWEEP_TEST_TMP"], "test_validate_input")
       if os.environ.get("MADSWEEP_TEST_TMP") else tempfile.mkdtemp())

# file, its measured column, how many rows to keep (the first ones)
KINDS = {
    "training": ("calibration.csv", "measured_iteration_time_s", 2),
    "serving": ("serving_calibration.csv", "measured_output_tokens_per_s", 2),
    "dlrm": ("dlrm_calibration.csv", "measured_samples_per_s", 2),
    "kernel": (os.path.join("kernels", "gemm.csv"), "measured_tflops", 2),
}
AIC_HEADER = ["id", "backend", "model_path", "system", "mode", "isl", "osl",
              "silicon_ttft_ms", "silicon_tpot_ms", "silicon_data_source"]


def rows_of(name, n):
    with open(os.path.join(DATA, name), newline="", encoding="utf-8") as f:
        r = csv.DictReader(f)
        return r.fieldnames, [row for _, row in zip(range(n), r)]


def write(path, head, rows, bom=False):
    with open(path, "w", newline="", encoding="utf-8-sig" if bom else "utf-8") as f:
        w = csv.DictWriter(f, fieldnames=head)
        w.writeheader()
        w.writerows(rows)
    return path


def validate(*args):
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "validate.py")] +
                       list(args), capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout + p.stderr


class BadFiles(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        shutil.rmtree(TMP, ignore_errors=True)
        os.makedirs(TMP)

    def path(self, name):
        return os.path.join(TMP, name)

    def test_empty_and_header_only(self):
        for kind, (name, _, n) in KINDS.items():
            head, rows = rows_of(name, n)
            empty = self.path(f"{kind}_empty.csv")
            open(empty, "w").close()
            only = write(self.path(f"{kind}_header.csv"), head, [])
            for f, want in ((only, "a header and no rows"),
                            (only if kind == "kernel" else empty, "empty")):
                rc, out = validate(f)
                self.assertEqual(rc, 2, f"{kind} {want}: {out[-600:]}")
                self.assertIn(want, out, kind)
                self.assertIn(os.path.basename(f), out, kind)
                self.assertNotIn("Traceback", out, kind)
        only = write(self.path("aic_header.csv"), AIC_HEADER, [])
        rc, out = validate(only)
        self.assertEqual(rc, 2, out[-600:])
        self.assertIn("a header and no rows", out)

    def test_not_utf8_and_ragged(self):
        head, rows = rows_of(KINDS["training"][0], 2)
        bad = write(self.path("latin1.csv"), head, rows)
        with open(bad, "ab") as f:
            f.write("caf\xe9,1\n".encode("latin-1"))
        rc, out = validate(bad)
        self.assertEqual(rc, 2, out[-600:])
        self.assertIn("not UTF-8", out)
        ragged = write(self.path("ragged.csv"), head, rows)
        with open(ragged, "a") as f:
            f.write(",".join(["x"] * (len(head) + 3)) + "\n")
        rc, out = validate(ragged)
        self.assertEqual(rc, 2, out[-600:])
        self.assertIn("more cells than the header", out)

    def test_measured_not_a_measurement(self):
        for kind, (name, col, n) in KINDS.items():
            head, rows = rows_of(name, n)
            for v in ("0", "nan", "inf", "-3.5"):
                bad = [dict(rows[0], **{col: v})] + rows[1:]
                f = write(self.path(f"{kind}_{v}.csv"), head, bad)
                rc, out = validate(f)
                self.assertNotIn("Traceback", out, f"{kind} {v}")
                self.assertNotIn("nan%", out, f"{kind} {v}: {out[-400:]}")
                self.assertIn(f"{col} = '{v}' is no measurement", out,
                              f"{kind} {v}: {out[-600:]}")
                self.assertEqual(rc, 1, f"{kind} {v}: a failed A/B row fails the run")

    def test_reliability_c_only(self):
        """A file of reliability C rows only has no A+B rows to score: its
        summary says so, with no "nan%" (it printed median |err| nan%)."""
        for kind in ("training", "serving", "dlrm"):
            name, _, n = KINDS[kind]
            head, rows = rows_of(name, n)
            f = write(self.path(f"{kind}_c.csv"), head,
                      [dict(r, reliability="C") for r in rows])
            rc, out = validate(f)
            self.assertEqual(rc, 0, f"{kind}: {out[-600:]}")
            self.assertNotIn("nan", out, f"{kind}: {out[-600:]}")
            self.assertNotIn("Traceback", out, kind)
            self.assertRegex(out, r"validate: (reliability A\+B|TPOT): 0 rows\n", kind)

    def test_bom(self):
        for kind, (name, _, n) in KINDS.items():
            head, rows = rows_of(name, n)
            plain = write(self.path(f"{kind}_plain.csv"), head, rows)
            marked = write(self.path(f"{kind}_bom.csv"), head, rows, bom=True)
            rc0, out0 = validate(plain)
            rc1, out1 = validate(marked)
            self.assertEqual(rc1, rc0, f"{kind}: {out1[-600:]}")
            last = [ln for ln in out0.splitlines() if ln.startswith("validate")]
            self.assertTrue(last, f"{kind}: {out0[-400:]}")
            for ln in last:
                self.assertIn(ln.replace(os.path.basename(plain), os.path.basename(marked)),
                              out1, kind)


class HeaderAndOptions(unittest.TestCase):
    """A header naming a column twice (csv.DictReader kept the last cell: a
    second gpu column put every training row on another GPU and exited 0)
    or with spaces around a name, and options without their values or with
    values of the wrong kind (tracebacks, and --check or --check-loso with
    no value checked nothing and exited 0): exit 2 naming the file and
    column or the option (issue 29)."""

    @classmethod
    def setUpClass(cls):
        os.makedirs(TMP, exist_ok=True)

    def path(self, name):
        return os.path.join(TMP, name)

    def test_header(self):
        files = []
        for kind, (name, _, n) in KINDS.items():
            head, rows = rows_of(name, n)
            col = head[-1]
            dup = self.path(f"{kind}_dup.csv")
            with open(dup, "w", newline="", encoding="utf-8") as f:
                w = csv.writer(f)
                w.writerow(head + [col])
                w.writerows([[r[c] for c in head] + ["x"] for r in rows])
            files.append((dup, f"column {col!r} appears twice"))
            spaced = self.path(f"{kind}_spaced.csv")
            with open(spaced, "w", newline="", encoding="utf-8") as f:
                w = csv.writer(f)
                w.writerow([head[0], " " + head[1]] + head[2:])
                w.writerows([[r[c] for c in head] for r in rows])
            files.append((spaced, f"column {' ' + head[1]!r} has spaces"))
        aic = self.path("aic_dup.csv")
        with open(aic, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(AIC_HEADER + ["mode"])
            w.writerow(["1", "trtllm", "x", "h200", "agg", "1", "1", "1", "1", "x", "y"])
        files.append((aic, "column 'mode' appears twice"))
        for f, want in files:
            rc, out = validate(f)
            self.assertEqual(rc, 2, f"{f}: {out[-600:]}")
            self.assertIn(f"{os.path.basename(f)}:1: {want}", out)
            self.assertNotIn("Traceback", out, f)

    def test_binary(self):
        """MADSWEEP naming no executable: exit 2 naming it (a FileNotFoundError
        or PermissionError traceback)."""
        head, rows = rows_of(KINDS["training"][0], 1)
        train = write(self.path("bin_training.csv"), head, rows)
        for exe in (self.path("no_such_madsweep"), train):
            p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "validate.py"),
                                train], capture_output=True, text=True, timeout=600,
                               env=dict(os.environ, MADSWEEP=exe))
            self.assertEqual(p.returncode, 2, p.stderr[-600:])
            self.assertIn(f"MADSWEEP={exe} is not an executable file", p.stderr)
            self.assertNotIn("Traceback", p.stderr)

    def test_options(self):
        head, rows = rows_of(KINDS["training"][0], 1)
        train = write(self.path("opt_training.csv"), head, rows)
        kern = os.path.join(DATA, KINDS["kernel"][0])
        aic = self.path("opt_aic.csv")
        with open(aic, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(AIC_HEADER)
            w.writerow(["1", "trtllm", "x", "h200", "agg", "1", "1", "1", "1", "x"])
        cases = [(train, ["--check"]), (train, ["--check", "5"]),
                 (train, ["--check", "x", "5"]), (train, ["--check-loso"]),
                 (train, ["--check-loso", "x"]), (train, ["--max-failed", "x"]),
                 (train, ["--keep"]), (kern, ["--check", "1"]), (kern, ["--cap", "x"]),
                 (aic, ["--check", "5"]), (aic, ["--loso-by"]),
                 (aic, ["--max-failed", "z"]), (aic, ["--hf-configs"])]
        for f, args in cases:
            rc, out = validate(f, *args)
            self.assertEqual(rc, 2, f"{args}: {out[-600:]}")
            self.assertIn(args[0], out.strip().splitlines()[-1], args)
            self.assertNotIn("Traceback", out, args)


class HardwareTable(unittest.TestCase):
    """validate_aic reads each generation's FP8 and FP4 peaks from `madsweep list
    hardware` by the header's labels (it took the HBM TB/s column for FP4 and the FP4
    column for FP8: FP4 rows on Hopper kept FP4 math, FP8 rows there fell to BF16)."""

    def test_peaks_by_label(self):
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        import validate_aic
        t = validate_aic.hardware_table(os.environ["MADSWEEP"])
        # NVIDIA H200 datasheet: 1,979 dense FP8 TFLOPS, no FP4 (Hopper); A100
        # datasheet: neither FP8 nor FP4
        self.assertEqual(t["h200"], {"fp8": 1979.0, "fp4": 0.0})
        self.assertEqual(t["a100-80g"], {"fp8": 0.0, "fp4": 0.0})


if __name__ == "__main__":
    unittest.main(verbosity=2)
