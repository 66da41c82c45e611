"""measured.py - measurement files as rows the scripts can evaluate,
score and fit: the schema of each file (serving, DLRM, training: the
validate_*.py modules), each row's point text, stack, hardware and
measured objectives, and the errors of a result.

A row's columns gain `file` (the file's base name) and `stack` (the
stack it runs on), which the catalogue's row filters read
(scripts/rowfilter.py). Which stack a row runs on:
  - training and DLRM rows: their `stack` column (empty: "unknown");
  - serving rows: the one serving stack of the catalogue whose `match`
    filter holds for the row (configs/stacks.cfg documents each rule;
    none: "unknown", the tool's engine of wide ranges; two: the row
    cannot be mapped, and says which);
  - --use-stack NAME=STACK (validate.py, calibrate.py): rows whose engine
    (serving) or stack column (training, DLRM) is NAME run on STACK
    (NAME "*": every row).
GPU names are the hardware catalogue's names and aliases. Nothing is
keyed on point_id or source_short. Standard library only.

Bad input (issue 29) is refused, exit 2, naming the file: one that is
empty, has a header and no row, is not UTF-8 (a UTF-8 byte-order mark is
read as the text it starts, not as part of the first column's name), or
is of another kind, or has a header naming a column twice or with spaces
around a name. A row whose measured_* cell is not a finite number
> 0 (a 0 divided the error by zero; NaN, inf and negative values were
scored) is unmappable, with the cell named, like any other such row.
"""
import csv
import math
import os
import sys

import msbatch
import validate_aic
import validate_dlrm
import validate_serving
import validate_training
from rowfilter import Filter

SCHEMAS = (validate_serving, validate_dlrm, validate_training, validate_aic)
AB = ("A", "B")


class Context:
    """What mapping a row needs from the catalogue and the command line."""

    def __init__(self, cat, use_stack=None, vpp_auto=False):
        self.cat = cat
        self.hw = msbatch.hardware_names(cat)
        self.stacks = {s["name"]: s for s in cat["stacks"]}
        self.hw_entries = {h["name"]: h for h in cat["hardware"]}
        self.matches = [(s["name"], Filter(s["match"])) for s in cat["stacks"]
                        if s.get("match")]
        self.use_stack = dict(use_stack or {})
        self.vpp_auto = vpp_auto
        for name in self.use_stack.values():
            if name not in self.stacks:
                raise SystemExit(f"--use-stack: no stack {name!r} in the catalogue")

    def gpu(self, text):
        gpu = (text or "").strip()
        if gpu not in self.hw:
            raise validate_training.Unmappable(
                f"gpu {gpu!r} is in no hardware entry of the catalogue (names and aliases)")
        return self.hw[gpu]

    def column_stack(self, row, used):
        """A training or DLRM row's stack: its column, or --use-stack's."""
        stack = (row.get("stack") or "").strip()
        stack = stack if stack in self.use_stack else "*"
        if stack in self.use_stack:
            used.append(f"stack={self.use_stack[stack]} (--use-stack)")
            return self.use_stack[stack]
        stack = (row.get("stack") or "").strip()
        if not stack:
            used.append("stack=unknown")
            return "unknown"
        return stack

    def serving_stack(self, row, used):
        """A serving row's stack: --use-stack for its engine, else the
        serving stack whose match holds."""
        engine = (row.get("engine") or "").strip()
        engine = engine if engine in self.use_stack else "*"
        if engine in self.use_stack:
            used.append(f"stack={self.use_stack[engine]} (--use-stack)")
            return self.use_stack[engine]
        hits = [name for name, f in self.matches if f(row)]
        if len(hits) > 1:
            raise validate_training.Unmappable(
                f"engine {engine!r} release {row.get('engine_version')!r} matches stacks "
                f"{' and '.join(hits)} (their match rules overlap)")
        if not hits:
            used.append("stack=unknown (no stack matches its engine)")
            return "unknown"
        return hits[0]

    def chain(self, lst, name):
        """name and its bases in list 'stacks' or 'hardware'."""
        table = self.stacks if lst == "stacks" else self.hw_entries
        out = []
        while name and name in table and name not in out:
            out.append(name)
            name = table[name].get("base")
        return out


class Row:
    """One measured row, mapped (text) or not (why)."""

    def __init__(self, cols, schema, index):
        self.cols = cols
        self.schema = schema
        self.index = index
        self.pid = cols.get("point_id") or f"row{index + 1}"
        self.rel = (cols.get("reliability") or "").strip() or "?"
        self.source = (cols.get("source_short") or "").strip() or "?"
        self.file = cols["file"]
        self.text = None
        self.why = None
        self.used = []
        self.stack = None
        self.hw = None
        self.measured = {}
        self.info = {}

    @property
    def ab(self):
        return self.rel in AB

    def predicted(self, res):
        """{objective: predicted value} of a result (None: not evaluated)."""
        if res is None or "error" in res or res.get("status") != "ok":
            return None
        return self.schema.predicted(self, res)

    def deployment(self):
        """The deployment a row measures (the rows of one deployment differ
        only in their workload): the columns that are not the workload,
        the measurement or the row's identity."""
        skip = self.schema.WORKLOAD + ("point_id", "source_short", "reliability", "inferred",
                                       "source_ref", "source_location", "notes", "file")
        return tuple(sorted((k, (v or "").strip()) for k, v in self.cols.items()
                            if k not in skip and not k.startswith("measured_") and
                            not k.endswith("_stat") and k != "iteration_time_is_derived"))


def schema_of(fieldnames):
    for s in SCHEMAS:
        if s.is_schema(fieldnames):
            return s
    return None


def bad_input(text):
    """Ends the run on bad input: the message, exit 2."""
    print(f"{os.path.basename(sys.argv[0])}: {text}", file=sys.stderr)
    raise SystemExit(2)


def check_header(name, fieldnames):
    """Ends the run (exit 2) on a header that names a column twice, where
    csv.DictReader keeps the last cell without a word, or one whose name has
    spaces around it (no column of that name is read)."""
    seen = set()
    for col in fieldnames or ():
        if col != col.strip():
            bad_input(f"{name}:1: column {col!r} has spaces around its name")
        if col in seen:
            bad_input(f"{name}:1: column {col!r} appears twice in the header")
        seen.add(col)


def take_option(args, flag, n, conv=str, more=0, what="a value"):
    """Removes `flag` and its values from args: n of them, then up to `more`
    others that convert. Returns the converted values (None: no flag); a
    value missing or not of its kind ends the run (exit 2) naming the flag
    (they ended in IndexError or ValueError tracebacks, or, for --check
    with no value, in no check at all)."""
    if flag not in args:
        return None
    i = args.index(flag)
    vals = []
    for k, a in enumerate(args[i + 1:i + 1 + n + more]):
        try:
            if a.startswith("--"):
                raise ValueError(a)
            vals.append(conv(a))
        except ValueError:
            if k < n:
                bad_input(f"{flag}: {a!r} is not {what}")
            break
    if len(vals) < n:
        bad_input(f"{flag} needs {n}{f' to {n + more}' if more else ''} "
                  f"value{'s' if n + more > 1 else ''}: {what}")
    del args[i:i + 1 + len(vals)]
    return vals


class BadMeasurement(ValueError):
    """A measured cell that is no measurement (check_measured)."""


def _positive(text):
    try:
        x = float((text or "").strip())
    except ValueError:
        return False
    return math.isfinite(x) and x > 0


def check_measured(cols, time_key=None):
    """Raises BadMeasurement (a ValueError) naming the first measured_* cell that is given
    and is not a finite number > 0 (times, rates and fractions all are). With time_key
    (a column the row's reader takes before any other), a 0 beside a time > 0 there is
    a rate below its print resolution (rccl-tests print 0.00 for 8-byte messages), not
    a bad measurement: that cell is emptied, so nothing reads it."""
    for k, v in cols.items():
        if not k or not k.startswith("measured_") or k.endswith("_stat"):
            continue
        text = (v or "").strip()
        if not text:
            continue
        try:
            x = float(text)
        except ValueError:
            x = math.nan
        if x == 0 and time_key and k != time_key and _positive(cols.get(time_key)):
            cols[k] = ""
            continue
        if not (math.isfinite(x) and x > 0):
            raise BadMeasurement(f"{k} = {text!r} is no measurement (a finite number > 0)")


def read(files, ctx):
    """The rows of `files`, mapped; all files must share one schema."""
    rows, schema = [], None
    for name in files:
        try:
            with open(name, newline="", encoding="utf-8-sig") as f:
                reader = csv.DictReader(f)
                if not reader.fieldnames:
                    bad_input(f"{name}: empty (no header line)")
                check_header(name, reader.fieldnames)
                s = schema_of(reader.fieldnames)
                if s is None:
                    bad_input(f"{name}: not a measurement file this tool reads "
                              f"(columns: {', '.join(reader.fieldnames[:8])}, ...)")
                if schema and s is not schema:
                    bad_input(f"{name}: a {s.NAME} file among {schema.NAME} files "
                              "(validate one kind at a time)")
                schema = s
                n0 = len(rows)
                for cols in reader:
                    if None in cols:
                        bad_input(f"{name}:{reader.line_num}: more cells than the header "
                                  "has columns")
                    cols["file"] = os.path.basename(name)
                    if hasattr(s, "normalize"):
                        s.normalize(cols)
                    rows.append(Row(cols, s, len(rows)))
                if len(rows) == n0:
                    bad_input(f"{name}: a header and no rows")
        except UnicodeDecodeError as e:
            bad_input(f"{name}: not UTF-8 text (byte {e.start}: {e.reason})")
        except OSError as e:
            bad_input(f"{name}: {e.strerror}")
        except csv.Error as e:
            bad_input(f"{name}: not CSV ({e})")
    for r in rows:
        try:
            check_measured(r.cols)
            r.measured = r.schema.measured(r.cols)
            r.text = r.schema.prepare(r, ctx)
            r.cols["stack"] = r.stack
        except (ValueError, KeyError, TypeError) as e:
            r.why = f"unmappable: {e}"
    return rows, schema


def evaluate(batch, rows):
    """{row index: result} of every mapped row, in one batch pass."""
    todo = [r for r in rows if r.text is not None]
    res = batch.eval([(r.pid, r.text) for r in todo])
    return {r.index: x for r, x in zip(todo, res)}


def failure(res):
    """Why a result is no prediction (None: it is one)."""
    if res is None:
        return "not evaluated"
    if "error" in res:
        return "rejected: " + res["error"]
    if res.get("status") != "ok":
        mem = res.get("mem_total_bytes_per_device") or 0
        return f"status {res.get('status')} (memory {mem / 2**30:.1f} GiB)"
    return None
