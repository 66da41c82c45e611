"""validate_aic.py - compare the detailed fidelity's serving model with
measured deployments in AIConfigurator's silicon format.

Usage (validate.py dispatches here by the header; standalone the same):
    scripts/validate_aic.py [--hf-configs DIR] [--approximate] [--keep DIR]
                            [--csv OUT.csv] [--max-failed N] [--loso-by COLUMN]
                            [--check TPOT TTFT [TOKENS]]
                            FILE.csv...

The format (github ai-dynamo/aiconfigurator, its silicon tables; the data
file's description lists the columns) is recognised by its header: id,
backend, model_path, system, mode, isl, osl, silicon_ttft_ms and
silicon_tpot_ms. Each row is one deployment measured at one concurrency
by a closed-loop client; it becomes a `fidelity = "detailed"` inference
point evaluated by `madsweep eval POINT --json`:
  model     --hf-configs DIR: the row's model_path ORG/NAME read from
            DIR/ORG--NAME_config.json (scripts/hf_config.py: attention
            kinds, output gates, sinks, sparse attention, the parts a
            quantized checkpoint keeps in BF16 included); a field the
            model keys cannot express (hf_config.py lists them) fails the
            row naming the field, unless --approximate maps the nearest
            expressible model and says so per row;
  hardware  the system's catalogue generation by `madsweep list
            hardware`: AIConfigurator names a GPU and its form, `<gpu>_sxm`
            an SXM board, `gb200` the NVL72 rack's GPU; the catalogue
            names that begin with the GPU's name, narrowed to the one that
            names the form when several do;
  stack     the engine and its release line (configs/stacks.cfg):
            vllm -> "vllm", sglang -> "sglang", trtllm -> "trtllm" (the
            PyTorch backend of 1.x); a TensorRT-LLM release 0.5/0.6 ->
            "trtllm-0.6", another 0.x -> "trtllm-engine" (TensorRT engines).
            A row run from an ai-dynamo runtime image
            (nvcr.io/nvidia/ai-dynamo/<engine>-runtime:V) records Dynamo's
            release V as backend_version, not the engine's: Dynamo's
            images carry TensorRT-LLM 1.x (ai-dynamo/aiconfigurator
            generator/config/backend_version_matrix.yaml: Dynamo 0.6.0 ->
            TensorRT-LLM 1.1.0rc5, 0.8.1 -> 1.2.0rc6.post1, 0.9.0 ->
            1.3.0rc1), so such a row is "trtllm" whatever V says;
  layout    AIConfigurator's widths (aic-core sdk/config.py
            ModelConfig.resolve_moe_parallelism): a worker of tp x pp x
            attention_dp GPUs, attention at tensor parallelism tp on each
            of attention_dp ranks, the experts over moe_tp x moe_ep = tp x
            attention_dp GPUs (a width left empty or 0 inferred from the
            other); in madsweep's keys tp = tp x attention_dp, attn_dp =
            attention_dp, ep = moe_ep, etp = moe_tp. A dense model's
            attention_dp ranks are replicas (dp);
  load      concurrency = batch_size x attention_dp requests in flight on
            one worker (agg; batch_size is per attention-DP rank, as
            AIConfigurator's global_bs = bs x attention_dp_size); disagg:
            D = decode_num_workers decode replicas (dp = D) at
            decode_batch_size x decode_attention_dp each, P =
            prefill_num_workers prefill replicas (prefill devices);
            unstated worker counts: one decode worker at the row's
            silicon_concurrency and a rate-matched prefill pool (devices
            = "auto"), said per row;
  precision moe_quant_mode (MoE models) or gemm_quant_mode, else the
            precision column, else the checkpoint's quantization_config:
            fp8 / fp8_block -> "fp8", nvfp4 / mxfp4 -> weights "fp4" with
            FP4 math where the hardware has an FP4 peak (else BF16 math:
            a weight-only kernel), int4_wo -> weights "int4", BF16 math;
            MoE experts in moe_quant_mode beside GEMMs in gemm_quant_mode
            when the two store different precisions (the model's
            expert_weight_precision); parts the checkpoint keeps in BF16
            (gpt-oss's attention) stay so (attn_weight_precision).
            KV cache: FP8 when the weights are FP8 or NVFP4 (ModelOpt's
            NVFP4 and FP8 checkpoints set kv_cache_quant_algo FP8; as
            AIConfigurator's estimator infers, aic-core sdk/models/
            helpers.py _infer_quant_modes_from_raw_config), BF16 for a
            BF16 or MXFP4 (gpt-oss) checkpoint, always written explicitly.
What today's keys cannot write is named per row as missing keys (a row
failure; --approximate evaluates the nearest deployment instead): a
prefill pool's own attn_dp or ep/etp (it takes the decode pool's), and a
prefill pool's batch limit (prefill_batch_size).
Scored separately: TPOT (mean), TTFT (mean; at concurrency it includes
the wait behind other prompts, as the client measures it) and output
tokens/s per GPU (measured: concurrency x OSL / (TTFT + (OSL - 1) TPOT)
over the deployment's GPUs, by Little's law of the closed loop;
predicted: madsweep's output_tokens_per_s_per_device). Prints per row the
predicted and measured figures and signed errors (predicted / measured -
1), then the summary lines, per system, engine, mode and model too:
    validate: TPOT: N rows, median |err| X%, mean |err| Y%, max |err| Z%
    validate: TTFT: ...
    validate: output tokens/s per GPU: ...
    validate: K of M rows failed
--loso-by COLUMN (system: the issue's leave-one-system-out): after the
summary, the catalogue's fitted constants (their fit declarations,
scripts/calibrate.py's machinery; a row's campaign is its source, so a
constant still needs two campaigns) are fitted again without each value
of COLUMN in turn and that value's rows predicted:
    validate: leave-one-system-out: TPOT: N rows, median |err| ...
Nothing is keyed on a row's id, its source or a model's name. Standard
library only.
"""
import csv
import math
import os
import re
import statistics as st
import subprocess
import sys

import hf_config
import measured as rows_mod
import msbatch
import validate_serving
from validate_serving import need, num

HEADER = ("id", "backend", "model_path", "system", "mode", "isl", "osl",
          "silicon_ttft_ms", "silicon_tpot_ms")
# as a schema of scripts/measured.py (calibrate.py's fits, --loso-by): the
# serving file's objectives, deployment totals (tokens/s of the whole
# deployment: concurrency x OSL / e2e by Little's law of the closed loop)
NAME = "aic"
OBJECTIVES = ("measured_output_tokens_per_s", "measured_tpot_ms", "measured_ttft_ms")
WORKLOAD = ("id", "silicon_data_source", "isl", "osl", "batch_size", "prefill_batch_size",
            "decode_batch_size", "silicon_ttft_ms", "silicon_tpot_ms")
# what prepare() maps with: set by main() or calibrate.py (--hf-configs)
OPTIONS = {"hf_dir": None, "approximate": False, "table": None}
STACKS = {"vllm": "vllm", "sglang": "sglang", "trtllm": "trtllm"}
# quant mode -> (stored weights, weight-only): the modes of AIConfigurator's
# common.GEMMQuantMode / MoEQuantMode
QUANT = {"": (None, False), "bfloat16": ("bf16", False), "float16": ("bf16", False),
         "fp8": ("fp8", False), "fp8_block": ("fp8", False), "fp8_static": ("fp8", False),
         "nvfp4": ("fp4", False), "mxfp4": ("fp4", False), "w4a16_mxfp4": ("fp4", True),
         "w4a8_mxfp4_mxfp8": ("fp4", False), "int4_wo": ("int4", True), "w4a16": ("int4", True)}
PRECISION = {"": None, "bf16": "bf16", "fp16": "bf16", "fp8": "fp8", "fp4": "fp4",
             "int4": "int4"}
DYNAMO_IMAGE = re.compile(r"ai-dynamo/([a-z]+)-runtime:(\S+)")
# the engine release in a Dynamo image (ai-dynamo/aiconfigurator@095f58a51
# generator/config/backend_version_matrix.yaml): Dynamo release prefix ->
# {backend: release}
DYNAMO_MATRIX = (("1.0", {"trtllm": "1.3.0rc5.post1", "sglang": "0.5.9", "vllm": "0.16.0"}),
                 ("0.9", {"trtllm": "1.3.0rc1", "sglang": "0.5.8", "vllm": "0.14.1"}),
                 ("0.8", {"trtllm": "1.2.0rc6.post1", "sglang": "0.5.6.post2",
                          "vllm": "0.12.0"}),
                 ("0.7.1", {"trtllm": "1.2.0rc3"}), ("0.7", {"trtllm": "1.2.0rc2"}),
                 ("0.6", {"trtllm": "1.1.0rc5", "sglang": "0.5.3.post2", "vllm": "0.11.0"}))
# the client of the silicon rows: aiperf --concurrency C --num-requests 20 C
# (AIConfigurator generator/config/backend_templates/benchmark/bench_run.sh.j2)
ROUNDS = 20


class Unmappable(validate_serving.Unmappable):
    """A row that cannot be written; missing names the keys it lacks."""

    def __init__(self, why, missing=None):
        super().__init__(why)
        self.missing = missing or []


def is_aic(header):
    return all(k in header for k in HEADER)


def is_schema(fieldnames):
    return is_aic(fieldnames or [])


def campaign(row):
    """The measurement campaign a row comes from (its source for fits and
    leave-one-out): the source file's name, or the database dump."""
    src = (row.get("silicon_data_source") or "").split(";")[0].strip()
    if src.startswith("source_file="):
        return os.path.basename(src[len("source_file="):]) or "?"
    return src.split("/")[0] or "?"


def normalize(cols):
    """measured.Row's columns: every row stated in full (reliability B),
    its campaign as its source."""
    cols["reliability"] = "B"
    cols["source_short"] = campaign(cols)
    cols["front_end"] = "dynamo" if DYNAMO_IMAGE.search(cols.get("silicon_data_source") or "") \
        else "engine"
    cols["point_id"] = cols.get("id") or ""


def measured(cols):
    return {"measured_tpot_ms": need(cols, "silicon_tpot_ms", float),
            "measured_ttft_ms": need(cols, "silicon_ttft_ms", float)}


def prepare(r, ctx):
    """The point text of measured.Row r (OPTIONS' configs and mapping);
    its stack, hardware and info; the deployment's output tokens/s from
    the measured TTFT and TPOT at its concurrency."""
    del ctx
    if OPTIONS["table"] is None:
        OPTIONS["table"] = hardware_table(msbatch.binary())
    text, info = point(r.cols, OPTIONS["hf_dir"], OPTIONS["approximate"], OPTIONS["table"])
    r.stack, r.hw, r.info = info["stack"], info["hw"], info
    osl = need(r.cols, "osl")
    e2e = (r.measured["measured_ttft_ms"] + (osl - 1) * r.measured["measured_tpot_ms"]) / 1e3
    r.measured["measured_output_tokens_per_s"] = info["conc"] * osl / e2e
    return text


def predicted(r, res):
    del r
    return {"measured_output_tokens_per_s": res["output_tokens_per_s"],
            "measured_tpot_ms": 1e3 * res["tpot_s"], "measured_ttft_ms": 1e3 * res["ttft_s"]}


def hardware_table(exe):
    """{name: {"fp8": peak, "fp4": peak}} from `madsweep list hardware`
    (its header names the columns)."""
    proc = subprocess.run([exe, "list", "hardware"], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"validate: madsweep list hardware failed: {proc.stderr.strip()}")
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    # labels are two words ("FP8 TF/s") apart by two or more spaces; a row's
    # values are one word each (a split header put FP4 on the HBM TB/s column)
    head = [h.split()[0] for h in re.split(r"\s{2,}", lines[1].strip())]
    col = {k: head.index(k) for k in ("FP8", "FP4")}
    out = {}
    for ln in lines[2:]:
        f = ln.split()
        out[f[0]] = {"fp8": float(f[col["FP8"]]), "fp4": float(f[col["FP4"]])}
    return out


def hardware_of(system, table):
    """The catalogue generation of an AIConfigurator system name."""
    parts = system.strip().lower().split("_")
    gpu, form = parts[0], parts[1:]
    cands = [n for n in table if n == gpu or n.startswith(gpu + "-")]
    if len(cands) > 1 and form:
        narrowed = [n for n in cands if all(f in n.split("-") for f in form)]
        cands = narrowed or cands
    if len(cands) > 1:
        cands = [n for n in cands if n == gpu] or cands
    if len(cands) != 1:
        raise Unmappable(f"system {system!r}: no single catalogue hardware "
                         f"({', '.join(sorted(cands)) or 'none'})")
    return cands[0]


def release_of(row):
    """The engine's release of a row ("" when not recorded): backend_version,
    or for a Dynamo image the engine release that Dynamo release carries."""
    be = (row.get("backend") or "").strip().lower()
    ver = (row.get("backend_version") or "").strip()
    img = DYNAMO_IMAGE.search(row.get("silicon_data_source") or "")
    if img:
        dyn = img.group(2)
        for prefix, engines in DYNAMO_MATRIX:
            if (dyn == prefix or dyn.startswith(prefix + ".")) and be in engines:
                return engines[be]
        return ""
    return ver if re.match(r"\d+\.\d+", ver) else ""


def launch(be, role, bs, isl):
    """(max_seqs, token_budget) of a worker as AIConfigurator's generator
    launches it (generator/rule_plugin/{trtllm,vllm,sglang}.rule): role agg,
    prefill or decode; bs its batch per attention rank; None where the
    launch leaves the engine's default."""
    if be == "trtllm":
        if role == "prefill":
            return bs or 1, -(-(isl + 500) // 32) * 32
        if role == "decode":
            return bs, None
        return bs, -(-(bs + isl + 500) // 32) * 32
    seqs = (512 if (bs or 0) <= 512 else 2 * bs) if bs else None
    if be == "vllm":
        return seqs, (isl + 1500 if role == "prefill" else None if role == "decode"
                      else (bs or 0) + isl + 1500)
    return seqs, isl + 1500 if role != "decode" else None  # sglang: max_prefill_tokens


def stack_of(row, notes):
    """The serving stack of the row's engine and release line."""
    be = (row.get("backend") or "").strip().lower()
    if be not in STACKS:
        raise Unmappable(f"backend {be!r}: no serving stack")
    ver = (row.get("backend_version") or "").strip()
    img = DYNAMO_IMAGE.search(row.get("silicon_data_source") or "")
    if img:
        notes.append(f"Dynamo {img.group(2)} image")
        return STACKS[be]
    if be == "trtllm" and re.match(r"0\.[56]\b", ver):
        return "trtllm-0.6"
    if be == "trtllm" and ver.startswith("0."):
        return "trtllm-engine"
    return STACKS[be]


class Pool:
    """One worker's layout in AIConfigurator's widths."""

    def __init__(self, row, pre, moe):
        self.tp = need(row, pre + "tp_size")
        self.pp = num(row, pre + "pp_size", int) or 1
        self.adp = num(row, pre + "attention_dp_size", int) or 1
        self.mtp = num(row, pre + "moe_tp_size", int) or 0
        self.mep = num(row, pre + "moe_ep_size", int) or 0
        self.bs = num(row, pre + "batch_size", int)
        self.workers = num(row, pre + "num_workers", int) if pre else 1
        width = self.tp * self.adp
        if moe:
            if not self.mtp and not self.mep:
                self.mtp, self.mep = width, 1
            elif not self.mtp:
                self.mtp = width // self.mep if width % self.mep == 0 else 0
            elif not self.mep:
                self.mep = width // self.mtp if width % self.mtp == 0 else 0
            if self.mtp * self.mep != width:
                raise Unmappable(f"{pre}tp_size {self.tp} x {pre}attention_dp_size {self.adp} "
                                 f"!= {pre}moe_tp_size {self.mtp} x {pre}moe_ep_size {self.mep}")
        self.moe = moe
        self.gpus = self.tp * self.pp * self.adp

    def check(self, m, pre):
        """The attention heads split over tp (a layout recorded otherwise
        cannot have run as written)."""
        heads = m.keys["heads"]
        if heads % self.tp:
            raise Unmappable(f"{pre}tp_size {self.tp} does not divide the {heads} attention "
                             "heads: the layout cannot run as recorded")

    def keys(self):
        """madsweep's tp, attn_dp, ep, etp, dp (a dense model's attention-DP
        ranks are replicas)."""
        if not self.moe:
            return {"tp": self.tp, "pp": self.pp, "dp": self.adp}
        k = {"tp": self.tp * self.adp, "pp": self.pp, "dp": 1}
        if self.adp > 1:
            k["attn_dp"] = self.adp
        if self.mep > 1:
            k.update(ep=self.mep, etp=self.mtp)
        return k


def precision(row, m, table, hw, notes, missing):
    """(math, weights, kv) precisions of the row (the module docstring)."""
    gq = (row.get("gemm_quant_mode") or "").strip().lower()
    mq = (row.get("moe_quant_mode") or "").strip().lower()
    for q in (gq, mq):
        if q not in QUANT:
            raise Unmappable(f"quant mode {q!r} unknown")
    prec = (row.get("precision") or "").strip().lower()
    if prec not in PRECISION:
        raise Unmappable(f"precision {prec!r} unknown")
    w, wonly = QUANT[mq if m.moe and mq else gq]
    w = w or PRECISION[prec] or m.quant.get("weights") or "bf16"
    if m.moe and gq and mq and QUANT[gq][0] != QUANT[mq][0]:
        # experts in their own precision beside the GEMMs'
        m.keys["expert_weight_precision"] = w
        w, wonly = QUANT[gq]
    math = w
    if w in ("int4",) or wonly:
        math = "bf16"
    elif w == "fp4" and not table[hw]["fp4"] > 0:
        math = "bf16"
        notes.append("FP4 weights, BF16 math (no FP4 peak)")
    elif w == "fp8" and not table[hw]["fp8"] > 0:
        math = "bf16"
    kv = "fp8" if w in ("fp8",) or (w == "fp4" and m.quant.get("method") != "mxfp4") else "bf16"
    return math, w, kv


def model_of(row, hf_dir, approximate, notes):
    if not hf_dir:
        raise Unmappable("no model: give --hf-configs DIR")
    path = hf_config.path_for(hf_dir, row["model_path"])
    if not os.path.exists(path):
        raise Unmappable(f"no config {os.path.basename(path)} in {hf_dir}")
    try:
        m = hf_config.read(path)
    except ValueError as e:
        raise Unmappable(str(e))
    if m.unsupported:
        fields = "; ".join(f"{f}: {why}" for f, why in m.unsupported)
        if not approximate:
            raise Unmappable(f"model cannot express {fields}",
                             [f for f, _ in m.unsupported])
        notes.append("approximated: " + ", ".join(f"{f} as {how}" for f, how in m.approx))
    notes.extend(m.notes)
    return m


def point(row, hf_dir, approximate, table):
    """(point text, info) of one row; info holds the concurrency, GPUs,
    mode and notes; Unmappable names what cannot be written."""
    notes, missing = [], []
    mode = (row.get("mode") or "").strip().lower()
    if mode not in ("agg", "disagg"):
        raise Unmappable(f"mode {mode!r}")
    isl, osl = need(row, "isl"), need(row, "osl")
    hw = hardware_of(need(row, "system", str), table)
    stack = stack_of(row, notes)
    m = model_of(row, hf_dir, approximate, notes)
    math, w, kv = precision(row, m, table, hw, notes, missing)
    mlines = hf_config.model_group(m, row["id"][:60], max(4096, isl + osl))
    task = ['  type = "inference";', f'  precision = "{math}";', f'  weight_precision = "{w}";',
            f'  kv_precision = "{kv}";', f"  prompt_tokens = {isl}; decode_tokens = {osl};",
            f"  rounds = {ROUNDS};"]
    src = row.get("silicon_data_source") or ""
    if DYNAMO_IMAGE.search(src):
        task.append('  front_end = "dynamo";')
    be = (row.get("backend") or "").strip().lower()
    rel = release_of(row)
    sc = re.search(r"silicon_concurrency=(\d+)", src)
    sconc = int(sc.group(1)) if sc else None
    info = {"mode": mode, "hw": hw, "stack": stack, "notes": notes, "missing": missing}
    if mode == "agg":
        p = Pool(row, "", m.moe)
        p.check(m, "")
        if not p.bs:
            raise Unmappable("column batch_size is empty")
        conc = p.bs * p.adp
        devices, gpus = p.gpus, p.gpus
        if sconc and sconc != conc:
            notes.append(f"silicon_concurrency {sconc}: {sconc / conc:g} workers of {conc}")
        keys = p.keys()
        seqs, budget = launch(be, "agg", p.bs, isl)
        extra = []
    else:
        d, f = Pool(row, "decode_", m.moe), Pool(row, "prefill_", m.moe)
        d.check(m, "decode_")
        f.check(m, "prefill_")
        if d.workers and d.bs:
            D, conc = d.workers, d.workers * d.bs * d.adp
        elif sconc:
            D, conc = 1, sconc
            notes.append("workers unstated: 1 decode worker, prefill rate-matched")
        else:
            raise Unmappable("decode workers, batch and silicon_concurrency all unstated")
        # a disaggregated deployment runs the steady state: the client's
        # rounds are a colocated closed loop's (the point loader refuses
        # them here; they changed nothing)
        task = [t for t in task if not t.startswith("  rounds =")]
        keys = d.keys()
        keys["dp"] = D * keys.get("dp", 1)
        devices = D * d.gpus
        seqs, budget = launch(be, "decode", d.bs, isl)
        pk = f.keys()
        pseqs, pbudget = launch(be, "prefill", f.bs, isl)
        if f.workers and d.workers:
            pdev = f.workers * f.gpus
            gpus = devices + pdev
        else:
            pdev, gpus = '"auto"', None
        # a dense model's attention-DP ranks are replicas: devices count them
        own = {"attn_dp": pk.get("attn_dp"), "ep": pk.get("ep"), "etp": pk.get("etp"),
               "max_seqs": pseqs, "token_budget": pbudget}
        # workers of fewer GPUs than a node (4-GPU workers on 8-GPU B200
        # nodes, 7 of them: 28 GPUs) keep their NVLink within the worker
        if f.gpus < 8:
            own["devices_per_node"] = f.gpus
        extra = ["prefill = {", f'  hardware = "{hw}"; devices = {pdev}; tp = {pk["tp"]}; '
                 f'pp = {pk["pp"]};'] + [
            "  " + " ".join(f"{k} = {v};" for k, v in own.items() if v)] + ["};"]
    if missing and not approximate:
        raise Unmappable("no key for " + "; ".join(missing), missing)
    if missing:
        notes.append("missing keys approximated: " + "; ".join(missing))
    task.insert(1, "  " + " ".join(f"{k} = {v};" for k, v in keys.items()))
    task.append(f"  concurrency = {conc};")
    task += [f"  {k} = {v};" for k, v in (("max_seqs", seqs), ("token_budget", budget)) if v]
    named = f"{stack}@{rel}" if rel and stack in STACKS.values() else stack
    lines = ['fidelity = "detailed";', f'stack = "{named}";'] + mlines + [
        "system = {", f'  name = "{row["id"][:60]}"; hardware = "{hw}"; devices = {devices};',
        "};", "task = {"] + task + ["};"] + extra
    info.update(conc=conc, gpus=gpus, model=row["model_path"].split("/")[-1])
    return "\n".join(lines) + "\n", info


def stats(xs):
    if not xs:
        return "0 rows"
    return (f"{len(xs)} rows, median |err| {100 * st.median(xs):.1f}%, mean |err| "
            f"{100 * st.fmean(xs):.1f}%, max |err| {100 * max(xs):.1f}%")


def evaluate(rows, eval_points, hf_dir, approximate, table):
    """Per row: a dict of the mapping, the prediction and the errors, or
    of the reason it failed. eval_points([(id, text)]) -> [(result, why)]
    evaluates every mapped row in one pass (one `madsweep eval --batch`)."""
    outs, todo = [], []
    for i, row in enumerate(rows):
        out = {"row": row, "id": row.get("id", "?")}
        outs.append(out)
        try:
            text, info = point(row, hf_dir, approximate, table)
            out.update(info)
            out["ttft_m"] = need(row, "silicon_ttft_ms", float)
            out["tpot_m"] = need(row, "silicon_tpot_ms", float)
            for k in ("ttft_m", "tpot_m"):  # a 0 divided by zero; NaN, inf, <0 scored
                if not (math.isfinite(out[k]) and out[k] > 0):
                    raise validate_serving.Unmappable(
                        f"silicon_{k[:4]}_ms = {out[k]!r} is no measurement (a finite "
                        "number > 0)")
        except validate_serving.Unmappable as e:  # need/num raise the serving one
            out["failed"] = f"unmappable: {e}"
            out["missing"] = getattr(e, "missing", [])
            continue
        todo.append((out, f"r{i:05d}_" + re.sub(r"[^A-Za-z0-9_.-]", "_", out["id"])[:60], text))
    answers = eval_points([(pid, text) for _, pid, text in todo])
    for (out, _, _), (res, why) in zip(todo, answers):
        if res is None:
            out["failed"] = why
            continue
        osl = need(out["row"], "osl")
        out["ttft"], out["tpot"] = 1e3 * res["ttft_s"], 1e3 * res["tpot_s"]
        out["tok"] = res["output_tokens_per_s_per_device"]
        if out["gpus"]:
            out["tok_m"] = (out["conc"] * osl / ((out["ttft_m"] + (osl - 1) * out["tpot_m"]) / 1e3)
                            / out["gpus"])
        cmax = res.get("concurrency_max")
        if cmax and cmax < out["conc"] and out["mode"] == "agg":
            out["notes"].append(f"KV admits {cmax} of {out['conc']}")
        out["res"] = res
    return outs


def errors(r):
    e = {}
    for k in ("ttft", "tpot", "tok"):
        if k in r and r.get(k + "_m"):
            e[k] = r[k] / r[k + "_m"] - 1.0
    return e


def report(results):
    """Prints the rows and the summary lines; returns the failures."""
    print(f"{'id':<44} {'system':<8} {'engine':<13} {'mode':<6} {'conc':>5} "
          f"{'tpot_ms':>8} {'meas':>7} {'err':>7} {'ttft_ms':>8} {'meas':>8} {'err':>7} "
          f"{'tok/s/gpu':>9} {'meas':>8} {'err':>7}  notes")
    groups, failed = {}, []
    for r in results:
        if "failed" in r:
            failed.append(r)
            continue
        e = errors(r)
        tok = (f"{r['tok']:9.1f} {r.get('tok_m', float('nan')):8.1f} "
               f"{100 * e.get('tok', float('nan')):+6.1f}%")
        print(f"{r['id'][:44]:<44} {r['row']['system'][:8]:<8} {r['stack']:<13} "
              f"{r['mode']:<6} {r['conc']:5d} {r['tpot']:8.2f} {r['tpot_m']:7.2f} "
              f"{100 * e['tpot']:+6.1f}% {r['ttft']:8.1f} {r['ttft_m']:8.1f} "
              f"{100 * e['ttft']:+6.1f}% {tok}  {'; '.join(r['notes']) or '-'}")
        for g in ("", "system " + r["row"]["system"], "engine " + r["stack"], "mode " + r["mode"],
                  "model " + r["model"]):
            for k, v in e.items():
                groups.setdefault(g, {}).setdefault(k, []).append(abs(v))
    for r in failed:
        print(f"{r['id'][:60]:<60} FAILED: {r['failed']}")
    names = {"tpot": "TPOT", "ttft": "TTFT", "tok": "output tokens/s per GPU"}
    for g in sorted(k for k in groups if k):
        for k in ("tpot", "ttft", "tok"):
            print(f"validate: {g}: {names[k]}: {stats(groups[g].get(k, []))}")
    for k in ("tpot", "ttft", "tok"):
        print(f"validate: {names[k]}: {stats(groups.get('', {}).get(k, []))}")
    print(f"validate: {len(failed)} of {len(results)} rows failed")
    return failed


def write_csv(path, results):
    cols = ["id", "system", "engine", "mode", "model", "isl", "osl", "conc", "gpus", "tpot",
            "tpot_m", "ttft", "ttft_m", "tok", "tok_m", "failed", "missing", "notes"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols + ["res_" + k for k in ("concurrency_max", "mem_total_bytes_per_device",
                                                "kv_use", "prefill_decode_rate_ratio",
                                                "kv_transfer_exposed_s", "ttft_wave_max_s",
                                                "itl_p99_s")])
        for r in results:
            row, res = r["row"], r.get("res") or {}
            w.writerow([r["id"], row.get("system"), r.get("stack", row.get("backend")),
                        row.get("mode"), row.get("model_path", "").split("/")[-1],
                        row.get("isl"), row.get("osl"), r.get("conc"), r.get("gpus")] +
                       [r.get(k) for k in ("tpot", "tpot_m", "ttft", "ttft_m", "tok", "tok_m",
                                           "failed")] +
                       ["|".join(r.get("missing") or []), "; ".join(r.get("notes") or [])] +
                       [res.get(k) for k in ("concurrency_max", "mem_total_bytes_per_device",
                                             "kv_use", "prefill_decode_rate_ratio",
                                             "kv_transfer_exposed_s", "ttft_wave_max_s",
                                             "itl_p99_s")])


def run(rows, eval_points, exe, hf_dir=None, approximate=False, csv_out=None,
        check=None, max_failed=0):
    """validate.py's entry: rows of an AIConfigurator file, eval_points([(pid,
    text)]) -> [(result, None) or (None, why)]. Exit status 1 when more than
    max_failed rows fail, or when --check TPOT TTFT [TOKENS] (medians, %)
    is not met."""
    results = evaluate(rows, eval_points, hf_dir, approximate, hardware_table(exe))
    failed = report(results)
    if csv_out:
        write_csv(csv_out, results)
    if check:
        e = [errors(r) for r in results if "failed" not in r]
        med = [100 * st.median([abs(x[k]) for x in e if k in x] or [float("inf")])
               for k in ("tpot", "ttft", "tok")]
        if any(m > c for m, c in zip(med, check)):
            return 1
    return 1 if len(failed) > max_failed else 0


def loso_by(files, key):
    """--loso-by KEY: the catalogue's fitted constants fitted again on the
    rows of all but one value of column KEY (system: each GPU system
    predicted from fits on the others) through calibrate.py's machinery;
    prints the leave-one-out lines in the summary's form, per value too;
    returns the TPOT |errors|."""
    import calibrate
    cat = msbatch.catalogue()
    ctx = rows_mod.Context(cat)
    rows, _ = rows_mod.read(files, ctx)
    names = {"measured_tpot_ms": "TPOT", "measured_ttft_ms": "TTFT",
             "measured_output_tokens_per_s": "output tokens/s"}
    with msbatch.Batch() as batch:
        fitter = calibrate.Fitter(batch, ctx, rows, calibrate.decls_of(cat))
        _, folds, missing = calibrate.cv_fit(fitter, lambda r: (r.cols.get(key) or "?").strip(),
                                             list(OBJECTIVES))
    for obj in ("measured_tpot_ms", "measured_ttft_ms", "measured_output_tokens_per_s"):
        for g, errs in sorted(folds[obj].items()):
            print(f"validate: leave-one-{key}-out: {key} {g}: {names[obj]}: "
                  f"{stats([abs(e) for e in errs])}")
    for obj in ("measured_tpot_ms", "measured_ttft_ms", "measured_output_tokens_per_s"):
        allerr = [abs(e) for g in folds[obj].values() for e in g]
        print(f"validate: leave-one-{key}-out: {names[obj]}: {stats(allerr)}")
    for pid, obj in missing[:20]:
        print(f"validate: leave-one-{key}-out: {pid}: no {names[obj]} prediction")
    return [abs(e) for g in folds["measured_tpot_ms"].values() for e in g]


def main(argv):
    args = argv[1:]
    opts = {"hf_dir": None, "approximate": False, "csv_out": None, "keep": None,
            "max_failed": 0}
    loso_key = None
    take = rows_mod.take_option
    v = take(args, "--check", 2, float, 1, "TPOT TTFT [TOKENS] (median |err| limits, %)")
    if v:
        opts["check"] = tuple(v)
    v = take(args, "--loso-by", 1, what="a column")
    if v:
        loso_key = v[0]
    for flag, key, conv, what in (("--hf-configs", "hf_dir", str, "a directory"),
                                  ("--csv", "csv_out", str, "a path"),
                                  ("--keep", "keep", str, "a directory"),
                                  ("--max-failed", "max_failed", int, "a count of rows")):
        v = take(args, flag, 1, conv, 0, what)
        if v:
            opts[key] = v[0]
    if "--approximate" in args:
        args.remove("--approximate")
        opts["approximate"] = True
    if not args:
        sys.exit(__doc__.split("\n\n")[1])
    rows = []
    for name in args:
        try:
            with open(name, newline="", encoding="utf-8-sig") as f:
                r = csv.DictReader(f)
                rows_mod.check_header(name, r.fieldnames)
                if not is_aic(r.fieldnames or []):
                    rows_mod.bad_input(
                        f"{name}: not AIConfigurator's silicon format (header lacks "
                        f"{', '.join(k for k in HEADER if k not in (r.fieldnames or []))})")
                n0 = len(rows)
                rows.extend(r)
                if len(rows) == n0:
                    rows_mod.bad_input(f"{name}: a header and no rows")
        except UnicodeDecodeError as e:
            rows_mod.bad_input(f"{name}: not UTF-8 text (byte {e.start}: {e.reason})")
        except OSError as e:
            rows_mod.bad_input(f"{name}: {e.strerror}")
    keep = opts.pop("keep")
    exe = msbatch.binary()
    OPTIONS.update(hf_dir=opts["hf_dir"], approximate=opts["approximate"])

    def eval_points(points):
        if keep:
            os.makedirs(keep, exist_ok=True)
            for pid, text in points:
                with open(os.path.join(keep, f"{pid}.cfg"), "w") as out:
                    out.write(text)
        with msbatch.Batch() as batch:
            res = batch.eval(points)
        return [(None, why) if why else (r, None) for r, why in
                ((r, rows_mod.failure(r)) for r in res)]
    rc = run(rows, eval_points, exe, **opts)
    if loso_key:
        loso_by(args, loso_key)
    return rc
