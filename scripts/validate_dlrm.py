"""validate_dlrm.py - the DLRM rows of validate.py and calibrate.py.

A file is a DLRM file when its header has the columns `tables`,
`rows_per_table`, `emb_dim`, `pooling`, `bot_mlp`, `top_mlp` and
`interaction` (schema: docs/validation.md, "DLRM file"). Every row
becomes a `fidelity = "detailed"` point with the model written out
(per-table rows and pooling as lists), the system
(hardware, devices, devices per node, NIC), the row's stack and a task of
dp = gpus, emb_sharding = "auto" (the planner), and what the row states
about its embeddings:
  - optimizer: "Adagrad" in notes -> adagrad; "Adam (DCNv2)" with a dcnv2
    model -> adam; else sgd (the file's DLRM rows say SGD);
  - hybrid embedding: "HybridSparseEmbedding" or "hybrid embedding" in
    emb_sharding or notes -> emb_hybrid = true;
  - "DP_SHARDING_THRESHOLD X GB" in notes -> emb_dp_threshold_bytes = X e9;
    "no DP threshold" -> 0;
  - precision amp -> fp16 MLPs, tf32 -> tf32, fp32 -> fp32;
  - "MEM_COMM_BW_RATIO X" in notes (several nodes: the hier_auto planner's
    HBM-to-network ratio as configured) -> emb_mem_comm_bw_ratio = X;
  - "SHARP" in notes (several nodes) -> allreduce_sharp = true;
  - nic_gbps_per_gpu empty and "accelerator_interconnect: N x M Gbe" in
    notes -> M Gb/s per GPU when the notes call the fabric rail-optimized
    (one rail link per GPU), else N x M / gpus_per_node Gb/s per GPU (no
    such note: the hardware's).
The GPU is read from the hardware catalogue (name or alias), the stack
from the row's `stack` column (measured.Context). Nothing is keyed on
point_id or source_short. The comparison is over samples/s
(measured_samples_per_s); the band comes from the stack's ranges
(iteration_time_hi_s gives the low end of samples/s).
"""
import re
import statistics as st

NAME = "dlrm"
OBJECTIVES = ("measured_samples_per_s",)
WORKLOAD = ("global_batch",)
DLRM_COLUMNS = {"tables", "rows_per_table", "emb_dim", "pooling", "bot_mlp", "top_mlp",
                "interaction"}
# the file's precision column: "amp" is its name for FP16 mixed precision
# (calibration_v3.md, DLRM file); other names pass to the tool as they are
PRECISION_NAMES = {"amp": "fp16"}


class Unmappable(ValueError):
    pass


def is_schema(fieldnames):
    return is_dlrm(fieldnames)


def is_dlrm(fieldnames):
    return DLRM_COLUMNS.issubset(set(fieldnames or []))


def _ints(text, what):
    try:
        vals = [int(x) for x in text.replace(",", ";").split(";") if x.strip()]
    except ValueError:
        raise ValueError(f"column {what}: not a ;-list of integers: {text!r}")
    if not vals or min(vals) < 1:
        raise ValueError(f"column {what}: empty or not positive")
    return vals


def _list(vals):
    return "[" + ", ".join(str(v) for v in vals) + "]"


def measured(row):
    v = (row.get("measured_samples_per_s") or "").strip()
    return {"measured_samples_per_s": float(v)} if v else {}


def predicted(r, res):
    gb = res.get("global_batch") or int(r.cols["global_batch"])
    return {"measured_samples_per_s": gb / res["iteration_time_s"]}


def prepare(r, ctx):
    """The point text of measured.Row r; sets its stack and hardware."""
    r.stack = ctx.column_stack(r.cols, r.used)
    r.hw = ctx.gpu(r.cols.get("gpu"))
    return point_text(r.cols, r.used, Unmappable, r.hw, r.stack)


def point_text(row, used, unmappable, gpu, stack):
    """The point file of one DLRM row; raises unmappable(reason)."""
    try:
        tables = int(row["tables"])
        rows = _ints(row["rows_per_table"], "rows_per_table")
        pool = _ints(row["pooling"], "pooling")
        dim = int(row["emb_dim"])
        bot = _ints(row["bot_mlp"], "bot_mlp")
        top = _ints(row["top_mlp"], "top_mlp")
        gpus = int(row["gpus"])
        gb = int(row["global_batch"])
    except (KeyError, ValueError) as e:
        raise unmappable(str(e))
    if len(rows) not in (1, tables) or len(pool) not in (1, tables):
        raise unmappable("rows_per_table / pooling: neither one value nor one per table")
    inter = (row.get("interaction") or "dot").strip()
    if inter not in ("dot", "dcnv2"):
        raise unmappable(f"unknown interaction {inter!r}")
    prec_text = (row.get("precision") or "").strip() or "amp"
    prec = PRECISION_NAMES.get(prec_text, prec_text)
    notes = row.get("notes") or ""
    sharding = row.get("emb_sharding") or ""
    if "Adagrad" in notes:
        opt = "adagrad"
    elif inter == "dcnv2" and "Adam (DCNv2)" in notes:
        opt = "adam"
    else:
        opt = "sgd"
        used.append("emb_optimizer=sgd")
    hybrid = ("HybridSparseEmbedding" in notes or "hybrid embedding" in sharding.lower()
              or "hybrid embedding" in notes.lower())
    m = re.search(r"DP_SHARDING_THRESHOLD\s+([0-9.eE+-]+)\s*GB", notes)
    thr = None
    if "no DP threshold" in notes:
        thr = 0.0
    elif m:
        thr = float(m.group(1)) * 1e9
    per_node = (row.get("gpus_per_node") or "").strip()
    nic = (row.get("nic_gbps_per_gpu") or "").strip()
    rows_text = str(rows[0]) if len(rows) == 1 else _list(rows)
    pool_text = str(pool[0]) if len(pool) == 1 else _list(pool)
    model = [
        "model = {",
        f'  name = "{row["point_id"]}"; type = "dlrm"; tables = {tables};',
        f"  rows_per_table = {rows_text};",
        f"  pooling = {pool_text};",
        f"  emb_dim = {dim}; bytes_per_emb_param = 4;",
        f"  bot_mlp = {_list(bot)}; top_mlp = {_list(top[:])};",
        f'  interaction = "{inter}";',
        "};",
    ]
    system = ["system = {", f'  name = "{row["point_id"]}"; hardware = "{gpu}"; devices = {gpus};']
    if per_node:
        system.append(f"  devices_per_node = {int(per_node)};")
    link = re.search(r"accelerator_interconnect: (\d+) x (\d+) ?Gbe", notes, re.I)
    if nic:
        system.append(f"  nic_gbps_per_device = {float(nic)!r};")
    elif link and per_node and re.search(r"rail-optimi[sz]ed", notes, re.I):
        # a rail-optimized fabric wires GPU i of every node to rail (leaf)
        # i: one link of the stated rate per GPU (NVIDIA DGX SuperPOD
        # reference architecture; the link count the systems file gives
        # matches the two dual-port in-band/storage NICs of a DGX A100 /
        # H100 datasheet, not the 8 compute rails)
        gbps = float(link.group(2))
        system.append(f"  nic_gbps_per_device = {gbps!r};")
        used.append(f"nic={gbps:g}(rail link per gpu)")
    elif link and per_node:
        # the node's stated links shared by its GPUs
        gbps = int(link.group(1)) * int(link.group(2)) / int(per_node)
        system.append(f"  nic_gbps_per_device = {gbps!r};")
        used.append(f"nic={gbps:g}(node links/gpus)")
    else:
        used.append("nic=hardware's")
    system.append("};")
    task = ["task = {", '  type = "pretrain";', f"  dp = {gpus}; global_batch = {gb};",
            f'  precision = "{prec}";',
            f'  emb_sharding = "auto"; emb_optimizer = "{opt}";']
    if hybrid:
        task.append("  emb_hybrid = true;")
    if thr is not None:
        task.append(f"  emb_dp_threshold_bytes = {thr!r};")
    ratio = re.search(r"MEM_COMM_BW_RATIO\s+([0-9.eE+-]+)", notes)
    if ratio and gpus > (int(per_node) if per_node else 8):
        task.append(f"  emb_mem_comm_bw_ratio = {float(ratio.group(1))!r};")
    if "SHARP" in notes and gpus > (int(per_node) if per_node else 8):
        task.append("  allreduce_sharp = true;")
    task.append("};")
    return "\n".join(['fidelity = "detailed";', f'stack = "{stack}";'] + model + system +
                     task) + "\n"


def report(rows, results, stats, band, report_failures):
    """Prints per row predicted and measured samples/s and the band, then
    the summary lines; returns (errors_ab, failed_ab)."""
    import measured as ms
    errors, errors_ab, failures = [], [], []
    inside, widths = 0, []
    by_source = {}
    print(f"{'point':<30} {'rel':>3} {'predicted/s':>12} {'measured/s':>12} {'error':>8} "
          f"{'band_lo/s':>12} {'band_hi/s':>12} in  placement  defaults")
    for r in rows:
        res = results.get(r.index)
        why = r.why or ms.failure(res)
        if why:
            failures.append((r.pid, r.rel, why))
            continue
        measured_v = r.measured["measured_samples_per_s"]
        it = res["iteration_time_s"]
        gb = res.get("global_batch") or int(r.cols["global_batch"])
        pred = gb / it
        lo = gb / (res.get("iteration_time_hi_s") or it)
        hi = gb / (res.get("iteration_time_lo_s") or it)
        err = pred / measured_v - 1.0
        errors.append(abs(err))
        ok = lo <= measured_v <= hi
        if r.ab:
            errors_ab.append(abs(err))
            inside += ok
            widths.append((hi - lo) / pred)
            by_source.setdefault(r.source, []).append(abs(err))
        place = (f"dp{res.get('emb_dp_tables', 0)}/t{res.get('emb_whole_tables', 0)}"
                 f"/r{res.get('emb_split_tables', 0)}")
        print(f"{r.pid:<30} {r.rel:>3} {pred:12.4g} {measured_v:12.4g} {100 * err:+7.1f}% "
              f"{lo:12.4g} {hi:12.4g} {'yes' if ok else 'no ':<3} {place:<10} "
              f"{','.join(r.used) if r.used else '-'}")
    failed_ab = report_failures(failures, len(rows))
    for src, errs in sorted(by_source.items()):
        print(f"validate: source {src}: {len(errs)} rows, median |err| "
              f"{100 * st.median(errs):.1f}%, max |err| {100 * max(errs):.1f}%")
    print(f"validate: reliability A+B: {stats(errors_ab)}"
          f"{' (samples/s)' if errors_ab else ''}")
    print(band(inside, widths))
    print(f"validate: {stats(errors, len(rows))}")
    return errors_ab, failed_ab
