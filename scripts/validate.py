#!/usr/bin/env python3
"""validate.py - compare the detailed fidelity with published runs.

Usage: scripts/validate.py FILE.csv [FILE.csv ...] [--keep DIR]
                           [--check MEDIAN MAX [TPOT_MEDIAN]] [--max-failed N]
                           [--vpp-auto] [--loso] [--check-loso MEDIAN [MAX]]
                           [--priors] [--configs DIR]
                           [--stacks FRAGMENT.cfg] [--use-stack NAME=STACK ...]

Reads measurement files of one kind: LLM training (calibration.csv and
calibration_v3_additions.csv: scripts/validate_training.py), LLM serving
(a header with measured_output_tokens_per_s: scripts/validate_serving.py)
or DLRM training (scripts/validate_dlrm.py); a file in AIConfigurator's
silicon format (a header with silicon_tpot_ms) goes to
scripts/validate_aic.py, with --hf-configs DIR (the models' config.json
files) and --approximate (the nearest expressible model and deployment);
kernel tables (kernel_id / coll_id headers, AIConfigurator .csv.gz files
or directories) go to scripts/validate_kernels.py. Every row becomes a point
file (--keep DIR writes them there), evaluated in one `madsweep eval
--batch` process (scripts/msbatch.py; the binary: $MADSWEEP, else
build/madsweep) over the catalogue of --configs (default the tool's),
with the stacks of a --stacks fragment (scripts/calibrate.py --out)
beside it; --use-stack NAME=STACK runs the rows of engine NAME (serving)
or stack column NAME (training, DLRM) on STACK. GPUs and stacks are the
catalogue's (names and aliases; serving stacks by their `match` rules).

Training rows print the predicted and measured iteration time, the
signed error (predicted/measured - 1), the band [iteration_time_lo_s,
_hi_s] and whether the measured time lies inside it, the defaults used
for empty cells, then the summary lines:
    validate: reliability A+B: N rows, median |err| X%, mean |err| Y%, max |err| Z%
    validate: band: K of N rows inside, median width W%
    validate: N rows, median |err| X.X%, mean |err| Y.Y%, max |err| Z.Z%
The targets are the rows of reliability A and B (stated in full, or some
fields inferred); rows of reliability C (weak or inconsistent sources)
are printed and counted in the last line only. A row of reliability A or
B that cannot be mapped or that the model rejects is listed with the
reason and fails the run (exit 1), unless --max-failed allows up to N of
them (a regression guard for files the model does not cover yet). With
--check, the exit status is also 1 unless the A+B median |err| is <=
MEDIAN % and their max |err| <= MAX %. Several files are checked
together (rows of all of them), each file's A+B line printed first.

--loso: after the in-sample lines, every source (source_short) is left
out in turn: the catalogue's fitted constants (fit declarations,
scripts/calibrate.py) are fitted again on the other sources' rows of
these files and the left-out source's A+B rows predicted with them; a
constant whose remaining rows come from fewer than two sources takes its
prior. Prints
    validate: leave-one-source-out: N rows, median |err| X%, mean |err| Y%, max |err| Z%
over the main objective (iteration time, output tokens/s, samples/s),
the same for TPOT and TTFT (serving), and per source
    validate: leave-one-source-out: source S: N rows, ...
--check-loso MEDIAN [MAX] (implies --loso): the exit status is also 1
unless the main objective's leave-one-source-out median |err| is <=
MEDIAN % (and its max <= MAX %).
--priors: every fitted constant at its prior (the value without the
fit) instead of its fitted value: what the model predicts with nothing
fitted, to set beside the leave-one-source-out figures.
Standard library only; nothing is keyed on point_id or source_short.
"""
import os
import statistics as st
import sys

import measured
import msbatch
import validate_dlrm
import validate_kernels
import validate_serving


def pct(xs, f):
    return 100 * f(xs) if xs else float("nan")


def stats(xs, n=None):
    """'N rows, median |err| ...' of the errors xs (N: n, else their count);
    no figures, not "nan%", when there are none (a file of reliability C
    rows only, or of rows that all failed)."""
    head = f"{len(xs) if n is None else n} rows"
    if not xs:
        return head + (", none evaluated" if n else "")
    return (f"{head}, median |err| {pct(xs, st.median):.1f}%, mean |err| "
            f"{pct(xs, st.fmean):.1f}%, max |err| {pct(xs, max):.1f}%")


def band(inside, widths):
    """The band summary line of the A+B rows (their band widths)."""
    if not widths:
        return "validate: band: no A+B rows"
    return (f"validate: band: {inside} of {len(widths)} A+B rows inside, median width "
            f"{pct(widths, st.median):.1f}%")


def report_failures(failures, n):
    """Lists the rows that could not be evaluated and counts them; returns
    those of reliability A or B (each a failure of the run)."""
    for pid, rel, why in failures:
        print(f"{pid:<30} {rel:>3} FAILED: {why}")
    failed_ab = [x for x in failures if x[1] in ("A", "B")]
    if failures:
        print(f"validate: {len(failures)} of {n} rows failed ({len(failed_ab)} of reliability "
              f"A or B, counted as failures)")
    return failed_ab


def report_training(rows, results, nfiles):
    """The training table and summary lines; returns (A+B errors, A+B failures)."""
    errors, errors_ab, failures = [], [], []
    inside, widths, per_file = 0, [], {}
    print(f"{'point':<30} {'rel':>3} {'predicted_s':>12} {'measured_s':>12} {'error':>8} "
          f"{'band_lo_s':>10} {'band_hi_s':>10} in  defaults")
    for r in rows:
        res = results.get(r.index)
        why = r.why or measured.failure(res)
        if why:
            failures.append((r.pid, r.rel, why))
            continue
        meas = r.measured["measured_iteration_time_s"]
        pred = res["iteration_time_s"]
        lo = res.get("iteration_time_lo_s") or pred
        hi = res.get("iteration_time_hi_s") or pred
        err = pred / meas - 1.0
        errors.append(abs(err))
        ok = lo <= meas <= hi
        if r.ab:
            errors_ab.append(abs(err))
            per_file.setdefault(r.file, []).append(abs(err))
            inside += ok
            widths.append((hi - lo) / pred)
        print(f"{r.pid:<30} {r.rel:>3} {pred:12.4f} {meas:12.4f} {100 * err:+7.1f}% "
              f"{lo:10.4f} {hi:10.4f} {'yes' if ok else 'no ':<3} "
              f"{','.join(r.used) if r.used else '-'}")
    failed_ab = report_failures(failures, len(rows))
    if nfiles > 1:
        for name, errs in per_file.items():
            print(f"validate: {name}: reliability A+B: {stats(errs)}")
    print(f"validate: reliability A+B: {stats(errors_ab)}")
    print(band(inside, widths))
    print(f"validate: {stats(errors, len(rows))}")
    return errors_ab, failed_ab


def parse(argv):
    args = list(argv[1:])
    opts = {"check": None, "keep": None, "max_failed": 0, "vpp_auto": False, "loso": False,
            "configs": None, "stacks": None, "use_stack": {}, "priors": False,
            "check_loso": None}
    take = measured.take_option
    v = take(args, "--check-loso", 1, float, 1, "MEDIAN [MAX] (|err| limits, %)")
    if v:
        opts["check_loso"], opts["loso"] = tuple(v), True
    v = take(args, "--check", 2, float, 1, "MEDIAN MAX [TPOT_MEDIAN] (|err| limits, %)")
    if v:
        opts["check"] = tuple(v)
    for flag, key in (("--keep", "keep"), ("--configs", "configs"), ("--stacks", "stacks")):
        v = take(args, flag, 1, what="a path")
        if v:
            opts[key] = v[0]
    v = take(args, "--max-failed", 1, int, 0, "a count of rows")
    if v:
        opts["max_failed"] = v[0]
    for flag, key in (("--vpp-auto", "vpp_auto"), ("--loso", "loso"), ("--priors", "priors")):
        if flag in args:
            args.remove(flag)
            opts[key] = True
    while "--use-stack" in args:
        name, _, stack = take(args, "--use-stack", 1, what="NAME=STACK")[0].partition("=")
        if not name or not stack:
            measured.bad_input("--use-stack NAME=STACK (an engine or stack column value)")
        opts["use_stack"][name] = stack
    return args, opts


def aic_file(name):
    """A file in AIConfigurator's silicon format (its header)."""
    with open(name, encoding="utf-8-sig", errors="replace") as f:
        head = f.readline()
    return "silicon_tpot_ms" in head and "silicon_data_source" in head


def main(argv):
    if any(os.path.isfile(a) and aic_file(a) for a in argv[1:]):
        import validate_aic  # AIConfigurator's silicon format: its own options
        return validate_aic.main(argv)
    if validate_kernels.is_kernel_input(argv[1:]):  # kernel tables: their own module
        return validate_kernels.main(argv)
    files, opts = parse(argv)
    if len(files) < 1:
        sys.exit(__doc__.split("\n\n")[1])
    msbatch.set_options(opts["configs"], opts["stacks"])
    cat = msbatch.catalogue()
    ctx = measured.Context(cat, opts["use_stack"], opts["vpp_auto"])
    rows, schema = measured.read(files, ctx)
    if opts["keep"]:
        os.makedirs(opts["keep"], exist_ok=True)
        for r in rows:
            if r.text is not None:
                with open(os.path.join(opts["keep"], f"{r.pid}.cfg"), "w") as out:
                    out.write(r.text)
    check = opts["check"]
    if opts["priors"] and opts["loso"]:
        sys.exit("validate: --priors and --loso: one at a time")
    with msbatch.Batch() as batch:
        if opts["priors"]:
            batch.set_many([(f["list"], f["entry"], f["key"], f["prior"]) for f in cat["fits"]])
        results = measured.evaluate(batch, rows)
        if schema is validate_serving:
            rc, _ = validate_serving.report(rows, results, report_failures, check)
        elif schema is validate_dlrm:
            errors_ab, failed_ab = validate_dlrm.report(rows, results, stats, band,
                                                        report_failures)
            rc = 1 if failed_ab else 0
            if check and not (pct(errors_ab, st.median) <= check[0] and
                              pct(errors_ab, max) <= check[1]):
                rc = 1
        else:
            errors_ab, failed_ab = report_training(rows, results, len(files))
            rc = 1 if len(failed_ab) > opts["max_failed"] else 0
            if check and not (pct(errors_ab, st.median) <= check[0] and
                              pct(errors_ab, max) <= check[1]):
                rc = 1
        if opts["loso"]:
            import calibrate
            errs = calibrate.loso_report(batch, cat, ctx, rows, results)
            lim = opts["check_loso"]
            if lim and not (errs and pct(errs, st.median) <= lim[0] and
                            (len(lim) < 2 or pct(errs, max) <= lim[1])):
                rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
