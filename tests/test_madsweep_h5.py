#!/usr/bin/python3
"""test_madsweep_h5.py - scripts/madsweep_h5.load() on real sweep files.

Sweeps a small detailed spec and a small MAD-Max spec with the madsweep
binary ($MADSWEEP_BINARY, one process), loads them and checks: one row per
/results row in id order, strings decoded, the axis names joined in by
index (compared with the /axes tables read here with h5py), status names,
units, the three join modes, and that the best row per hardware found with
pandas is the one `madsweep best --group hardware` prints; load(columns,
where) reads exactly the rows and columns a whole load filtered holds, in
chunks. An unfinished file is refused. The lean layout (file format 2):
a training and a serving kind store their own figures in /parts, and the
same rows rewritten as one wide /results (file format 1, as madsweep
wrote files before the parts) read back identically through the loader
and `madsweep best`, while --resume refuses the format-1 file.
"""
import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np
import pandas as pd

sys.path.insert(0, os.path.join(os.environ["MADSWEEP_SOURCE_DIR"], "scripts"))
import madsweep_h5  # noqa: E402

BIN = os.environ["MADSWEEP_BINARY"]
DETAILED = """fidelity = "detailed";
models = ["llama3-8b", "mixtral-8x7b"];
system_grid = ( { hardware = ["h100-sxm-80g", "mi300x"]; nodes = [1, 2]; } );
tasks = ( "pretrain", { type = "inference"; name = "serve"; decode_tokens = 16; } );
global_batch = [64];
strategies = "auto";
"""
MADMAX = """fidelity = "madmax";
models = ["dlrm_a", "llama2_7b"];
systems = ["zionex_128", "dc_A_128"];
tasks = ["pretrain", "inference"];
global_batch = [1024];
strategies = "auto";
"""


M64 = (1 << 64) - 1


def digest_row(h, row):
    """worker/digest.c's fold of one row into a running chunk digest, written
    again from its comment (an independent implementation)."""
    def rotl(x, r):
        return ((x << r) | (x >> (64 - r))) & M64
    n = len(row)
    padded = row + bytes(-n % 8)
    for i in range(0, len(padded), 8):
        w = int.from_bytes(padded[i:i + 8], "little")
        h = rotl(h ^ (w * 0x9e3779b97f4a7c15 & M64), 31) * 0xc2b2ae3d27d4eb4f & M64
    h ^= n
    for k in (0xff51afd7ed558ccd, 0xc4ceb9fe1a85ec53):
        h = (h ^ (h >> 33)) * k & M64
    return h ^ (h >> 33)


def sweep(tmp, name, text):
    spec = os.path.join(tmp, name + ".cfg")
    with open(spec, "w") as f:
        f.write(text)
    out = os.path.join(tmp, name + ".h5")
    subprocess.run([BIN, "sweep", spec, "-o", out, "--quiet"], check=True)
    return out


class Loader(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(dir=os.environ.get("MADSWEEP_TEST_TMP"))
        cls.det = sweep(cls.tmp, "h5det", DETAILED)
        cls.mad = sweep(cls.tmp, "h5mad", MADMAX)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_rows_names_units(self):
        df = madsweep_h5.load(self.det)
        with h5py.File(self.det) as f:
            res = f["results"][:]
            models = [m.decode() for m in f["axes/model"]["name"]]
            systems = f["axes/system"][:]
            self.assertEqual(len(df), int(f.attrs["points_valid"]))
            codes = {int(c): n.decode() for c, n in
                     zip(f["axes/status"]["code"], f["axes/status"]["name"])}
        self.assertTrue((df["id"].to_numpy() == res["id"]).all())
        self.assertTrue((np.diff(df["id"].to_numpy()) > 0).all())
        self.assertIsInstance(df["layout"].iloc[0], str)  # a strategy column
        want = [models[i] for i in res["model_idx"]]
        self.assertEqual(list(df["model"]), want)
        hw = [systems["hardware"][i].decode() for i in res["system_idx"]]
        self.assertEqual(list(df["hardware"]), hw)
        self.assertEqual(list(df["status_name"]),
                         [codes[int(s)] for s in res["status"]])
        self.assertIn("infeasible:memory", set(df["status_name"]))
        self.assertEqual(set(df["task"]), {"pretrain", "serve"})
        self.assertEqual(df.attrs["units"]["tokens_per_s"], "tokens/s")
        self.assertEqual(df.attrs["units"]["model_idx"], "index into /axes/model")
        self.assertEqual(df.attrs["file"]["fidelity"], "detailed")
        self.assertIn("models", df.attrs["file"]["spec_text"])
        # the number columns of the axes only with join="all"
        self.assertNotIn("nic_gbps_per_device", df.columns)
        full = madsweep_h5.load(self.det, join="all")
        gbps = systems["nic_gbps_per_device"][res["system_idx"]]
        self.assertTrue((full["nic_gbps_per_device"].to_numpy() == gbps).all())
        self.assertIn("system.devices", full.columns)
        bare = madsweep_h5.load(self.det, join=None)
        self.assertNotIn("model", bare.columns)

    def test_agrees_with_best(self):
        df = madsweep_h5.load(self.det)
        ok = df[(df.status_name == "ok") & (df.mem_fits != 0)]  # what best keeps
        top = ok.sort_values(["tokens_per_s", "id"], ascending=[False, True])
        want = top.groupby("hardware", observed=True, sort=False).head(1)
        out = subprocess.run([BIN, "best", self.det, "--by", "tokens_per_s",
                              "--group", "hardware", "--csv"], check=True,
                             capture_output=True, text=True).stdout
        got = {r["hardware"]: int(r["id"]) for r in csv.DictReader(io.StringIO(out))}
        self.assertEqual(got, dict(zip(want["hardware"], want["id"])))
        self.assertEqual(len(got), 2)

    def test_columns_where(self):
        """load(columns, where) returns exactly the rows and columns a
        whole load filtered with pandas holds, read in small chunks."""
        full = madsweep_h5.load(self.det, join="all")
        cols = ["id", "hardware", "tokens_per_s", "nic_gbps_per_device"]
        some = madsweep_h5.load(self.det, columns=cols,
                                where="task==serve,model==llama3-8b",
                                chunk_rows=50)
        want = full[(full.task == "serve") & (full.model == "llama3-8b")]
        self.assertGreater(len(want), 100)  # the rows of several chunks
        self.assertEqual(list(some.columns), cols)
        self.assertEqual(len(some), len(want))
        self.assertTrue((some["id"].to_numpy() == want["id"].to_numpy()).all())
        self.assertEqual(list(some["hardware"]), list(want["hardware"]))
        self.assertTrue((some["nic_gbps_per_device"].to_numpy() ==
                         want["nic_gbps_per_device"].to_numpy()).all())
        got, ref = some["tokens_per_s"].to_numpy(), want["tokens_per_s"].to_numpy()
        self.assertTrue(((got == ref) | (np.isnan(got) & np.isnan(ref))).all())
        self.assertEqual(some.attrs["units"]["tokens_per_s"], "tokens/s")
        # numbers, status names, text columns of /results, quotes
        ok = madsweep_h5.load(self.det, columns=["id", "status_name", "bound_by"],
                              where="status==ok,devices>=16,bound_by!='compute_math'",
                              chunk_rows=777)
        w = full[(full.status_name == "ok") & (full.devices >= 16) &
                 (full.bound_by != "compute_math")]
        self.assertTrue((ok["id"].to_numpy() == w["id"].to_numpy()).all())
        self.assertEqual(set(ok["status_name"]), {"ok"})
        self.assertGreater(len(ok), 0)
        # every ok row names what bounds it
        self.assertTrue((full[full.status_name == "ok"].bound_by != "").all())
        for bad in ("tq==1", "task=serve"):
            with self.assertRaises(ValueError):
                madsweep_h5.load(self.det, where=bad)
        with self.assertRaises(ValueError):
            madsweep_h5.load(self.det, columns=["no_such_column"])
        # refused as `madsweep best --where` refuses them, where they read
        # every row (issue 29)
        for bad in ("", "tp>=1,", ",tp>=1", "tp==1,,pp==1"):
            with self.assertRaises(ValueError) as e:
                madsweep_h5.load(self.det, where=bad)
            self.assertIn("where: ", str(e.exception))
        # no row (a negative chunk_rows), no column and so no row (columns=[]),
        # a name's letters (columns="id"), range()'s error (chunk_rows=0)
        for kw in ({"chunk_rows": -5}, {"chunk_rows": 0}, {"columns": []},
                   {"columns": "id"}):
            with self.assertRaises(ValueError) as e:
                madsweep_h5.load(self.det, **dict({"where": "tp>=1"}, **kw))
            self.assertIn(next(iter(kw)), str(e.exception))

    def test_madmax(self):
        df = madsweep_h5.load(self.mad)
        self.assertEqual(set(df["system"]), {"zionex_128", "dc_A_128"})
        self.assertTrue(any("," in p for p in df["dense_plan"]))
        self.assertEqual(df.attrs["file"]["fidelity"], "madmax")
        # the LLM kinds carry the token figures a DLRM lacks; the detailed
        # fidelity's figures are stored nowhere (NaN on every row)
        tokens = {"tokens_per_s", "tokens_per_s_per_device", "energy_per_token_j",
                  "cost_per_million_tokens_usd"}
        with h5py.File(self.mad) as f:
            for k in ("training", "serving"):
                self.assertEqual(set(f["parts/" + k].dtype.names), tokens)
            self.assertNotIn("parts/dlrm", f)
            self.assertNotIn("mfu", f["results"].dtype.names)
        self.assertTrue(df["mfu"].isna().all())
        llm = df["model"] == "llama2_7b"
        ok = df["status_name"] == "ok"
        self.assertTrue(df[llm & ok]["tokens_per_s"].notna().all())
        self.assertTrue(df[~llm]["tokens_per_s"].isna().all())

    def test_empty(self):
        # a spec with no valid point (issue 19): a complete file, zero rows
        with open(os.path.join(os.environ["MADSWEEP_SOURCE_DIR"], "tests", "data",
                               "sweep_empty.cfg")) as f:
            empty = sweep(self.tmp, "h5empty", f.read())
        df = madsweep_h5.load(empty)
        self.assertEqual(len(df), 0)
        self.assertIn("status", df.columns)
        self.assertEqual(int(df.attrs["file"]["points_valid"]), 0)

    def test_lean_layout_and_format_1(self):
        with h5py.File(self.det) as f:
            self.assertEqual(int(f.attrs["format_version"]), 2)
            n = f["results"].shape[0]
            common = set(f["results"].dtype.names)
            self.assertIn("iteration_time_s", common)
            self.assertNotIn("ttft_s", common)  # a serving figure
            self.assertIn("ttft_s", f["parts/serving"].dtype.names)
            self.assertIn("optimizer_s", f["parts/training"].dtype.names)
            self.assertNotIn("serving", f["parts/training"].dtype.names)
            logical = f["parts/row"].dtype
            self.assertIn("prefill_devices", logical.names)  # no such kind: not stored
            self.assertFalse(any("prefill_devices" in f["parts/" + k].dtype.names
                                 for k in ("training", "serving")))
            kinds = {(int(r["model_idx"]), int(r["task_idx"])): r["kind"].decode()
                     for r in f["parts/kind_of"][:]}
            res = f["results"][:]
            per = [kinds[(m, t)] for m, t in zip(res["model_idx"], res["task_idx"])]
            for k in ("training", "serving"):
                self.assertEqual(f["parts/" + k].shape[0], per.count(k))
            stored = f["results"].dtype.itemsize * n + sum(
                f["parts/" + k].dtype.itemsize * f["parts/" + k].shape[0]
                for k in ("training", "serving"))
            self.assertLess(stored, 0.8 * logical.itemsize * n)
        old = os.path.join(self.tmp, "format1.h5")
        shutil.copy(self.det, old)
        with h5py.File(old, "r+") as f:
            wide = madsweep_h5.rows(f)
            units = f["parts/row"].attrs["units"]
            del f["results"]
            del f["parts"]
            f.create_dataset("results", data=wide).attrs["units"] = units
            del f.attrs["format_version"]
            # format 1 digests a chunk's wide rows (keep = "all": row i is id i)
            lo = f["chunk_starts"][:]
            raw = wide.tobytes()
            w = wide.dtype.itemsize
            for c in range(len(lo) - 1):
                d = 0x6d61647377656570  # DIGEST_SEED
                for i in range(lo[c], lo[c + 1]):
                    d = digest_row(d, raw[i * w:(i + 1) * w])
                f["digests"][c] = d
        pd.testing.assert_frame_equal(madsweep_h5.load(self.det, join="all"),
                                      madsweep_h5.load(old, join="all"), check_exact=True)
        dump = ["--all", "--csv", "--group", "id", "--by", "id"]
        out = [subprocess.run([BIN, "best", p] + dump, check=True, capture_output=True,
                              text=True).stdout for p in (self.det, old)]
        self.assertEqual(out[0].count("\n"), n + 1)
        self.assertEqual(out[0], out[1])
        r = subprocess.run([BIN, "sweep", os.path.join(self.tmp, "h5det.cfg"), "-o", old,
                            "--resume", "--quiet"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("file format 1", r.stderr)

    def test_unfinished_refused(self):
        copy = os.path.join(self.tmp, "unfinished.h5")
        shutil.copy(self.det, copy)
        with h5py.File(copy, "r+") as f:
            f.attrs["complete"] = np.int64(0)
        with self.assertRaises(ValueError) as e:
            madsweep_h5.load(copy)
        self.assertIn("unfinished", str(e.exception))
        self.assertEqual(len(madsweep_h5.load(copy, complete_only=False)),
                         len(madsweep_h5.load(self.det)))

    def flip(self, name, dataset, row, byte):
        """A copy of the detailed file with one bit of `row` of `dataset`
        flipped on disk (the dataset's bytes, not through HDF5)."""
        copy = os.path.join(self.tmp, name)
        shutil.copy(self.det, copy)
        with h5py.File(copy) as f:
            d = f[dataset]
            store = d.id.get_chunk_info_by_coord((row - row % d.chunks[0],))
            self.assertIsNone(d.compression)
            at = store.byte_offset + (row % d.chunks[0]) * d.dtype.itemsize + byte
        with open(copy, "r+b") as fh:
            fh.seek(at)
            b = fh.read(1)[0]
            fh.seek(at)
            fh.write(bytes([b ^ 0x10]))
        return copy

    def test_flipped_bit(self):
        """A bit flipped in a row of /results or of a part is refused with
        the file and the chunk and rows that fail their digest (issue 29);
        verify=False (--no-verify) reads it unchecked."""
        with h5py.File(self.det) as f:
            lo = f["chunk_starts"][:]
            kinds = madsweep_h5.Rows(f)._kinds(f["results"][:])
            part = list(madsweep_h5.Rows(f).parts).index("serving")
        row = int(lo[1]) + 500  # in chunk 1
        prow = int((kinds == part).sum()) - 3  # a serving row of the last chunk
        whole = madsweep_h5.load(self.det)
        cases = [(self.flip("flip_results.h5", "results", row, 30), 1),
                 (self.flip("flip_part.h5", "parts/serving", prow, 9), len(lo) - 2)]
        script = os.path.join(os.environ["MADSWEEP_SOURCE_DIR"], "scripts", "madsweep_h5.py")
        for path, chunk in cases:
            rows = f"rows {lo[chunk]}-{lo[chunk + 1] - 1} of /results"
            for kw in ({}, {"columns": ["id", "hardware"], "where": "task==serve"}):
                with self.assertRaises(ValueError) as e:
                    madsweep_h5.load(path, **kw)
                self.assertIn(path, str(e.exception))
                self.assertIn(f"chunk {chunk} ({rows}) fails its checksum", str(e.exception))
            self.assertEqual(len(madsweep_h5.load(path, verify=False)), len(whole))
            with open(path, "rb") as fh:  # an open file, as h5py takes (a TypeError)
                with self.assertRaises(ValueError) as e:
                    madsweep_h5.load(fh)
                self.assertIn(f"chunk {chunk} ({rows}) fails its checksum", str(e.exception))
            r = subprocess.run([sys.executable, script, path], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(f"chunk {chunk} ({rows})", r.stderr)
            self.assertNotIn("Traceback", r.stderr)
            r = subprocess.run([sys.executable, script, "--no-verify", path],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            # so does scripts/plot.py (it plotted the file, exit 0)
            plot = os.path.join(os.environ["MADSWEEP_SOURCE_DIR"], "scripts", "plot.py")
            r = subprocess.run([sys.executable, plot, path, "-o", path + ".plot"],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(f"chunk {chunk} ({rows})", r.stderr)
            self.assertNotIn("Traceback", r.stderr)
            # the C reader refuses the same file (the digests are the same)
            r = subprocess.run([BIN, "best", path], capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0, r.stderr)
            self.assertIn(f"chunk {chunk}", r.stderr)
        # a file without its digests (an older madsweep's) is refused, with
        # the way to read it unchecked
        bare = os.path.join(self.tmp, "nodigests.h5")
        shutil.copy(self.det, bare)
        with h5py.File(bare, "r+") as f:
            del f["digests"]
        with self.assertRaises(ValueError) as e:
            madsweep_h5.load(bare)
        self.assertIn("/digests is missing", str(e.exception))
        self.assertIn("verify=False", str(e.exception))
        self.assertEqual(len(madsweep_h5.load(bare, verify=False)), len(whole))
        # a reduced (feasible-only) sweep: its rows are some ids, verified too
        red = sweep(self.tmp, "h5red", DETAILED + 'keep = { feasible = true; group = ["task"]; };\n')
        df = madsweep_h5.load(red)
        self.assertEqual(set(df["status_name"]), {"ok"})
        with h5py.File(red, "r+") as f:
            rowv = f["results"][10]
            rowv["id"] += 0  # the same row written back changes nothing
            f["results"][10] = rowv
            rowv["status"] = 1
            f["results"][10] = rowv  # a changed status, digests left as they were
        with self.assertRaises(ValueError) as e:
            madsweep_h5.load(red)
        self.assertIn("chunk 0 (rows 0-", str(e.exception))

    def test_stopped_rows(self):
        """load(complete_only=False) of a stopped sweep holds the rows of the
        chunks written and no other: not the zeros of the chunks never
        written as ok rows, and their part rows where they are (issue 29).
        A stop after 3 chunks, and a chunk in the middle never written (two
        ranks write chunks out of order)."""
        spec = os.path.join(self.tmp, "h5det.cfg")
        stop = os.path.join(self.tmp, "stopped.h5")
        env = dict(os.environ, MADSWEEP_STOP_AFTER_CHUNKS="3")
        r = subprocess.run([BIN, "sweep", spec, "-o", stop, "--quiet"], env=env,
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 75, r.stderr)
        whole = madsweep_h5.load(self.det, join="all")
        with h5py.File(stop) as f:
            lo = f["chunk_starts"][:]
            self.assertEqual(list(f["progress"][:4]), [1, 1, 1, 0])
        gap = os.path.join(self.tmp, "gap.h5")
        shutil.copy(self.det, gap)
        with h5py.File(gap, "r+") as f:
            f.attrs["complete"] = np.int64(0)
            f["progress"][4] = 0  # chunk 4 as a stopped run leaves it
            f["results"][lo[4]:lo[5]] = np.zeros(lo[5] - lo[4], f["results"].dtype)
            f["digests"][4] = 0
            f["parts/index"][4] = np.zeros(1, f["parts/index"].dtype)[0]
        for path, ids in ((stop, whole["id"] < lo[3]),
                          (gap, (whole["id"] < lo[4]) | (whole["id"] >= lo[5]))):
            want = whole[ids].reset_index(drop=True)
            got = madsweep_h5.load(path, join="all", complete_only=False)
            pd.testing.assert_frame_equal(got, want, check_exact=True,
                                          check_categorical=False)
            some = madsweep_h5.load(path, columns=["id", "ttft_s", "status_name"],
                                    where="id>=0", complete_only=False, chunk_rows=1000)
            self.assertEqual(list(some["id"]), list(want["id"]))
            a, b = some["ttft_s"].to_numpy(), want["ttft_s"].to_numpy()
            self.assertTrue(((a == b) | (np.isnan(a) & np.isnan(b))).all())
        # reduced sweeps stopped after 3 chunks: the feasible rows of those
        # chunks, checked against their digests; a top-K sweep's rows come
        # at its end, so none (it was refused as corrupted: its /parts/index
        # and digests are not written yet)
        for keep, rows in (("feasible = true; group = [\"task\"];", lo[3]),
                           ("top = 5; by = \"tokens_per_s\"; group = [\"model\"];", 0)):
            spec = os.path.join(self.tmp, "keep.cfg")
            with open(spec, "w") as f:
                f.write(DETAILED + f"keep = {{ {keep} }};\n")
            stop = os.path.join(self.tmp, "keep_stopped.h5")
            r = subprocess.run([BIN, "sweep", spec, "-o", stop, "--quiet", "--checkpoint",
                                "0"], env=env, capture_output=True, text=True)
            self.assertEqual(r.returncode, 75, r.stderr)
            got = madsweep_h5.load(stop, complete_only=False)
            ok = whole[(whole["id"] < rows) & (whole["status_name"] == "ok")]
            self.assertEqual(list(got["id"]), list(ok["id"]), keep)

    def test_cli_bad_files(self):
        """The command line (and scripts/plot.py's) on a truncated, a foreign
        and a missing file: exit 2 and one line naming the file, no traceback
        (issue 29)."""
        trunc = os.path.join(self.tmp, "truncated.h5")
        with open(self.det, "rb") as src, open(trunc, "wb") as dst:
            dst.write(src.read(20000))
        foreign = os.path.join(self.tmp, "foreign.h5")
        with open(foreign, "w") as f:
            f.write("not an HDF5 file\n")
        script = os.path.join(os.environ["MADSWEEP_SOURCE_DIR"], "scripts", "madsweep_h5.py")
        plot = os.path.join(os.environ["MADSWEEP_SOURCE_DIR"], "scripts", "plot.py")
        for path in (trunc, foreign, os.path.join(self.tmp, "absent.h5")):
            for cmd in ([script, path], [plot, path, "-o", path + ".plot"]):
                r = subprocess.run([sys.executable] + cmd, capture_output=True, text=True)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(path, r.stderr)
                self.assertNotIn("Traceback", r.stderr)


if __name__ == "__main__":
    unittest.main()
