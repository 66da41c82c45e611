#!/usr/bin/python3
"""plot.py - the pictures of a madsweep sweep file (PNG and PDF).

usage: plot.py OUT.h5 [-o PREFIX]   (default PREFIX: OUT without .h5)

Writes, for the points that run and fit in memory (status ok and
mem_fits = 1; MAD-Max files without mem_fits: status ok):
  PREFIX_pareto.{png,pdf}, PREFIX_pareto_cost.{png,pdf}
      per task and model, the best throughput per GPU of every hardware
      generation at each cluster size (one colour per generation) against
      the number of GPUs, and against the cost per million tokens
      (samples for a DLRM); the grey band is the Pareto frontier (no other
      point has more GPUs and more throughput per GPU; or is cheaper and
      faster), its points labelled with their hardware and winning
      strategy;
  PREFIX_breakdown.{png,pdf}  per training task and model, the time of an
      iteration of each generation's best point split as the row splits
      it (cost/bound.h: math- and memory-bound compute, exposed
      communication per parallel dimension, pipeline bubble, optimizer;
      files before those columns: compute and the exposed time shared out
      in proportion to each collective's total time), as a share of the
      iteration, its length written beside the bar;
  PREFIX_heatmap.{png,pdf}    per task and model, hardware x cluster size,
      the best throughput per GPU (written in each cell; the colour is the
      share of the panel's best), "no fit" where nothing runs;
  PREFIX_exposed.{png,pdf}    per task and model, the distribution of the
      exposed-communication share of the step over the feasible points and
      over the near-best ones (within 10 % of the best per hardware and size);
  PREFIX_speedup.{png,pdf}    the best point's speedup over the best point
      of a baseline strategy (--baseline, default FSDP) per hardware and
      cluster size;
  PREFIX_tornado.{png,pdf}    files whose systems scale hardware figures
      (system_grid `scale`): the change of the best throughput per GPU
      when each figure takes its lowest and highest factor, the others 1;
  PREFIX_bound.{png,pdf}      what bounds the best point of each hardware
      (variant) and cluster size (bound_by).
A generation the file holds in several variants (scaled figures, NIC,
domain, pod, collective) is drawn as one series per variant.
Only Debian's python3-h5py, python3-numpy and python3-matplotlib (run it
with /usr/bin/python3); the rows are read through scripts/madsweep_h5.py
(rows(): every file format, its parts joined), after their digests are
checked (verify_digests: a corrupted file is refused, exit 2, as a
missing, foreign or truncated one).
"""
import argparse
import os
import re
import sys
import textwrap

import h5py
import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import Normalize  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import madsweep_h5  # noqa: E402

COLLECTIVES = [("comm_allreduce_s", "all-reduce"), ("comm_allgather_s", "all-gather"),
               ("comm_reducescatter_s", "reduce-scatter"), ("comm_alltoall_s", "all-to-all"),
               ("comm_p2p_s", "pipeline send/recv")]
STRATEGY_INT = ["tp", "pp", "dp", "cp", "ep", "vpp", "zero_stage", "micro_batch", "sp"]
STRATEGY_STR = ["schedule", "recompute", "layout", "overlap", "emb_sharding"]
# what bounds a point (cost/bound.h): the parts of a step and their colours
BREAKDOWN = [("compute_math_s", "compute, math-bound"),
             ("compute_memory_s", "compute, memory-bound"),
             ("comm_exposed_tp_s", "exposed TP"), ("comm_exposed_cp_s", "exposed CP"),
             ("comm_exposed_ep_s", "exposed EP"), ("comm_exposed_pp_s", "exposed PP sends"),
             ("comm_exposed_dp_s", "exposed DP/ZeRO"), ("pipeline_bubble_s", "pipeline bubble"),
             ("optimizer_s", "optimizer step"),
             ("comm_exposed_scaleup_s", ""), ("comm_exposed_scaleout_s", "")]
BOUND_COLOURS = {"compute_math": "#4c72b0", "compute_memory": "#64b5cd",
                 "compute": "#4c72b0", "comm_tp": "#dd8452", "comm_cp": "#c44e52",
                 "comm_ep": "#8172b3", "comm_pp": "#937860", "comm_dp": "#da8bc3",
                 "comm": "#dd8452", "bubble": "#8c8c8c", "optimizer": "#55a868"}


def text(col):
    return np.array([v.decode() if isinstance(v, bytes) else str(v) for v in col])


def load(path):
    """The rows that may win, with their names joined in, as a dict of arrays."""
    with h5py.File(path, "r") as f:
        if "results" not in f:
            raise ValueError(f"{path} is not a madsweep sweep file")
        if int(f.attrs.get("complete", 0)) != 1:
            sys.exit(f"plot.py: {path}: unfinished sweep (complete = 0)")
        madsweep_h5.verify_digests(f)  # a flipped bit is refused, not plotted
        reader = madsweep_h5.Rows(f)
        have = set(reader.names)
        want = ["status", "model_idx", "system_idx", "task_idx", "devices",
                "iteration_time_s", "compute_gemm_s", "compute_emb_s",
                "comm_exposed_s", "pipeline_bubble_s", "mem_fits",
                "tokens_per_s_per_device", "samples_per_s_per_device",
                "cost_per_million_tokens_usd", "cost_per_sample_usd",
                "dense_plan", "emb_plan", "bound_by"]
        want += [c for c, _ in COLLECTIVES] + STRATEGY_INT + STRATEGY_STR
        want += [c for c, _ in BREAKDOWN]
        cols = [c for c in dict.fromkeys(want) if c in have]
        raw = reader.read(fields=cols)
        axes = f["axes"]
        system = axes["system"][:]
        hw = text(system["hardware"]) if "hardware" in system.dtype.names else None
        sysname = text(system["name"])
        if hw is not None:
            hw = np.where(hw == "", sysname, hw)
            hw = variants(hw, sysname, system)
        else:
            hw = sysname
        scale = {n[6:]: np.asarray(system[n]) for n in system.dtype.names
                 if n.startswith("scale_")}
        model = axes["model"][:]
        task = axes["task"][:]
        meta = {"model": text(model["name"]), "model_kind": text(model["type"]),
                "task": text(task["name"]), "task_kind": text(task["type"]),
                "hardware": hw, "fidelity": f.attrs.get("fidelity", b"?"),
                "scale": scale}
    ok = raw["status"] == 0
    if "mem_fits" in raw.dtype.names:
        ok &= raw["mem_fits"] == 1.0
    d = {c: raw[c][ok] for c in cols}
    for c in STRATEGY_STR + ["dense_plan", "emb_plan", "bound_by"]:
        if c in d:
            d[c] = text(d[c])
    d["hardware"] = meta["hardware"][d["system_idx"]]
    if isinstance(meta["fidelity"], bytes):
        meta["fidelity"] = meta["fidelity"].decode()
    return d, meta


def variants(hw, sysname, system):
    """The name each system is drawn under: its hardware generation, or,
    for a generation the file holds in several variants (scaled figures,
    NIC, domain, pod, collective), its system name without the size
    ("h100-sxm-80g/bf16x1.5/nicx2" for "h100-sxm-80g/16x8/bf16x1.5/nicx2")."""
    out = hw.copy()
    if "nodes" not in system.dtype.names:
        return out
    label = np.array([n.replace(f"/{a}x{b}", "", 1) for n, a, b in
                      zip(sysname, system["nodes"], system["devices_per_node"])])
    for g in set(hw):
        sel = hw == g
        if len(set(label[sel])) > 1:
            out[sel] = label[sel]
    return out


def strategy(d, i):
    """A strategy in few words (as the sweep summary writes it)."""
    if "tp" not in d:
        return f"{d['dense_plan'][i]} | {d['emb_plan'][i]}"
    if d["emb_sharding"][i]:
        return f"dp{d['dp'][i]} emb-{d['emb_sharding'][i]}"
    w = []
    if d["tp"][i] > 1:
        w.append(f"tp{d['tp'][i]}" + (" sp" if d["sp"][i] else ""))
    if d["pp"][i] > 1:
        w.append(f"pp{d['pp'][i]}" + (f" v{d['vpp'][i]}" if d["vpp"][i] > 1 else ""))
        if d["schedule"][i] == "gpipe":
            w.append("gpipe")
    w.append(f"dp{d['dp'][i]}")
    for k, p in (("cp", "cp"), ("ep", "ep")):
        if d[k][i] > 1:
            w.append(f"{p}{d[k][i]}")
    if d["zero_stage"][i] > 0:
        w.append(f"z{d['zero_stage'][i]}")
    if d["recompute"][i] != "none":
        w.append({"selective": "sel"}.get(d["recompute"][i], d["recompute"][i]))
    return " ".join(w)


def rate(d, llm):
    return d["tokens_per_s_per_device"] if llm else d["samples_per_s_per_device"]


def cost(d, llm):
    return d["cost_per_million_tokens_usd"] if llm else d["cost_per_sample_usd"] * 1e6


def units(llm):
    return ("tokens/s per GPU", "cost per million tokens (USD)") if llm else \
           ("samples/s per GPU", "cost per million samples (USD)")


def best_index(sel, v):
    """Index (into the full arrays) of the highest v among sel, or None."""
    idx = np.flatnonzero(sel)
    if idx.size == 0:
        return None
    vv = v[idx]
    if not np.isfinite(vv).any():
        return None
    return idx[np.nanargmax(vv)]


def panels(meta):
    """(task index, model index) of every panel, tasks as rows."""
    return [(t, m) for t in range(len(meta["task"])) for m in range(len(meta["model"]))]


def colours(meta):
    gens = list(dict.fromkeys(meta["hardware"]))
    cmap = plt.get_cmap("tab10" if len(gens) <= 10 else "tab20")
    return {g: cmap(i % cmap.N) for i, g in enumerate(gens)}, gens


def title(meta, t, m):
    kind = {"pretrain": "pretraining", "finetune": "fine-tuning",
            "inference": "serving"}.get(meta["task_kind"][t], meta["task_kind"][t])
    name = meta["task"][t]
    return f"{meta['model'][m]}, {kind}" + ("" if name == meta["task_kind"][t]
                                            else f" ({name})")


def winners(d, sel, llm, gens):
    """Per (generation, GPU count): the index of the best point."""
    out = {}
    v = rate(d, llm)
    for g in gens:
        gs = sel & (d["hardware"] == g)
        for n in np.unique(d["devices"][gs]):
            i = best_index(gs & (d["devices"] == n), v)
            if i is not None:
                out[(g, int(n))] = i
    return out


def frontier_gpus(points):
    """Points (gpus, rate, i) not beaten in both GPUs and rate."""
    keep = []
    for p in sorted(points, key=lambda q: (-q[0], -q[1])):
        if not keep or p[1] > keep[-1][1]:
            keep.append(p)
    return sorted(keep)


def frontier_cost(c, v, idx):
    """Indices of the points no cheaper point beats in rate."""
    order = idx[np.lexsort((-v[idx], c[idx]))]
    keep, top = [], -np.inf
    for i in order:
        if np.isfinite(c[i]) and v[i] > top:
            keep.append(i)
            top = v[i]
    return keep


def human(v):
    """A rate for a cell or a label: 25.7k, 799, 24.4, 3.25."""
    if not np.isfinite(v):
        return "-"
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return f"{v / div:.3g}{suf}"
    return f"{v:.3g}"


def frontier_labels(ax, pts, d, with_size):
    """Labels the frontier points (x, y, i) in a column at the upper right of
    the panel (where the declining curves leave room), joined to their
    points by thin lines."""
    for k, (x, y, i) in enumerate(pts):
        size = f" x{d['devices'][i]}" if with_size else ""
        ax.annotate(f"{d['hardware'][i]}{size}: {strategy(d, i)}", (x, y),
                    xycoords="data", textcoords="axes fraction",
                    xytext=(0.98, 0.97 - 0.085 * k), ha="right", va="top",
                    fontsize=6.5, color="0.1",
                    arrowprops=dict(arrowstyle="-", color="0.55", lw=0.6,
                                    shrinkA=0, shrinkB=3),
                    bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="0.8", lw=0.5,
                              alpha=0.9))


def plain_ticks(axis):
    """Log-axis ticks at 1, 2 and 5 times the powers of ten, written plainly."""
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: human(v)))
    axis.set_minor_formatter(NullFormatter())


def grid_axes(meta, w=4.4, h=3.9):
    nt, nm = len(meta["task"]), len(meta["model"])
    fig, axs = plt.subplots(nt, nm, figsize=(w * nm, h * nt + 0.9), squeeze=False)
    return fig, axs


def legend(fig, col, gens, frontier=True):
    handles = [plt.Line2D([], [], color=col[g], marker="o", lw=1.5) for g in gens]
    names = list(gens)
    if frontier:
        handles.append(plt.Line2D([], [], color="k", lw=6, alpha=0.18))
        names.append("Pareto frontier")
    fig.legend(handles, names, loc="lower center", ncol=min(len(names), 10),
               fontsize=8.5, frameon=False)


def plot_pareto(d, meta, prefix):
    """Throughput per GPU against GPUs, and against cost."""
    col, gens = colours(meta)
    for against in ("gpus", "cost"):
        fig, axs = grid_axes(meta)
        for t, m in panels(meta):
            ax = axs[t][m]
            llm = meta["model_kind"][m] == "llm"
            sel = (d["task_idx"] == t) & (d["model_idx"] == m)
            v, c = rate(d, llm), cost(d, llm)
            yl, cl = units(llm)
            win = winners(d, sel, llm, gens)
            x = (lambda i: d["devices"][i]) if against == "gpus" else (lambda i: c[i])
            for g in gens:
                ii = sorted((i for (gg, _), i in win.items() if gg == g),
                            key=lambda i: d["devices"][i])
                ii = [i for i in ii if np.isfinite(x(i))]
                if ii:
                    ax.plot([x(i) for i in ii], [v[i] for i in ii], "o-", color=col[g],
                            ms=4, lw=1.3, zorder=2)
            if against == "gpus":
                fr = frontier_gpus([(d["devices"][i], v[i], i) for i in win.values()])
            else:
                # a (generation, size)'s fastest point is also its cheapest per
                # token (cost = price / throughput), so the winners hold the frontier
                idx = np.array([i for i in win.values() if np.isfinite(c[i])], dtype=int)
                fr = [(c[i], v[i], i) for i in frontier_cost(c, v, idx)] if idx.size else []
                # label at most four points of the frontier: its ends and two between
                pick = sorted(set(np.linspace(0, len(fr) - 1, min(4, len(fr))).astype(int))) \
                    if fr else []
            if fr:
                ax.plot([p[0] for p in fr], [p[1] for p in fr], "-", color="k", lw=6,
                        alpha=0.18, zorder=1, solid_capstyle="round",
                        drawstyle="default" if against == "gpus" else "steps-post")
                frontier_labels(ax, fr if against == "gpus" else [fr[k] for k in pick],
                                d, against == "cost")
            else:
                ax.text(0.5, 0.5, "nothing runs and fits in memory",
                        transform=ax.transAxes, ha="center", color="0.4")
            ax.set_yscale("log")
            lo, hi = ax.get_ylim()
            ax.set_ylim(lo, hi * 1.5)
            plain_ticks(ax.yaxis)
            if against == "gpus":
                ax.set_xscale("log", base=2)
                sizes = sorted(set(int(d["devices"][i]) for i in win.values()))
                if sizes:
                    ax.set_xticks(sizes)
                    ax.set_xticklabels([str(n) for n in sizes])
                    ax.set_xlim(sizes[0] / 1.5, sizes[-1] * 1.5)
                ax.set_xlabel("GPUs")
            else:
                ax.set_xscale("log")
                plain_ticks(ax.xaxis)
                lo, hi = ax.get_xlim()
                ax.set_xlim(lo / 1.5, hi * 1.5)
                ax.set_xlabel(cl)
            ax.set_ylabel(yl)
            ax.set_title(title(meta, t, m), fontsize=9.5)
            ax.grid(True, which="major", alpha=0.3)
        legend(fig, col, gens)
        what = "the number of GPUs" if against == "gpus" else "the cost per token (sample)"
        suptitle(fig, f"Best throughput per GPU of each hardware generation against {what}; "
                     "frontier points labelled with their winning strategy "
                     "(points that run and fit in memory)", 11)
        fig.tight_layout(rect=(0, 0.05, 1, 0.97))
        save(fig, prefix + ("_pareto" if against == "gpus" else "_pareto_cost"))


def plot_breakdown(d, meta, prefix):
    """Where an iteration of each generation's best training point goes."""
    _, gens = colours(meta)
    jobs = [(t, m) for t, m in panels(meta) if meta["task_kind"][t] != "inference"]
    if not jobs:
        return
    split = "compute_math_s" in d  # the parts the file names (cost/bound.h)
    ncol = 3
    nrow = (len(jobs) + 1 + ncol - 1) // ncol
    fig, axs = plt.subplots(nrow, ncol, figsize=(6.2 * ncol, 3.9 * nrow), squeeze=False)
    if split:
        # rows a fidelity does not split (DLRM, MAD-Max) keep compute and
        # exposed communication whole
        parts = list(zip([n for k, n in BREAKDOWN if n],
                         ["#4c72b0", "#64b5cd", "#dd8452", "#c44e52", "#8172b3", "#937860",
                          "#da8bc3", "#8c8c8c", "#55a868"]))
        parts += [("compute (not split)", "#2f4b7c"),
                  ("exposed communication (not attributed)", "#f0b27a")]
    else:
        parts = [("compute", "#4c72b0")] + \
            [(f"exposed {n}", c) for (_, n), c in
             zip(COLLECTIVES, ["#dd8452", "#c44e52", "#8172b3", "#937860", "#da8bc3"])] + \
            [("pipeline bubble", "#8c8c8c")]
    parts.append(("other (unattributed)", "#d9d9d9"))
    for k, (t, m) in enumerate(jobs):
        ax = axs[k // ncol][k % ncol]
        llm = meta["model_kind"][m] == "llm"
        sel = (d["task_idx"] == t) & (d["model_idx"] == m)
        rows = [i for i in (best_index(sel & (d["hardware"] == g), rate(d, llm))
                            for g in gens) if i is not None]
        rows.sort(key=lambda i: rate(d, llm)[i])
        for y, i in enumerate(rows):
            it = d["iteration_time_s"][i]
            z = lambda key: float(np.nan_to_num(d[key][i])) if key in d else 0.0  # noqa: E731
            if split and np.isfinite(d["compute_math_s"][i]):
                seg = [z(key) for key, n in BREAKDOWN if n] + [0.0, 0.0]
            elif split:
                seg = [0.0] * 7 + [z("pipeline_bubble_s"), 0.0,
                                   z("compute_gemm_s") + z("compute_emb_s"),
                                   z("comm_exposed_s")]
            else:
                coll = [z(key) for key, _ in COLLECTIVES]
                tot = sum(coll)
                seg = [z("compute_gemm_s") + z("compute_emb_s")]
                seg += [z("comm_exposed_s") * c / tot if tot > 0 else 0.0 for c in coll]
                seg += [z("pipeline_bubble_s")]
                seg += [0.0] * (len(parts) - 1 - len(seg))
            seg.append(max(0.0, it - sum(seg)))
            left = 0.0
            for (_, c), sg in zip(parts, seg):
                ax.barh(y, 100.0 * sg / it, left=left, color=c, height=0.72)
                left += 100.0 * sg / it
            ax.text(101.5, y, f"{it:.3g} s, {human(rate(d, llm)[i])}", va="center",
                    fontsize=7)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([f"{d['hardware'][i]} x{d['devices'][i]}: {strategy(d, i)}"
                            for i in rows], fontsize=7)
        ax.set_xlim(0, 128)
        ax.set_xticks([0, 25, 50, 75, 100])
        ax.set_xlabel("share of the iteration time (%)")
        ax.set_title(f"{title(meta, t, m)}: iteration time (s), {units(llm)[0]}",
                     fontsize=9)
        if not rows:
            ax.text(0.5, 0.5, "nothing runs and fits in memory", transform=ax.transAxes,
                    ha="center", color="0.4")
    for k in range(len(jobs), nrow * ncol):
        axs[k // ncol][k % ncol].axis("off")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for _, c in parts]
    spare = axs[(nrow * ncol - 1) // ncol][ncol - 1]
    spare.legend(handles, [n for n, _ in parts], loc="center", fontsize=9, frameon=False,
                 title="time of one iteration")
    suptitle(fig, "Where an iteration goes: the best training point of each hardware "
                 "generation (compute split into math- and memory-bound kernels, exposed "
                 "communication by parallel dimension)" if split else
                 "Where an iteration goes: the best training point of each hardware "
                 "generation (exposed communication shared out in proportion to each "
                 "collective's time)", 11)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    save(fig, prefix + "_breakdown")


def plot_heatmap(d, meta, prefix):
    """Hardware x cluster size, best throughput per GPU."""
    _, gens = colours(meta)
    sizes = sorted(set(int(n) for n in d["devices"]))
    nt, nm = len(meta["task"]), len(meta["model"])
    fig, axs = plt.subplots(nt, nm, figsize=(1.2 + 0.75 * len(sizes) * nm + 1.2,
                                             0.34 * len(gens) * nt + 1.2 * nt + 0.6),
                            squeeze=False, constrained_layout=True)
    norm = Normalize(0.0, 1.0)
    cmap = plt.get_cmap("viridis")
    for t, m in panels(meta):
        ax = axs[t][m]
        llm = meta["model_kind"][m] == "llm"
        sel = (d["task_idx"] == t) & (d["model_idx"] == m)
        grid = np.full((len(gens), len(sizes)), np.nan)
        for (g, n), i in winners(d, sel, llm, gens).items():
            grid[gens.index(g), sizes.index(n)] = rate(d, llm)[i]
        top = np.nanmax(grid) if np.isfinite(grid).any() else 1.0
        ax.imshow(np.ma.masked_invalid(grid / top), cmap=cmap, norm=norm, aspect="auto")
        ax.set_facecolor("0.93")
        for a in range(len(gens)):
            for b in range(len(sizes)):
                val = grid[a, b]
                if np.isfinite(val):
                    ax.text(b, a, human(val), ha="center", va="center", fontsize=7,
                            color="white" if val / top < 0.6 else "black")
                else:
                    ax.text(b, a, "no fit", ha="center", va="center", fontsize=6.5,
                            color="0.45")
        ax.set_xticks(range(len(sizes)))
        ax.set_xticklabels([str(n) for n in sizes], fontsize=7.5)
        ax.set_yticks(range(len(gens)))
        ax.set_yticklabels(gens if m == 0 else [], fontsize=7.5)
        ax.set_xlabel("GPUs", fontsize=8)
        ax.set_title(f"{title(meta, t, m)}\n{units(llm)[0]}", fontsize=8.5)
    sm = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
    fig.colorbar(sm, ax=axs, fraction=0.015, pad=0.01,
                 label="throughput per GPU, share of the panel's best")
    suptitle(fig, "Best throughput per GPU by hardware generation and cluster size "
                 "(\"no fit\": no point runs and fits in memory)", 11)
    save(fig, prefix + "_heatmap")


# ------------------------------------------------------------ co-design

NEAR_BEST = 0.9  # a point within 10 % of its group's best throughput per GPU


def near_best(d, sel, llm):
    """Points of sel within NEAR_BEST of the best of their (hardware, GPUs)."""
    v = rate(d, llm)
    out = np.zeros(len(v), dtype=bool)
    for g in set(d["hardware"][sel]):
        gs = sel & (d["hardware"] == g)
        for n in np.unique(d["devices"][gs]):
            cell = gs & (d["devices"] == n)
            top = np.nanmax(v[cell])
            out |= cell & (v >= NEAR_BEST * top)
    return out


def plot_exposed(d, meta, prefix):
    """Distribution of the exposed-communication share of the step over the
    feasible points and over the near-best points, per task and model."""
    fig, axs = grid_axes(meta, 4.2, 3.2)
    bins = np.linspace(0.0, 100.0, 41)
    for t, m in panels(meta):
        ax = axs[t][m]
        llm = meta["model_kind"][m] == "llm"
        sel = (d["task_idx"] == t) & (d["model_idx"] == m)
        share = 100.0 * d["comm_exposed_s"] / d["iteration_time_s"]
        groups = (("feasible", sel, "#9db4d6"),
                  ("near-best", near_best(d, sel, llm) if sel.any() else sel, "#c44e52"))
        for name, g, c in groups:
            x = share[g & np.isfinite(share)]
            if x.size:
                w = np.full(x.size, 100.0 / x.size)
                ax.hist(x, bins=bins, weights=w, color=c, alpha=0.55 if c[1] == "9" else 0.8,
                        histtype="stepfilled" if c[1] == "9" else "step", lw=1.6,
                        label=f"{name}: median {np.median(x):.1f} %, n = {x.size}")
        ax.set_xlim(0, 100)
        lo, hi = ax.get_ylim()
        ax.set_ylim(0, hi * 1.3)
        ax.set_xlabel("exposed communication, % of the step time")
        ax.set_ylabel("share of the points (%)")
        ax.set_title(title(meta, t, m), fontsize=9)
        ax.legend(fontsize=6.2, loc="upper right", frameon=False)
        if not sel.any():
            ax.text(0.5, 0.5, "nothing runs and fits in memory", transform=ax.transAxes,
                    ha="center", color="0.4")
    suptitle(fig, "Share of the step lost to exposed communication across the design "
                 "space (feasible: every point that runs and fits in memory) and across its "
                 f"near-best points (within {1 - NEAR_BEST:.0%} of the best throughput per "
                 "GPU of their hardware and cluster size)", 11)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    save(fig, prefix + "_exposed")


def parse_baseline(spec):
    """The terms (column, value) of --baseline `spec`, COLUMN==INTEGER
    each, the columns strategy columns; ValueError names the bad term."""
    terms = []
    for term in spec.split(","):
        m = re.fullmatch(r"\s*([a-z_]+)\s*==\s*(-?[0-9]+)\s*", term)
        if not m:
            raise ValueError(f"--baseline {spec!r}: {term!r} is not COLUMN==INTEGER")
        if m.group(1) not in STRATEGY_INT:
            raise ValueError(f"--baseline {spec!r}: {m.group(1)!r} is not a strategy column "
                             f"({', '.join(STRATEGY_INT)})")
        terms.append((m.group(1), int(m.group(2))))
    return terms


def baseline_mask(d, meta, t, spec):
    """Rows matching the baseline strategy `spec` (col==value, ...); serving
    has no ZeRO stage, its baseline drops the condition on it."""
    out = np.ones(len(d["status"]), dtype=bool)
    for col, val in parse_baseline(spec):
        if col == "zero_stage" and meta["task_kind"][t] == "inference":
            continue
        if col not in d:
            return None
        out &= d[col] == val
    return out


def plot_speedup(d, meta, prefix, spec):
    """Speedup of the best strategy over the best baseline strategy, per
    task, model, hardware and cluster size."""
    if "tp" not in d:
        return
    col, gens = colours(meta)
    fig, axs = grid_axes(meta, 4.2, 3.3)
    for t, m in panels(meta):
        ax = axs[t][m]
        llm = meta["model_kind"][m] == "llm"
        sel = (d["task_idx"] == t) & (d["model_idx"] == m)
        base = baseline_mask(d, meta, t, spec)
        v = rate(d, llm)
        missing = 0
        for g in gens:
            xs, ys = [], []
            for n in np.unique(d["devices"][sel & (d["hardware"] == g)]):
                cell = sel & (d["hardware"] == g) & (d["devices"] == n)
                bi = best_index(cell & base, v) if base is not None else None
                if bi is None:
                    missing += 1
                    continue
                xs.append(n)
                ys.append(np.nanmax(v[cell]) / v[bi])
            if xs:
                ax.plot(xs, ys, "o-", color=col[g], ms=3.5, lw=1.2)
        ax.set_xscale("log", base=2)
        ax.axhline(1.0, color="0.5", lw=0.8)
        ax.set_xlabel("GPUs")
        ax.set_ylabel("speedup over the baseline (x)")
        ax.set_title(title(meta, t, m) + (f"\n({missing} cells without a fitting baseline)"
                                          if missing else ""), fontsize=8.5)
        ax.grid(True, alpha=0.3)
    legend(fig, col, gens, frontier=False)
    suptitle(fig, f"Speedup of the best strategy over the best baseline strategy ({spec}; "
                 "serving: without the ZeRO stage), per hardware and cluster size", 11)
    fig.tight_layout(rect=(0, 0.06, 1, 0.96))
    save(fig, prefix + "_speedup")


def plot_tornado(d, meta, prefix):
    """Best throughput per GPU against each scaled hardware figure: the change
    when one figure takes its lowest and highest factor, the others at 1."""
    scale = meta["scale"]
    if not scale:
        return
    keys = list(scale)
    sysidx = np.arange(len(next(iter(scale.values()))))
    at_one = np.all([scale[k] == 1.0 for k in keys], axis=0)
    fig, axs = grid_axes(meta, 4.6, 0.5 + 0.45 * len(keys) * 2)
    for t, m in panels(meta):
        ax = axs[t][m]
        llm = meta["model_kind"][m] == "llm"
        sel = (d["task_idx"] == t) & (d["model_idx"] == m)
        v = rate(d, llm)
        sizes = sorted(set(int(n) for n in d["devices"][sel]))
        cmap = plt.get_cmap("viridis")
        h = 0.8 / max(1, len(sizes))
        for si, n in enumerate(sizes):
            cell = sel & (d["devices"] == n)
            i0 = best_index(cell & at_one[d["system_idx"]], v)
            if i0 is None:
                continue
            for y, k in enumerate(keys):
                others = np.all([scale[o] == 1.0 for o in keys if o != k], axis=0) \
                    if len(keys) > 1 else np.ones(len(sysidx), dtype=bool)
                for f in (scale[k].min(), scale[k].max()):
                    if f == 1.0:
                        continue
                    pick = others & (scale[k] == f)
                    i = best_index(cell & pick[d["system_idx"]], v)
                    if i is None:
                        continue
                    ch = 100.0 * (v[i] / v[i0] - 1.0)
                    ax.barh(y + (si - (len(sizes) - 1) / 2) * h, ch, height=h * 0.9,
                            color=cmap(si / max(1, len(sizes) - 1)),
                            label=f"{n} GPUs" if y == 0 and f == scale[k].max() else None)
                    ax.text(ch, y + (si - (len(sizes) - 1) / 2) * h, f" x{f:g}",
                            va="center", ha="left" if ch >= 0 else "right", fontsize=6)
        ax.set_yticks(range(len(keys)))
        ax.set_yticklabels(keys, fontsize=7.5)
        ax.axvline(0.0, color="0.3", lw=0.8)
        ax.set_xlabel("change of the best throughput per GPU (%)")
        ax.set_title(f"{title(meta, t, m)}\n({units(llm)[0]})", fontsize=8.5)
        ax.legend(fontsize=6.5, frameon=False, loc="center right")
        ax.grid(True, axis="x", alpha=0.3)
    suptitle(fig, "Sensitivity of the best throughput per GPU to each scaled hardware "
                 "figure (the others at their catalogue value; every strategy re-optimized)",
             11)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    save(fig, prefix + "_tornado")


def plot_bound(d, meta, prefix):
    """What bounds the best point of each hardware (variant) and cluster size."""
    if "bound_by" not in d:
        return
    _, gens = colours(meta)
    sizes = sorted(set(int(n) for n in d["devices"]))
    nt, nm = len(meta["task"]), len(meta["model"])
    fig, axs = plt.subplots(nt, nm, figsize=(max(9.0, 3.2 + 1.1 * len(sizes) * nm + 1.6),
                                             0.3 * len(gens) * nt + 1.3 * nt + 0.9),
                            squeeze=False, constrained_layout=True)
    kinds = list(BOUND_COLOURS)
    for t, m in panels(meta):
        ax = axs[t][m]
        llm = meta["model_kind"][m] == "llm"
        sel = (d["task_idx"] == t) & (d["model_idx"] == m)
        rgb = np.ones((len(gens), len(sizes), 3)) * 0.93
        for (g, n), i in winners(d, sel, llm, gens).items():
            b = d["bound_by"][i]
            a, c = gens.index(g), sizes.index(n)
            rgb[a, c] = matplotlib.colors.to_rgb(BOUND_COLOURS.get(b, "#d9d9d9"))
            ax.text(c, a, b.replace("compute_", "").replace("comm_", "comm "),
                    ha="center", va="center", fontsize=5.8, color="white")
        ax.imshow(rgb, aspect="auto")
        ax.set_xticks(range(len(sizes)))
        ax.set_xticklabels([str(n) for n in sizes], fontsize=7)
        ax.set_yticks(range(len(gens)))
        ax.set_yticklabels(gens if m == 0 else [], fontsize=6.5)
        ax.set_xlabel("GPUs", fontsize=8)
        ax.set_title(title(meta, t, m).replace(", ", "\n", 1), fontsize=8)
    handles = [plt.Rectangle((0, 0), 1, 1, color=BOUND_COLOURS[k]) for k in kinds
               if k not in ("compute", "comm")]
    axs[0][nm - 1].legend(handles, [k for k in kinds if k not in ("compute", "comm")],
                          loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7,
                          frameon=False, title="bound by", title_fontsize=7.5)
    fig.suptitle(textwrap.fill("What bounds the best point of each hardware and cluster "
                               "size: the largest share of its step (grey: nothing fits)",
                               int(fig.get_figwidth() * 9)), fontsize=10)
    save(fig, prefix + "_bound")


def suptitle(fig, text, size):
    """A figure title wrapped to the figure's width."""
    fig.suptitle(textwrap.fill(text, int(fig.get_figwidth() * 150 / size)), fontsize=size)


def save(fig, stem):
    for ext in ("png", "pdf"):
        fig.savefig(f"{stem}.{ext}", dpi=130)
    plt.close(fig)
    print(f"plot.py: wrote {stem}.png and {stem}.pdf")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file", help="a finished madsweep sweep file")
    ap.add_argument("-o", "--prefix", default=None,
                    help="output prefix (default: the file name without .h5)")
    ap.add_argument("--baseline", default="tp==1,pp==1,zero_stage==3",
                    help="the baseline strategy of PREFIX_speedup, COLUMN==N terms "
                         "(default: FSDP, tp==1,pp==1,zero_stage==3)")
    args = ap.parse_args(argv)
    prefix = args.prefix or (args.file[:-3] if args.file.endswith(".h5") else args.file)
    where = os.path.dirname(os.path.abspath(prefix))
    if not os.path.isdir(where) or not os.access(where, os.W_OK):
        print(f"plot.py: -o {prefix}: {where} is not a writable directory", file=sys.stderr)
        return 2
    try:
        parse_baseline(args.baseline)
    except ValueError as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 2
    try:
        d, meta = load(args.file)
    except (OSError, KeyError, ValueError) as e:
        # missing, foreign, truncated or corrupted: one line, no traceback
        msg = str(e)
        sys.stderr.write(f"plot.py: {msg if msg.startswith(args.file) else args.file + ': ' + msg}\n")
        return 2
    if d["status"].size == 0:
        sys.exit(f"plot.py: {args.file}: no point runs and fits in memory")
    plot_pareto(d, meta, prefix)
    plot_breakdown(d, meta, prefix)
    plot_heatmap(d, meta, prefix)
    plot_exposed(d, meta, prefix)
    plot_speedup(d, meta, prefix, args.baseline)
    plot_tornado(d, meta, prefix)
    plot_bound(d, meta, prefix)
    return 0


if __name__ == "__main__":
    sys.exit(main())
