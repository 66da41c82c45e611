#!/usr/bin/env python3
"""calibrate.py - calibration as code: refit the constants the catalogues
declare as fitted, check that the shipped catalogue is such a fit, and
fit a stack of one's own to one's own measurements.

Usage: scripts/calibrate.py [--check] [--configs DIR] [--hf-configs DIR] FILE.csv ...
       scripts/calibrate.py --base STACK --name NAME --out FRAGMENT.cfg
                            [--fit KEY=LOW:HIGH ...] MEASUREMENTS.csv ...

A catalogue entry (configs/stacks.cfg, configs/hardware.cfg) declares
each fitted constant in its `fit` list (driver/load/load_fit.h):
    fit = ( { key = "gemm_eff_max"; rows = "stack == 'trtllm'";
              objective = "measured_output_tokens_per_s";
              range = [0.3, 0.9]; prior = 0.55; } );
`rows` is a row filter (scripts/rowfilter.py) over the files' columns
(plus `file` and `stack`); the declaration's rows are those of the files
given, of reliability A or B, whose `objective` column is measured and
for which the filter holds. A fit needs rows from at least two sources
(source_short): a declaration whose rows come from one source is refused
(exit 2) - such a constant is a documented fact with a range, or its
prior. A declaration with no rows in the files given is left as it is.

The fit, deterministic: the loss of a value is the mean |ln(predicted /
measured)| over the declaration's rows (an L1 loss of log ratios: robust
as a median, but continuous, so a 1-D search converges; a row the value
makes infeasible or unloadable counts ln 10). Each declaration is
searched alone, the others held, in catalogue order (hardware, then
stacks; entries and declarations as written): a grid of GRID points over
its range (geometric when the range spans a factor of 8 or more and
starts above 0), then GOLDEN golden-section steps inside the best grid
point's neighbours; ties go to the value nearest the current one, then
the smaller; the result is rounded to 3 significant digits. Sweeps repeat
(at most SWEEPS) while a declaration's rows saw another value change
since its last search. All points evaluate in one `madsweep eval
--batch` process (scripts/msbatch.py), predictions cached per row and
values.

Without --check the fitted values are written into the catalogue files
in place (the value's text only: a fact's nominal, an element of a
table). With --check nothing is written; the exit status is 1 unless
every declaration's refit lies within CHECK_TOL of its range of the
shipped value (the refit starts from the shipped values, so a shipped
fit refits to itself).

--base STACK --name NAME --out FRAGMENT.cfg: a stack NAME derived from
STACK (its facts; `base = STACK`) whose constants KEY (--fit KEY=LOW:HIGH,
repeated; default USER_FITS for the files' kind: each key with that
range) are fitted to MEASUREMENTS (any schema validate.py reads; every
row runs on NAME). Rows of one deployment (measured.Row.deployment: all
but the workload columns) count as one group: a fit needs two
deployments. Prints the base's and the fit's in-sample error and the
leave-one-deployment-out error, and writes FRAGMENT.cfg, for `madsweep
eval|sweep --stacks FRAGMENT.cfg` and `scripts/validate.py --stacks
FRAGMENT.cfg --use-stack ENGINE=NAME`. Standard library only.
"""
import math
import os
import re
import statistics as st
import sys

import measured
import msbatch
from rowfilter import Filter

GRID = 13
GOLDEN = 10
SWEEPS = 6
CHECK_TOL = 0.01
FAIL_LOSS = math.log(10.0)
INV_PHI = (math.sqrt(5.0) - 1.0) / 2.0
# the main objective of each kind of file (the LOSO headline)
MAIN = {"training": "measured_iteration_time_s", "serving": "measured_output_tokens_per_s",
        "dlrm": "measured_samples_per_s", "aic": "measured_tpot_ms"}
# --base without --fit: what a user's cluster changes most, and the range
# searched (the band the fragment writes). Serving: the decode GEMMs'
# weight streaming (TPOT at small batches), the GEMM efficiency of
# large batches (throughput), the host time per step. Training: the
# slowdown of compute beside collectives, the overlap of data-parallel
# traffic. DLRM: the MLP GEMM rate, the embedding overlap, the host time.
USER_FITS = {
    "serving": (("weight_bw_eff", 0.4, 1.0), ("gemm_eff_max", 0.2, 1.2),
                ("step_host_s", 0.0, 5.0e-3)),
    "training": (("comm_slowdown", 0.0, 0.5), ("dp_overlap", 0.0, 1.0)),
    "dlrm": (("mlp_efficiency", 0.3, 2.0), ("emb_overlap", 0.0, 1.0),
             ("step_overhead_s", 0.0, 5.0e-3)),
}


def round3(x):
    return float(f"{x:.3g}") if x else 0.0


class Decl:
    """One fit declaration of the catalogue (`madsweep list json`)."""

    def __init__(self, d):
        self.list, self.entry, self.key = d["list"], d["entry"], d["key"]
        self.id = f"{self.list}/{self.entry}/{self.key}"
        self.file, self.line = d["file"], d["line"]
        self.value = d["value"]
        self.band = d["band"]
        self.rows_text = d["rows"]
        self.filter = Filter(d["rows"])
        self.objective = d["objective"]
        self.lo, self.hi = d["range"]
        self.prior = d["prior"]


class Fitter:
    """Fits declarations over mapped rows through one batch process.

    group(row) names the unit a fit needs two of and cross-validation
    leaves out: the row's source (the catalogue), or its deployment (a
    user's stack)."""

    def __init__(self, batch, ctx, rows, decls, group=lambda r: r.source, log=None):
        self.batch = batch
        self.rows = [r for r in rows if r.text is not None]
        self.decls = decls
        self.group = group
        self.log = log or (lambda msg: None)
        self.applied = {d.id: d.value for d in decls}
        self.cache = {}
        for r in self.rows:
            stacks = ctx.chain("stacks", r.stack)
            hws = ctx.chain("hardware", r.hw)
            r.deps = tuple(i for i, d in enumerate(decls)
                           if (d.list == "stacks" and d.entry in stacks) or
                           (d.list == "hardware" and d.entry in hws))
        self.rows_of = []
        for i, d in enumerate(decls):
            sel = [r for r in self.rows if r.ab and d.objective in r.measured and
                   i in r.deps and d.filter(r.cols)]
            self.rows_of.append(sel)
        # the declarations whose values a declaration's rows depend on
        self.affecting = [sorted({j for r in self.rows_of[i] for j in r.deps} - {i})
                          for i in range(len(decls))]

    # ---- evaluation
    def predict(self, rows, values):
        """{row index: {objective: predicted} or None} under `values`."""
        out, todo = {}, []
        for r in rows:
            key = (r.index,) + tuple(values[j] for j in r.deps)
            if key in self.cache:
                out[r.index] = self.cache[key]
            else:
                todo.append((r, key))
        if todo:
            need = {j for r, _ in todo for j in r.deps}
            sets = []
            for j in sorted(need):
                d = self.decls[j]
                if self.applied[d.id] != values[j]:
                    sets.append((d.list, d.entry, d.key, values[j]))
                    self.applied[d.id] = values[j]
            self.batch.set_many(sets)
            res = self.batch.eval([(r.pid, r.text) for r, _ in todo])
            for (r, key), x in zip(todo, res):
                p = r.predicted(x)
                self.cache[key] = p
                out[r.index] = p
        return out

    def loss(self, i, rows, values):
        obj = self.decls[i].objective
        preds = self.predict(rows, values)
        total = 0.0
        for r in rows:
            p = preds[r.index]
            v = p.get(obj) if p else None
            total += abs(math.log(v / r.measured[obj])) if v and v > 0 else FAIL_LOSS
        return total / len(rows)

    # ---- the 1-D search
    def search(self, i, rows, values):
        d = self.decls[i]
        cur = values[i]
        geo = d.lo > 0 and d.hi / d.lo >= 8.0

        def at(u):  # u in [0, 1] -> a value of the range (rounding kept inside it)
            x = d.lo * (d.hi / d.lo) ** u if geo else d.lo + (d.hi - d.lo) * u
            return min(d.hi, max(d.lo, x))

        def f(x):
            trial = list(values)
            trial[i] = x
            return self.loss(i, rows, trial)

        def better(a, b):  # (loss, x): a before b?
            if abs(a[0] - b[0]) > 1e-12:
                return a[0] < b[0]
            da, db = abs(a[1] - cur), abs(b[1] - cur)
            return da < db if da != db else a[1] < b[1]

        us = [k / (GRID - 1) for k in range(GRID)]
        pts = [(f(at(u)), at(u), u) for u in us]
        best = pts[0]
        for p in pts[1:]:
            if better(p, best):
                best = p
        k = us.index(best[2])
        a, b = us[max(k - 1, 0)], us[min(k + 1, GRID - 1)]
        c, e = b - INV_PHI * (b - a), a + INV_PHI * (b - a)
        fc, fe = f(at(c)), f(at(e))
        for _ in range(GOLDEN):
            if fc <= fe:
                b, e, fe = e, c, fc
                c = b - INV_PHI * (b - a)
                fc = f(at(c))
            else:
                a, c, fc = c, e, fe
                e = a + INV_PHI * (b - a)
                fe = f(at(e))
        for cand in ((fc, at(c)), (fe, at(e))):
            if better(cand, best[:2]):
                best = (cand[0], cand[1], None)
        x = min(max(round3(best[1]), d.lo), d.hi)
        return x

    # ---- coordinate descent
    def fittable(self, i, exclude=None):
        """Declaration i's rows (without group `exclude`) and their groups."""
        rows = [r for r in self.rows_of[i] if exclude is None or self.group(r) != exclude]
        return rows, {self.group(r) for r in rows}

    def fit(self, values=None, exclude=None, seen=None, single="refuse", fixed=()):
        """Fits every declaration (exclude: a group left out) from `values`
        (default: the catalogue's). A declaration whose rows come from
        fewer than two groups is refused (single "refuse": listed in
        problems, value kept), kept ("keep") or set to its prior
        ("prior"); declarations in `fixed` are never searched. Returns
        (values, seen, problems): seen[i] the state declaration i's
        search saw (a later fit from these values skips the unchanged),
        problems {i: why}."""
        values = list(values if values is not None else [d.value for d in self.decls])
        seen = dict(seen or {})
        problems = {}
        for _ in range(SWEEPS):
            searched = 0
            for i, d in enumerate(self.decls):
                if i in fixed:
                    continue
                rows, groups = self.fittable(i, exclude)
                state = (len(rows),) + tuple(values[j] for j in self.affecting[i])
                if seen.get(i) == state:
                    continue
                seen[i] = state
                searched += 1
                if not self.rows_of[i]:
                    problems[i] = "no rows in these files: left as it is"
                    continue
                if len(groups) < 2:
                    if single == "refuse":
                        problems[i] = (f"its rows come from one group ({', '.join(sorted(groups))}"
                                       "): not a fit")
                        continue
                    if single == "keep":
                        continue
                    new = d.prior
                else:
                    new = self.search(i, rows, values)
                if new != values[i]:
                    self.log(f"  {d.id}: {values[i]:g} -> {new:g} ({len(rows)} rows, "
                             f"{len(groups)} groups)")
                values[i] = new
            if not searched:
                break
        return values, seen, problems

    def unfit(self):
        """The declarations these rows cannot fit (fewer than two groups)."""
        return {i for i in range(len(self.decls)) if len(self.fittable(i)[1]) < 2}


# ---- catalogue text
def format_value(v, like):
    """v as the catalogue writes numbers, in the notation of `like`."""
    if "e" in like.lower():
        m, _, ex = f"{v:.2e}".partition("e")
        m = m.rstrip("0")
        m = m + "0" if m.endswith(".") else m
        return f"{m}e{int(ex)}"
    text = repr(round3(v))
    return text if ("." in text or "e" in text) else text + ".0"


def write_value(path, line, key, value):
    """Replaces the value of `key` (KEY, KEY[i]; a fact's nominal) on
    line `line` of `path`, the rest of the text untouched."""
    name, _, idx = key.partition("[")
    with open(path) as f:
        lines = f.readlines()
    text = lines[line - 1]
    m = re.search(r"\b" + re.escape(name) + r"\s*=\s*", text)
    if not m:
        sys.exit(f"calibrate: {path}:{line}: no '{name} =' to write")
    start = m.end()
    if text[start] == "[":
        end = text.index("]", start)
        elems = text[start + 1:end].split(",")
        k = int(idx.rstrip("]")) if idx else 1
        old = elems[k].strip()
        lead = elems[k][:len(elems[k]) - len(elems[k].lstrip())]
        elems[k] = lead + format_value(value, old)
        text = text[:start + 1] + ",".join(elems) + text[end:]
    else:
        end = text.index(";", start)
        text = text[:start] + format_value(value, text[start:end].strip()) + text[end:]
    lines[line - 1] = text
    with open(path, "w") as f:
        f.writelines(lines)


# ---- reports
def pct_stats(errs):
    if not errs:
        return "0 rows"
    a = [abs(e) for e in errs]
    return (f"{len(a)} rows, median |err| {100 * st.median(a):.1f}%, mean |err| "
            f"{100 * st.fmean(a):.1f}%, max |err| {100 * max(a):.1f}%")


def errors(fitter, rows, values, obj):
    """Signed errors of `rows` on objective obj under values (None: a row
    not predicted)."""
    preds = fitter.predict(rows, values)
    out = {}
    for r in rows:
        p = preds[r.index]
        out[r.index] = (p[obj] / r.measured[obj] - 1.0) if p and p.get(obj) else None
    return out


def cross_validate(fitter, group, values, seen, objectives, fixed):
    """Leaves each group out in turn: {objective: {group: [errors]}}, and
    the rows a fold could not predict."""
    out = {obj: {} for obj in objectives}
    missing = []
    for g in sorted({group(r) for r in fitter.rows if r.ab}):
        fold, _, _ = fitter.fit(values, exclude=g, seen=seen, single="prior", fixed=fixed)
        held = [r for r in fitter.rows if r.ab and group(r) == g]
        for obj in objectives:
            sel = [r for r in held if obj in r.measured]
            errs = errors(fitter, sel, fold, obj)
            for r in sel:
                if errs[r.index] is None:
                    missing.append((r.pid, obj))
                else:
                    out[obj].setdefault(g, []).append(errs[r.index])
    return out, missing


def decls_of(cat, only_stack=None):
    return [Decl(d) for d in cat["fits"] if only_stack is None or
            (d["list"] == "stacks" and d["entry"] == only_stack)]


def cv_fit(fitter, group, objectives):
    """Fits in-sample (declarations these rows cannot fit keep their
    values), then leaves each group out in turn (cross_validate)."""
    fixed = fitter.unfit()
    values, seen, _ = fitter.fit(single="keep", fixed=fixed)
    folds, missing = cross_validate(fitter, group, values, seen, objectives, fixed)
    return values, folds, missing


def cv_lines(folds, what, prefix, objectives, main):
    for obj in objectives:
        label = "" if obj == main else f"{obj[9:]}: "
        allerr = [e for g in folds[obj].values() for e in g]
        print(f"{prefix}: leave-one-{what}-out: {label}{pct_stats(allerr)}")


def loso_report(batch, cat, ctx, rows, results, prefix="validate"):
    """validate.py --loso: prints the leave-one-source-out lines; returns
    the main objective's |errors|."""
    del results  # predictions come from the fitter (the same evaluation, cached)
    if not rows:
        return []
    schema = rows[0].schema
    fitter = Fitter(batch, ctx, rows, decls_of(cat))
    objs = [o for o in schema.OBJECTIVES if any(o in r.measured for r in rows if r.ab)]
    main = MAIN[schema.NAME]
    _, folds, missing = cv_fit(fitter, lambda r: r.source, objs)
    cv_lines(folds, "source", prefix, objs, main)
    for g, errs in sorted(folds.get(main, {}).items()):
        print(f"{prefix}: leave-one-source-out: source {g}: {pct_stats(errs)}")
    for pid, obj in missing:
        print(f"{prefix}: leave-one-source-out: {pid}: no {obj[9:]} prediction")
    return [abs(e) for g in folds.get(main, {}).values() for e in g]


# ---- the catalogue's own fit
def calibrate_catalogue(files, configs, check, use_stack):
    msbatch.set_options(configs, None)
    cat = msbatch.catalogue()
    ctx = measured.Context(cat, use_stack)
    decls = decls_of(cat)
    rows = []
    for kind in group_files(files):
        rs, _ = measured.read(kind, ctx)
        for r in rs:
            r.index = len(rows)
            rows.append(r)
    with msbatch.Batch() as batch:
        fitter = Fitter(batch, ctx, rows, decls, log=print)
        values, _, problems = fitter.fit()
        print(f"calibrate: {len(decls)} declarations, {len(fitter.rows)} rows, "
              f"{batch.evaluated} evaluations")
    bad = False
    for i, why in sorted(problems.items()):
        d = decls[i]
        refused = "one group" in why
        bad |= refused
        print(f"calibrate: {d.id} ({d.file}:{d.line}): {'REFUSED: ' if refused else ''}{why}")
    off = []
    for i, d in enumerate(decls):
        if not fitter.rows_of[i]:
            continue
        srcs = sorted({r.source for r in fitter.rows_of[i]})
        ok = abs(values[i] - d.value) <= CHECK_TOL * (d.hi - d.lo)
        print(f"calibrate: {d.id} = {values[i]:g} (shipped {d.value:g}, range "
              f"[{d.lo:g}, {d.hi:g}], prior {d.prior:g}; {len(fitter.rows_of[i])} rows of "
              f"{len(srcs)} sources: {', '.join(srcs)}){'' if ok else ' CHANGED'}")
        if not ok:
            off.append((d, values[i]))
    if bad:
        print("calibrate: refused: a constant fitted to one source is a documented fact "
              "with a range, or its prior (issue: no constant from one source)")
        return 2
    if check:
        print(f"calibrate: check: {len(off)} of {len(decls)} declarations differ from a "
              f"refit by more than {100 * CHECK_TOL:g} % of their range")
        return 1 if off else 0
    root = cat["configs"]
    for i, d in enumerate(decls):
        if fitter.rows_of[i] and values[i] != d.value:
            write_value(os.path.join(root, d.file), d.line, d.key, values[i])
    print(f"calibrate: wrote {sum(1 for i, d in enumerate(decls) if fitter.rows_of[i] and values[i] != d.value)} values")
    return 0


def group_files(files):
    """Files grouped by kind (measured.read takes one kind at a time)."""
    kinds = {}
    for name in files:
        try:
            with open(name, encoding="utf-8-sig") as f:
                head = f.readline().strip().split(",")
        except (OSError, UnicodeDecodeError) as e:
            measured.bad_input(f"{name}: {getattr(e, 'strerror', None) or e}")
        s = measured.schema_of(head)
        if s is None:
            sys.exit(f"calibrate: {name}: not a measurement file")
        kinds.setdefault(s.NAME, []).append(name)
    return list(kinds.values())


# ---- a user's stack
def base_value(ctx, base, key):
    """The base's (or its bases') value of key: a number or [lo, v, hi]."""
    for name in ctx.chain("stacks", base):
        v = ctx.stacks[name].get("values", {}).get(key)
        if v is not None:
            return v
    return None


def fragment_text(name, base, summary, keys, values, header):
    """The catalogue fragment of stack NAME: keys [(key, lo, hi, prior,
    objective)] at values."""
    out = [f"# {line}".rstrip() for line in header] + ["stacks = (", "  {",
           f'    name = "{name}";', f'    base = "{base}";',
           f'    summary = "{summary[:150]}";']
    decl = []
    for (key, lo, hi, prior, obj), v in zip(keys, values):
        blo, bhi = lo, hi
        out.append(f"    {key} = [{format_value(blo, 'e' if blo and abs(blo) < 1e-3 else '')}, "
                   f"{format_value(v, 'e' if v and abs(v) < 1e-3 else '')}, "
                   f"{format_value(bhi, 'e' if bhi and abs(bhi) < 1e-3 else '')}];")
        decl.append(f'      {{ key = "{key}"; rows = "stack == \'{name}\'"; objective = "{obj}"; '
                    f"range = [{lo!r}, {hi!r}]; prior = {prior!r}; }}")
    out += ["    fit = ("] + [",\n".join(decl)] + ["    );", "  }", ");"]
    return "\n".join(out) + "\n"


def calibrate_user(files, base, name, out, fits, configs):
    """Fits stack `name` and writes it to `out`: the trial fragment lives
    in a working file beside `out`, and `out` appears (renamed into place)
    only when the fit has finished, so a fit that stops or fails leaves no
    fragment that looks calibrated and is not."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,62}", name):
        sys.exit(f"calibrate: --name {name!r}: a stack name is letters, digits and _.+- "
                 "(at most 63, starting with a letter or digit): it is written into the "
                 "fragment and its row filters")
    where = os.path.dirname(os.path.abspath(out))
    if os.path.isdir(out) or not os.path.isdir(where) or not os.access(where, os.W_OK):
        sys.exit(f"calibrate: --out {out}: not a file in a writable directory")
    work = os.path.join(where, f".{os.path.basename(out)}.work-{os.getpid()}")
    try:
        return calibrate_work(files, base, name, out, work, fits, configs)
    finally:
        for path in (work, work + ".final"):
            if os.path.exists(path):
                os.unlink(path)


def calibrate_work(files, base, name, out, work, fits, configs):
    msbatch.set_options(configs, None)
    cat = msbatch.catalogue()
    ctx = measured.Context(cat)
    if base not in ctx.stacks:
        sys.exit(f"calibrate: --base {base}: no such stack in the catalogue")
    if name in ctx.stacks:
        sys.exit(f"calibrate: --name {name}: the catalogue has a stack of that name")
    kinds = group_files(files)
    if len(kinds) != 1:
        sys.exit("calibrate: the measurement files are of different kinds")
    with open(kinds[0][0], encoding="utf-8-sig") as f:
        kind = measured.schema_of(f.readline().strip().split(",")).NAME
    obj = MAIN[kind]
    keys = []
    for key, lo, hi in fits or USER_FITS[kind]:
        bv = base_value(ctx, base, key)
        if bv is None:
            sys.exit(f"calibrate: --fit {key}: stack {base} (and its bases) states no {key}")
        prior = bv[1] if isinstance(bv, list) else bv
        keys.append((key, min(lo, prior), max(hi, prior), prior, obj))
    start = [min(max(round3(k[3]), k[1]), k[2]) for k in keys]
    header = [f"{os.path.basename(out)}: stack {name}, {base} calibrated to "
              f"{', '.join(os.path.basename(f) for f in files)}",
              "by scripts/calibrate.py --base (its facts; the keys below fitted, their "
              "bands the ranges searched)."]
    summary = f"{base} calibrated to {', '.join(os.path.basename(f) for f in files)}"
    with open(work, "w") as f:
        f.write(fragment_text(name, base, summary, keys, start, header))
    msbatch.set_options(configs, work)
    cat = msbatch.catalogue()
    ctx = measured.Context(cat, {"*": name})
    rows, schema = measured.read(files, ctx)
    base_ctx = measured.Context(cat, {"*": base})
    base_rows, _ = measured.read(files, base_ctx)

    def deployment(r):
        return repr(r.deployment())
    with msbatch.Batch() as batch:
        fitter = Fitter(batch, ctx, rows, decls_of(cat, name), group=deployment)
        ab = [r for r in fitter.rows if r.ab and obj in r.measured]
        ndep = len({deployment(r) for r in ab})
        print(f"calibrate: {name} (base {base}): {len(ab)} rows of {ndep} deployments "
              f"({obj})")
        res = measured.evaluate(batch, base_rows)
        berr = [br.predicted(res.get(br.index))[obj] / br.measured[obj] - 1.0
                for br in base_rows if br.ab and obj in br.measured and
                br.predicted(res.get(br.index))]
        print(f"calibrate: base {base}: {pct_stats(berr)}")
        if ndep < 2:
            sys.exit("calibrate: the measurements hold one deployment: a fit needs two "
                     "(rows that differ in more than their workload)")
        values, folds, missing = cv_fit(fitter, deployment, [obj])
        ins = errors(fitter, ab, values, obj)
        print(f"calibrate: in-sample: {pct_stats([e for e in ins.values() if e is not None])}")
        cv_lines(folds, "deployment", "calibrate", [obj], obj)
        for pid, _ in missing:
            print(f"calibrate: leave-one-deployment-out: {pid}: no prediction")
    cv = [e for g in folds[obj].values() for e in g]
    for (key, lo, hi, prior, _), v in zip(keys, values):
        print(f"calibrate: {name}: {key} = {v:g} (base {prior:g}, range [{lo:g}, {hi:g}])")
    header.append(f"{len(ab)} rows of {ndep} deployments; in-sample {pct_stats(list(ins.values()))}"
                  if all(e is not None for e in ins.values()) else f"{len(ab)} rows")
    header.append(f"leave-one-deployment-out: {pct_stats(cv)}")
    header.append(f"use: madsweep eval|sweep --stacks {os.path.basename(out)}; "
                  f"scripts/validate.py --stacks {os.path.basename(out)} --use-stack ENGINE={name}")
    with open(work + ".final", "w") as f:
        f.write(fragment_text(name, base, summary, keys, values, header))
    os.replace(work + ".final", out)
    print(f"calibrate: wrote {out}")
    return 0


def parse_fit(text):
    key, _, rng = text.partition("=")
    lo, _, hi = rng.partition(":")
    try:
        lo, hi = float(lo), float(hi)
    except ValueError:
        sys.exit(f"calibrate: --fit {text}: expected KEY=LOW:HIGH")
    if not key or not lo < hi:
        sys.exit(f"calibrate: --fit {text}: expected KEY=LOW:HIGH with LOW < HIGH")
    return key, lo, hi


def main(argv):
    args = list(argv[1:])
    opts = {"check": False, "configs": None, "base": None, "name": None, "out": None,
            "fit": [], "use_stack": {}}
    files = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--check":
            opts["check"] = True
        elif a in ("--configs", "--base", "--name", "--out", "--fit", "--use-stack",
                   "--hf-configs"):
            if i + 1 >= len(args):
                sys.exit(f"calibrate: {a} needs a value")
            v = args[i + 1]
            i += 1
            if a == "--fit":
                opts["fit"].append(parse_fit(v))
            elif a == "--use-stack":
                k, _, s = v.partition("=")
                opts["use_stack"][k] = s
            elif a == "--hf-configs":  # AIConfigurator rows' models (validate_aic.py)
                import validate_aic
                validate_aic.OPTIONS["hf_dir"] = v
            else:
                opts[a[2:]] = v
        elif a.startswith("--"):
            sys.exit(f"calibrate: unknown option {a}\n" + __doc__.split("\n\n")[1])
        else:
            files.append(a)
        i += 1
    if not files:
        sys.exit(__doc__.split("\n\n")[1])
    if opts["base"] or opts["name"] or opts["out"]:
        if not (opts["base"] and opts["name"] and opts["out"]):
            sys.exit("calibrate: --base, --name and --out go together")
        return calibrate_user(files, opts["base"], opts["name"], opts["out"], opts["fit"],
                              opts["configs"])
    return calibrate_catalogue(files, opts["configs"], opts["check"], opts["use_stack"])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
