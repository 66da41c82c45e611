#!/usr/bin/python3
"""plot_pareto.py - Figure-1-style Pareto frontier of a madsweep sweep file.

For each model: the best throughput at each GPU count (over systems,
strategies and batches, status ok only) and the Pareto frontier (the
best throughput reachable with at most N GPUs), one panel per model,
log-log. Needs only Debian's python3-h5py, python3-numpy and
python3-matplotlib (run it with /usr/bin/python3).

usage: plot_pareto.py OUT.h5 [-o pareto.png] [--task pretrain]
"""
import argparse
import sys

import h5py
import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def names(table):
    return [n.decode() if isinstance(n, bytes) else str(n) for n in table["name"]]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file", help="a finished madsweep sweep file")
    ap.add_argument("-o", "--output", default="pareto.png", help="image to write")
    ap.add_argument("--task", default=None,
                    help="task name to plot (default: the first task with "
                         "type pretrain, else all tasks)")
    ap.add_argument("--figure", default="throughput_samples_per_s",
                    help="figure to maximize (default throughput_samples_per_s)")
    args = ap.parse_args(argv)

    with h5py.File(args.file, "r") as f:
        if int(f.attrs.get("complete", 0)) != 1:
            sys.exit(f"{args.file}: unfinished sweep (complete = 0)")
        models = names(f["axes/model"])
        tasks = f["axes/task"][:]
        task_names = names(tasks)
        cols = ["status", "model_idx", "task_idx", "devices", args.figure]
        res = f["results"]
        data = {c: res.fields(c)[:] for c in cols}

    task_idx = None
    if args.task is not None:
        if args.task not in task_names:
            sys.exit(f"--task: {args.task!r} not in {task_names}")
        task_idx = task_names.index(args.task)
    else:
        types = [t.decode() for t in tasks["type"]]
        if "pretrain" in types:
            task_idx = types.index("pretrain")
    keep = data["status"] == 0
    if task_idx is not None:
        keep &= data["task_idx"] == task_idx

    present = [m for m in range(len(models)) if np.any(keep & (data["model_idx"] == m))]
    if not present:
        sys.exit("no feasible points to plot")
    fig, axes = plt.subplots(1, len(present), figsize=(5 * len(present), 4),
                             squeeze=False)
    for ax, m in zip(axes[0], present):
        sel = keep & (data["model_idx"] == m)
        dev = data["devices"][sel]
        val = data[args.figure][sel]
        gpus = np.unique(dev)
        best = np.array([val[dev == g].max() for g in gpus])
        frontier = np.maximum.accumulate(best)
        ax.scatter(gpus, best, s=14, color="tab:blue", alpha=0.6,
                   label="best at N GPUs")
        ax.step(gpus, frontier, where="post", color="tab:red",
                label="Pareto frontier")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(models[m])
        ax.set_xlabel("GPUs")
        ax.set_ylabel(args.figure)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    title = "madsweep: best throughput vs GPUs"
    if task_idx is not None:
        title += f" ({task_names[task_idx]})"
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
