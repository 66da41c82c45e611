#!/usr/bin/env python3
"""validate.py - compare the detailed fidelity with published training runs.

Usage: scripts/validate.py FILE.csv [--keep DIR] [--check MEDIAN MAX]

Every row of FILE.csv (schema: ../shared/reference/README.md, section
measured/calibration.csv) becomes a `fidelity = "detailed"` point file; the
binary named by $MADSWEEP (else build/madsweep, else build-*/madsweep in
the source tree) evaluates it with `madsweep eval POINT --json`. Prints per
row the predicted and measured iteration time and the signed error
(predicted/measured - 1), the defaults used for empty cells, then exactly
one summary line:
    validate: N rows, median |err| X.X%, mean |err| Y.Y%, max |err| Z.Z%
Rows that cannot be mapped (unknown GPU, architecture, ...) or that the
model rejects are listed with the reason and count as failures (exit 1);
they are included in N. Standard library only. With --check, the exit
status is also 1 unless the median |err| over all rows is <= MEDIAN % and
the max |err| over the rows of reliability A (stated in full) is <= MAX %
(a line before the summary reports that max).

Defaults for empty cells (the tool's documented defaults, said per row):
ffn = 4 hidden, kv_heads = heads, mlp = gelu, position = learned, causal =
1, precision = bf16, gpus_per_node = the hardware's scale-up domain,
nic_gbps_per_gpu = the hardware's NIC, tp = pp = dp = cp = ep = vpp = 1
(dp derived from gpus when empty), zero_stage = 0, sequence_parallel = 0,
recompute = none, micro_batch = 1, grad_accum = global_batch /
(micro_batch dp). An empty recompute cell takes the lightest of none,
selective, full whose memory fits the device (what a practitioner would
run; said as recompute=auto:MODE). Attention is fused (flash), the
detailed default, except for sources whose software stack predates fused
attention kernels (SOURCE_ATTENTION below: Megatron-LM 2021 materialized
the s x s scores with fused softmax kernels), said as attention=unfused.
"""
import csv
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

GPUS = {"a100-40g", "a100-80g", "h100-sxm-80g", "h100-96g-500w", "v100-32g",
        "h200", "b200", "gb200-nvl72", "mi300x"}
ARCHS = {"gpt", "llama", "mpt", "bloom", "vit", "mixtral", "deepseek"}
PRECISIONS = {"bf16", "fp16", "fp8", "tf32", "fp32"}
RECOMPUTE = {"none", "selective", "full"}
POSITIONS = {"learned", "rope", "alibi", "none"}
# Software stack facts by source (not calibration): the attention kernels
# and whether tensor-parallel communication is overlapped with GEMMs
# (Megatron-Core runs with Transformer Engine's TP overlap; Megatron-LM
# 2021 had neither fused attention nor TP overlap).
SOURCE_ATTENTION = {"NAR21": "unfused"}
SOURCE_TP_OVERLAP = {"MCORE"}


def binary():
    env = os.environ.get("MADSWEEP")
    if env:
        return env
    for cand in [os.path.join(ROOT, "build", "madsweep")] + sorted(
            glob.glob(os.path.join(ROOT, "build*", "madsweep"))):
        if os.access(cand, os.X_OK):
            return cand
    sys.exit("validate: no madsweep binary (set MADSWEEP or build into build/)")


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
    gpu = (row.get("gpu") or "").strip()
    if gpu not in GPUS:
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
    vpp = cell(row, "vpp", 1, used)
    zero = cell(row, "zero_stage", 0, used)
    sp = cell(row, "sequence_parallel", 0, used)
    rc = cell(row, "recompute", "auto", used, str)
    if rc != "auto" and rc not in RECOMPUTE:
        raise Unmappable(f"unknown recompute {rc!r}")
    attn = SOURCE_ATTENTION.get((row.get("source_short") or "").strip(), "flash")
    if attn != "flash":
        used.append(f"attention={attn}")
    tpo = (row.get("source_short") or "").strip() in SOURCE_TP_OVERLAP
    if tpo and tp > 1:
        used.append("overlap_tp_comm=true")
    mb = cell(row, "micro_batch", 1, used)
    ga_default = gb // max(1, mb * dp)
    ga = cell(row, "grad_accum", ga_default, used)
    if mb * dp * ga != gb:
        raise Unmappable(f"micro_batch {mb} x dp {dp} x grad_accum {ga} != "
                         f"global_batch {gb}")
    lines = [
        'fidelity = "detailed";',
        "model = {",
        f'  name = "{row["point_id"]}"; type = "llm"; arch = "{arch}";',
        f"  layers = {layers}; hidden = {hidden}; ffn = {ffn}; heads = {heads};",
        f"  kv_heads = {kv}; seq_len = {seq}; vocab = {vocab};",
        f'  mlp = "{mlp}"; position = "{pos}"; causal = {"true" if causal else "false"};',
        "};",
        "system = {",
        f'  name = "{row["point_id"]}"; hardware = "{gpu}"; devices = {gpus};',
    ]
    if per_node:
        lines.append(f"  devices_per_node = {per_node};")
    if nic:
        lines.append(f"  nic_gbps_per_device = {nic!r};")
    lines += [
        "};",
        "task = {",
        '  type = "pretrain";',
        f"  tp = {tp}; pp = {pp}; dp = {dp}; cp = {cp}; ep = {ep}; vpp = {vpp};",
        f'  zero_stage = {zero}; sequence_parallel = {"true" if sp else "false"};',
        f'  recompute = "{rc}"; precision = "{prec}";',
        f'  attention = "{attn}"; overlap_tp_comm = {"true" if tpo else "false"};',
        f"  micro_batch = {mb}; global_batch = {gb}; grad_accum = {ga};",
        "};",
    ]
    return "\n".join(lines) + "\n"


def main(argv):
    args = argv[1:]
    keep = None
    check = None
    if "--check" in args:
        i = args.index("--check")
        check = (float(args[i + 1]), float(args[i + 2]))
        del args[i:i + 3]
    if "--keep" in args:
        i = args.index("--keep")
        keep = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        sys.exit(__doc__.split("\n\n")[1])
    exe = binary()
    tmp = keep or tempfile.mkdtemp(prefix="validate-")
    os.makedirs(tmp, exist_ok=True)
    errors, failures, n = [], [], 0
    errors_a = []
    with open(args[0], newline="") as f:
        rows = list(csv.DictReader(f))
    print(f"{'point':<22} {'predicted_s':>12} {'measured_s':>12} {'error':>8}  defaults")
    for row in rows:
        n += 1
        pid = row.get("point_id", f"row{n}")
        used = []
        try:
            measured = float(row["measured_iteration_time_s"])
            text = point_text(row, used)
        except (Unmappable, KeyError, ValueError, TypeError) as e:
            failures.append((pid, f"unmappable: {e}"))
            continue
        path = os.path.join(tmp, f"{pid}.cfg")
        modes = ["none", "selective", "full"] if 'recompute = "auto"' in text else [None]
        for mode in modes:
            run_text = text
            if mode:
                run_text = text.replace('recompute = "auto"', f'recompute = "{mode}"')
            with open(path, "w") as out:
                out.write(run_text)
            proc = subprocess.run([exe, "eval", path, "--json"], capture_output=True,
                                  text=True)
            res = None
            if proc.returncode != 0:
                break
            try:
                res = json.loads(proc.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                break
            if res.get("status") == "ok":
                break
        if mode:
            used[used.index("recompute=auto")] = f"recompute=auto:{mode}"
        if proc.returncode != 0:
            failures.append((pid, "rejected: " + (proc.stderr.strip() or
                                                  proc.stdout.strip())))
            continue
        if res is None:
            failures.append((pid, "no JSON from madsweep eval"))
            continue
        if res.get("status") != "ok":
            failures.append((pid, f"status {res.get('status')} (memory "
                                  f"{res.get('mem_total_bytes_per_device', 0) / 1e9:.1f} GB)"))
            continue
        pred = res["iteration_time_s"]
        err = pred / measured - 1.0
        errors.append(abs(err))
        if (row.get("reliability") or "").strip() == "A":
            errors_a.append(abs(err))
        print(f"{pid:<22} {pred:12.4f} {measured:12.4f} {100 * err:+7.1f}%  "
              f"{','.join(used) if used else '-'}")
    for pid, why in failures:
        print(f"{pid:<22} FAILED: {why}")
    if errors:
        med = 100 * statistics.median(errors)
        mean = 100 * statistics.fmean(errors)
        mx = 100 * max(errors)
    else:
        med = mean = mx = float("nan")
    if failures:
        print(f"validate: {len(failures)} of {n} rows failed (counted as failures)")
    max_a = 100 * max(errors_a) if errors_a else float("nan")
    print(f"validate: reliability A: {len(errors_a)} rows, max |err| {max_a:.1f}%")
    print(f"validate: {n} rows, median |err| {med:.1f}%, mean |err| {mean:.1f}%, "
          f"max |err| {mx:.1f}%")
    if failures:
        return 1
    if check and not (med <= check[0] and max_a <= check[1]):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
