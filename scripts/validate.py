#!/usr/bin/env python3
"""validate.py - compare the detailed fidelity with published training runs.

Usage: scripts/validate.py FILE.csv [FILE.csv ...] [--keep DIR]
                           [--check MEDIAN MAX [TPOT_MEDIAN]] [--max-failed N]
                           [--vpp-auto]

A serving file (header with measured_output_tokens_per_s) is validated by
scripts/validate_serving.py (its docstring says how each scenario maps); a
file in AIConfigurator's silicon format (its header: silicon_ttft_ms, ...)
by scripts/validate_aic.py, with --hf-configs DIR (the models' config.json
files) and --approximate (the nearest expressible model and deployment);
kernel tables (kernel_id / coll_id headers, AIConfigurator .csv.gz files
or directories) by scripts/validate_kernels.py.

Every row of FILE.csv (schema: docs/validation.md, "The calibration
files") becomes a `fidelity = "detailed"` point file; the
binary named by $MADSWEEP (else build/madsweep, else build-*/madsweep in
the source tree) evaluates it with `madsweep eval POINT --json`. Prints per
row the predicted and measured iteration time, the signed error
(predicted/measured - 1), the band [iteration_time_lo_s, _hi_s] and
whether the measured time lies inside it, the defaults used for empty
cells, then the summary lines:
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
Files of the calibration_v3_additions.csv schema add the MoE columns
experts, top_k, shared_experts, expert_ffn, dense_layers (model keys)
and capacity_factor (empty: 1, balanced routing); a head size that is
not hidden/heads comes from `notes` ("head_dim N"); arch deepseek-mla
stands for DeepSeek-V3's latent attention (ARCH_KEYS).
Standard library only.

Nothing is keyed on point_id or source_short. The row's `stack` column
names the software stack (configs/stacks.cfg; empty: "unknown", the
tool's default stack), whose facts decide the attention kernel, TP/DP
overlap, recompute granularity, pipeline split and optimizer bytes.
Defaults for empty cells (the tool's documented defaults, said per row):
ffn = 4 hidden, kv_heads = heads, mlp = gelu, position = learned, causal =
1, precision = bf16, gpus_per_node = the hardware's scale-up domain,
nic_gbps_per_gpu = the hardware's NIC, tp = pp = cp = ep = vpp = 1 (dp
derived from gpus when empty; with --vpp-auto a row with pp > 1 that
leaves vpp empty takes vpp = "auto", the fastest interleaving that fits,
said per row as vpp=auto: on calibration.csv that makes the A+B rows
worse, 2.9 % -> 3.5 % median and 11.4 % -> 22.0 % max, as the runs that
leave it unstated ran slower than the best interleaving; so it is not
the default); zero_stage, sequence_parallel: the
stack's defaults; micro_batch = auto (the fastest that divides the
replica's batch and fits, as a tuned run picks it; the stack's default
when grad_accum is stated); grad_accum = global_batch / (micro_batch dp);
recompute = auto (the least of none, selective, full whose memory fits
the device: what a practitioner would run).
"""
import csv
import functools
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import validate_dlrm
import validate_kernels

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

ARCHS = {"gpt", "llama", "mpt", "bloom", "vit", "mixtral", "deepseek", "deepseek-mla"}
# Architecture names of the v3 file (docs/validation.md) that stand for a
# layout the columns cannot hold: the tool's arch and model keys.
# deepseek-mla: DeepSeek-V3's multi-head latent attention (config.json of
# deepseek-ai/DeepSeek-V3: q_lora_rank 1536, kv_lora_rank 512,
# qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128).
ARCH_KEYS = {"deepseek-mla": ("deepseek", {"q_lora_rank": 1536, "kv_lora_rank": 512,
                                           "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
                                           "v_head_dim": 128})}
# Mixture-of-experts columns of calibration_v3_additions.csv -> model keys.
MOE_KEYS = ("experts", "top_k", "shared_experts", "expert_ffn", "dense_layers")
PRECISIONS = {"bf16", "fp16", "fp8", "fp4", "tf32", "fp32"}
RECOMPUTE = {"none", "selective", "full"}
# --vpp-auto: rows with pp > 1 that leave vpp empty take vpp = "auto"
VPP_AUTO = [False]
POSITIONS = {"learned", "rope", "alibi", "none"}


def binary():
    env = os.environ.get("MADSWEEP")
    if env:
        return env
    for cand in [os.path.join(ROOT, "build", "madsweep")] + sorted(
            glob.glob(os.path.join(ROOT, "build*", "madsweep"))):
        if os.access(cand, os.X_OK):
            return cand
    sys.exit("validate: no madsweep binary (set MADSWEEP or build into build/)")


@functools.lru_cache(maxsize=None)
def hardware_names():
    """The generations of the hardware catalogue, as `madsweep list
    hardware` prints them (its first column, after two header lines)."""
    proc = subprocess.run([binary(), "list", "hardware"], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"validate: madsweep list hardware failed: {proc.stderr.strip()}")
    return frozenset(line.split()[0] for line in proc.stdout.splitlines()[2:]
                     if line.strip())


class Unmappable(Exception):
    pass


def cell(row, key, default, used, conv=int):
    text = (row.get(key) or "").strip()
    if text == "":
        used.append(f"{key}={default}")
        return default
    try:
        return conv(text)
    except ValueError:
        raise Unmappable(f"column {key}: cannot read {text!r}")


def point_text(row, used):
    arch = (row.get("arch") or "").strip()
    if arch not in ARCHS:
        raise Unmappable(f"unknown arch {arch!r}")
    arch, extra = ARCH_KEYS.get(arch, (arch, {}))
    extra = dict(extra)
    for key in MOE_KEYS:
        if (row.get(key) or "").strip():
            extra[key] = cell(row, key, 0, used)
    # docs/validation.md: a head size that is not hidden/heads (Qwen3) is
    # given in `notes` as "head_dim N"
    hd = re.search(r"\bhead_dim (\d+)", row.get("notes") or "")
    if hd and "kv_lora_rank" not in extra:
        extra["head_dim"] = int(hd.group(1))
    # Qwen3's per-head query/key norms, stated in `notes` as "qk-layernorm"
    if re.search(r"\bqk-layernorm\b", row.get("notes") or ""):
        extra["qk_norm"] = "true"
    gpu = (row.get("gpu") or "").strip()
    if gpu not in hardware_names():
        raise Unmappable(f"unknown gpu {gpu!r}")
    layers = cell(row, "layers", None, used)
    hidden = cell(row, "hidden", None, used)
    heads = cell(row, "heads", None, used)
    seq = cell(row, "seq_len", None, used)
    vocab = cell(row, "vocab", None, used)
    gpus = cell(row, "gpus", None, used)
    gb = cell(row, "global_batch", None, used)
    for name, v in (("layers", layers), ("hidden", hidden), ("heads", heads),
                    ("seq_len", seq), ("vocab", vocab), ("gpus", gpus),
                    ("global_batch", gb)):
        if v is None:
            raise Unmappable(f"column {name} is empty and has no default")
    ffn = cell(row, "ffn", 4 * hidden, used)
    kv = cell(row, "kv_heads", heads, used)
    mlp = cell(row, "mlp", "gelu", used, str)
    pos = cell(row, "position", "learned", used, str)
    causal = cell(row, "causal", 1, used)
    prec = cell(row, "precision", "bf16", used, str)
    if mlp not in ("gelu", "swiglu"):
        raise Unmappable(f"unknown mlp {mlp!r}")
    if pos not in POSITIONS:
        raise Unmappable(f"unknown position {pos!r}")
    if prec not in PRECISIONS:
        raise Unmappable(f"unknown precision {prec!r}")
    per_node = cell(row, "gpus_per_node", 0, used)
    nic = cell(row, "nic_gbps_per_gpu", 0.0, used, float)
    tp = cell(row, "tp", 1, used)
    pp = cell(row, "pp", 1, used)
    cp = cell(row, "cp", 1, used)
    ep = cell(row, "ep", 1, used)
    dp_default = gpus // max(1, tp * pp * cp)
    dp = cell(row, "dp", dp_default, used)
    # an unstated interleaving resolves like recompute: the fastest that
    # fits (vpp = "auto"; 1 without a pipeline)
    if (row.get("vpp") or "").strip() or pp <= 1 or not VPP_AUTO[0]:
        vpp = cell(row, "vpp", 1, used)
    else:
        # --vpp-auto: an unstated interleaving resolves like recompute,
        # the fastest that fits
        vpp = '"auto"'
        used.append("vpp=auto")
    stack = (row.get("stack") or "").strip()
    if not stack:
        stack = "unknown"
        used.append("stack=unknown")
    # docs/validation.md: LoRA fine-tuning rows say so in `notes` ("LoRA
    # adapters rank N"; base weights frozen, embeddings too) and a partial
    # full recompute as "recompute of N of the L layers"
    notes = row.get("notes") or ""
    lora = re.search(r"LoRA adapters rank (\d+)", notes)
    part = re.search(r"recompute of (\d+) of the (\d+) layers", notes)
    if lora:
        task = ['  type = "finetune";', f"  lora_rank = {int(lora.group(1))};",
                f"  frozen_layers = {layers}; freeze_emb = true;"]
        used.append("lora (notes)")
    else:
        task = ['  type = "pretrain";']
    if part:
        task.append(f"  recompute_layers = {int(part.group(1))};")
        used.append(f"recompute_layers={part.group(1)} (notes)")
    task += [
            f"  tp = {tp}; pp = {pp}; dp = {dp}; cp = {cp}; ep = {ep}; vpp = {vpp};",
            f'  precision = "{prec}";']
    # MoE token dispatcher and A2A overlap when `notes` name them
    # (docs/validation.md): DeepEP / HybridEP are Megatron-Core's flex
    # dispatcher; "tokendrop" runs use the all-to-all one (Megatron-Bridge
    # moe_token_drop.py asserts moe_token_dispatcher_type alltoall); "A2A
    # overlap" is overlap_moe_expert_parallel_comm. Unstated: the stack's.
    if extra.get("experts"):
        if re.search(r"\b(DeepEP|HybridEP)\b", notes):
            task.append("  moe_flex_dispatch = true;")
            used.append("dispatcher flex (notes)")
        elif re.search(r"\btokendrop\b|dispatcher A2A\b", notes):
            task.append("  moe_flex_dispatch = false;")
            used.append("dispatcher alltoall (notes)")
        if re.search(r"\bA2A overlap\b", notes):
            task.append("  moe_a2a_overlap = true;")
            used.append("a2a overlap (notes)")
    # torch.compile stated in `notes` (not "no torch.compile"): the
    # stack's fused end of its element-wise passes
    if re.search(r"(?<!no )\btorch\.compile\b", notes):
        task.append("  compiled = true;")
        used.append("compiled (notes)")
    if (row.get("capacity_factor") or "").strip():
        task.append(f'  capacity_factor = {cell(row, "capacity_factor", 1.0, used, float)!r};')
    elif extra.get("experts"):
        used.append("capacity_factor=1 (balanced)")
    if (row.get("zero_stage") or "").strip():
        task.append(f'  zero_stage = {cell(row, "zero_stage", 0, used)};')
    else:
        used.append("zero_stage=stack's")
    sp_text = (row.get("sequence_parallel") or "").strip()
    if sp_text:
        sp = cell(row, "sequence_parallel", 0, used)
        task.append(f'  sequence_parallel = {"true" if sp else "false"};')
    elif tp > 1:
        used.append("sequence_parallel=stack's")
    rc = cell(row, "recompute", "auto", used, str)
    if rc != "auto" and rc not in RECOMPUTE:
        raise Unmappable(f"unknown recompute {rc!r}")
    task.append(f'  recompute = "{rc}";')
    mb_text = (row.get("micro_batch") or "").strip()
    ga_text = (row.get("grad_accum") or "").strip()
    if mb_text:
        mb = cell(row, "micro_batch", 1, used)
        task.append(f"  micro_batch = {mb};")
    elif not ga_text:
        task.append('  micro_batch = "auto";')
        used.append("micro_batch=auto")
    else:
        used.append("micro_batch=stack's")
    if ga_text:
        ga = cell(row, "grad_accum", 1, used)
        task.append(f"  grad_accum = {ga};")
        if mb_text and mb * dp * ga != gb:
            raise Unmappable(f"micro_batch {mb} x dp {dp} x grad_accum {ga} != "
                             f"global_batch {gb}")
    task.append(f"  global_batch = {gb};")
    lines = [
        'fidelity = "detailed";',
        f'stack = "{stack}";',
        "model = {",
        f'  name = "{row["point_id"]}"; type = "llm"; arch = "{arch}";',
        f"  layers = {layers}; hidden = {hidden}; ffn = {ffn}; heads = {heads};",
        f"  kv_heads = {kv}; seq_len = {seq}; vocab = {vocab};",
        f'  mlp = "{mlp}"; position = "{pos}"; causal = {"true" if causal else "false"};',
    ] + [f"  {k} = {v};" for k, v in extra.items()] + [
        "};",
        "system = {",
        f'  name = "{row["point_id"]}"; hardware = "{gpu}"; devices = {gpus};',
    ]
    if per_node:
        lines.append(f"  devices_per_node = {per_node};")
    if nic:
        lines.append(f"  nic_gbps_per_device = {nic!r};")
    lines += ["};", "task = {"] + task + ["};"]
    return "\n".join(lines) + "\n"


def pct(xs, f):
    return 100 * f(xs) if xs else float("nan")


def eval_point(exe, tmp, pid, text):
    """Writes and evaluates one point: (result dict, None) or (None, why)."""
    path = os.path.join(tmp, f"{pid}.cfg")
    with open(path, "w") as out:
        out.write(text)
    proc = subprocess.run([exe, "eval", path, "--json"], capture_output=True, text=True)
    if proc.returncode != 0:
        return None, "rejected: " + (proc.stderr.strip() or proc.stdout.strip())
    try:
        res = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None, "no JSON from madsweep eval"
    if res.get("status") != "ok":
        mem = res.get("mem_total_bytes_per_device") or 0
        return None, f"status {res.get('status')} (memory {mem / 2**30:.1f} GiB)"
    return res, None


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


def main_dlrm(exe, tmp, rows, check):
    """A DLRM file (scripts/validate_dlrm.py): samples/s per row."""
    import statistics as st
    errors_ab, failed_ab = validate_dlrm.evaluate(
        rows, lambda pid, text: eval_point(exe, tmp, pid, text), Unmappable, pct,
        report_failures)
    if failed_ab:
        return 1
    if check and not (pct(errors_ab, st.median) <= check[0] and
                      pct(errors_ab, max) <= check[1]):
        return 1
    return 0


def main(argv):
    args = argv[1:]
    keep = None
    check = None
    if "--check" in args:
        i = args.index("--check")
        n = 3 + (i + 3 < len(args) and args[i + 3].replace(".", "", 1).isdigit())
        check = tuple(float(a) for a in args[i + 1:i + n])
        del args[i:i + n]
    if "--keep" in args:
        i = args.index("--keep")
        keep = args[i + 1]
        del args[i:i + 2]
    if "--vpp-auto" in args:
        args.remove("--vpp-auto")
        VPP_AUTO[0] = True
    max_failed = 0
    if "--max-failed" in args:
        i = args.index("--max-failed")
        max_failed = int(args[i + 1])
        del args[i:i + 2]
    aic = {"hf_dir": None, "approximate": "--approximate" in args}
    if aic["approximate"]:
        args.remove("--approximate")
    if "--hf-configs" in args:
        i = args.index("--hf-configs")
        aic["hf_dir"] = args[i + 1]
        del args[i:i + 2]
    if len(args) < 1:
        sys.exit(__doc__.split("\n\n")[1])
    if validate_kernels.is_kernel_input(args):  # kernel tables: their own module
        return validate_kernels.main([argv[0]] + argv[1:])
    exe = binary()
    tmp = keep or tempfile.mkdtemp(prefix="validate-")
    os.makedirs(tmp, exist_ok=True)
    errors, errors_ab, failures, n = [], [], [], 0
    inside, widths = 0, []
    rows, per_file = [], {}
    for name in args:
        with open(name, newline="") as f:
            for row in csv.DictReader(f):
                row["_file"] = os.path.basename(name)
                rows.append(row)
    import validate_aic
    if rows and validate_aic.is_aic(rows[0].keys()):  # AIConfigurator's silicon format
        return validate_aic.run(rows, lambda pid, text: eval_point(exe, tmp, pid, text), exe,
                                check=check, max_failed=max_failed, **aic)
    if rows and "measured_output_tokens_per_s" in rows[0]:  # a serving file
        import validate_serving
        return validate_serving.run(rows, lambda pid, text: eval_point(exe, tmp, pid, text),
                                    report_failures, check)
    if rows and validate_dlrm.is_dlrm(list(rows[0].keys())):
        return main_dlrm(exe, tmp, rows, check)
    print(f"{'point':<30} {'rel':>3} {'predicted_s':>12} {'measured_s':>12} {'error':>8} "
          f"{'band_lo_s':>10} {'band_hi_s':>10} in  defaults")
    for row in rows:
        n += 1
        pid = row.get("point_id", f"row{n}")
        rel = (row.get("reliability") or "").strip() or "?"
        used = []
        try:
            measured = float(row["measured_iteration_time_s"])
            text = point_text(row, used)
        except (Unmappable, KeyError, ValueError, TypeError) as e:
            failures.append((pid, rel, f"unmappable: {e}"))
            continue
        res, why = eval_point(exe, tmp, pid, text)
        if res is None:
            failures.append((pid, rel, why))
            continue
        pred = res["iteration_time_s"]
        lo = res.get("iteration_time_lo_s") or pred
        hi = res.get("iteration_time_hi_s") or pred
        err = pred / measured - 1.0
        errors.append(abs(err))
        if rel in ("A", "B"):
            errors_ab.append(abs(err))
            per_file.setdefault(row["_file"], []).append(abs(err))
            ok = lo <= measured <= hi
            inside += ok
            widths.append((hi - lo) / pred)
        else:
            ok = lo <= measured <= hi
        print(f"{pid:<30} {rel:>3} {pred:12.4f} {measured:12.4f} {100 * err:+7.1f}% "
              f"{lo:10.4f} {hi:10.4f} {'yes' if ok else 'no ':<3} "
              f"{','.join(used) if used else '-'}")
    failed_ab = report_failures(failures, n)
    import statistics as st
    if len(args) > 1:
        for name, errs in per_file.items():
            print(f"validate: {name}: reliability A+B: {len(errs)} rows, median |err| "
                  f"{pct(errs, st.median):.1f}%, mean |err| {pct(errs, st.fmean):.1f}%, "
                  f"max |err| {pct(errs, max):.1f}%")
    print(f"validate: reliability A+B: {len(errors_ab)} rows, median |err| "
          f"{pct(errors_ab, st.median):.1f}%, mean |err| {pct(errors_ab, st.fmean):.1f}%, "
          f"max |err| {pct(errors_ab, max):.1f}%")
    print(f"validate: band: {inside} of {len(errors_ab)} A+B rows inside, median width "
          f"{pct(widths, st.median):.1f}%")
    print(f"validate: {n} rows, median |err| {pct(errors, st.median):.1f}%, mean |err| "
          f"{pct(errors, st.fmean):.1f}%, max |err| {pct(errors, max):.1f}%")
    if len(failed_ab) > max_failed:
        return 1
    if check and not (pct(errors_ab, st.median) <= check[0] and
                      pct(errors_ab, max) <= check[1]):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
