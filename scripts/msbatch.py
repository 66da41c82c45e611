"""msbatch.py - the scripts' link to the madsweep binary: many points
evaluated in one `madsweep eval --batch` process, trial values of fitted
constants set in it, and the catalogue read as `madsweep list json`.

    cat = catalogue()                       # hardware, stacks, fits
    with Batch() as b:
        results = b.eval([(pid, point_text), ...])   # one dict per point
        b.set("stacks", "vllm", "step_host_s", 2.1e-3)

A result is the point's `eval --json` object, or {"error": why} for a
point that does not load or evaluate. The binary is $MADSWEEP, else
build/madsweep, else build*/madsweep of this source tree; --configs and
--stacks go to every call (set_options). Standard library only.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# --configs DIR and --stacks FILE of every call (validate.py, calibrate.py)
OPTIONS = {"configs": None, "stacks": None}


def set_options(configs=None, stacks=None):
    OPTIONS["configs"] = configs
    OPTIONS["stacks"] = stacks


def binary():
    """$MADSWEEP; else the source tree's build*/madsweep; else, installed
    (ROOT is PREFIX/share/madsweep), PREFIX/bin/madsweep; else the PATH's."""
    env = os.environ.get("MADSWEEP")
    if env:  # a wrong one ended in a FileNotFoundError or PermissionError traceback
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            print(f"{os.path.basename(sys.argv[0])}: MADSWEEP={env} is not an executable "
                  "file (the madsweep binary)", file=sys.stderr)
            raise SystemExit(2)
        return env
    for cand in [os.path.join(ROOT, "build", "madsweep")] + sorted(
            glob.glob(os.path.join(ROOT, "build*", "madsweep"))) + [
            os.path.join(ROOT, os.pardir, os.pardir, "bin", "madsweep"),
            shutil.which("madsweep") or ""]:
        if cand and os.access(cand, os.X_OK):
            return os.path.normpath(cand)
    sys.exit("madsweep: no binary (set MADSWEEP, build into build/ or install it)")


def _options(configs=None, stacks=None):
    out = []
    configs = configs or OPTIONS["configs"]
    stacks = stacks or OPTIONS["stacks"]
    if configs:
        out += ["--configs", configs]
    if stacks:
        out += ["--stacks", stacks]
    return out


def catalogue(configs=None, stacks=None):
    """The catalogue as `madsweep list json` prints it."""
    proc = subprocess.run([binary(), "list", "json"] + _options(configs, stacks),
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"madsweep list json: {proc.stderr.strip() or proc.stdout.strip()}")
    return json.loads(proc.stdout)


def hardware_names(cat):
    """{name or alias: catalogue name} of every hardware generation."""
    names = {}
    for h in cat["hardware"]:
        names[h["name"]] = h["name"]
        for a in h.get("aliases") or []:
            names.setdefault(a, h["name"])
    return names


class Batch:
    """One `madsweep eval --batch` process; records are written by a
    thread while the answers are read, so a long batch cannot block on a
    full pipe."""

    def __init__(self, configs=None, stacks=None):
        self.proc = subprocess.Popen([binary(), "eval", "--batch"] + _options(configs, stacks),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1 << 16)
        self.evaluated = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()

    def _run(self, records):
        def write():
            try:
                for rec in records:
                    self.proc.stdin.write(rec)
                self.proc.stdin.flush()
            except BrokenPipeError:
                pass
        t = threading.Thread(target=write, daemon=True)
        t.start()
        out = []
        for _ in records:
            line = self.proc.stdout.readline()
            if not line:
                err = self.proc.stderr.read()
                sys.exit(f"madsweep eval --batch ended early: {err.strip()}")
            out.append(json.loads(line))
        t.join()
        return out

    def eval(self, points):
        """points: [(id, point text)] -> [result dict], in order."""
        self.evaluated += len(points)
        return self._run([f"%id {pid}\n{text}%%\n" for pid, text in points])

    def set_many(self, values):
        """values: [(list, entry, key, value)]; exits on a refused value."""
        if not values:
            return
        rec = "".join(f"%set {l} {e} {k} {v!r}\n" for l, e, k, v in values) + "%%\n"
        res = self._run([rec])[0]
        if "error" in res:
            sys.exit(f"madsweep eval --batch: {res['error']}")

    def set(self, lst, entry, key, value):
        self.set_many([(lst, entry, key, value)])

    def reset(self):
        self._run(["%reset\n%%\n"])
