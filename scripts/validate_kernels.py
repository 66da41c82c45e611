#!/usr/bin/env python3
"""validate_kernels.py - the kernel layer (cost/kernel/) against measured kernels.

Usage: scripts/validate_kernels.py [--loso] [--check MEDIAN LOSO_MEDIAN] [--rows]
                                   [--cap N] [--fit] FILE_OR_DIR...

FILE is a kernel table: the shared kernels/ files gemm.csv, attention.csv,
collectives.csv (recognised by their first column: kernel_id, coll_id) or
AIConfigurator per-operator tables (*.csv.gz, recognised by their header's
`latency` column; a directory is searched for them). Every row becomes one
or more kernel lines of `madsweep kernel --batch` (a row whose time covers
several kernels, e.g. forward + backward, is their sum); all rows are
evaluated in one process. A row that cannot be modelled is listed with its
reason (AIConfigurator tables: counted per reason).

All rows are sent once to the process (`+`/`&` lines) and evaluated by
`eval` under each trial set of constants. The constants and the back
ends' factors of configs/kernels.cfg are refitted here (fit(): stage by
stage, Levenberg-Marquardt on log(predicted/measured) under a robust
pseudo-Huber loss, log-space parameters within their ranges, a weak
prior toward the start; deterministic). Sources, under the calibration
issue's rules: a shared table's `source_short`, and each AIConfigurator
table folder gpu/op/engine/version is a source of its own. A constant or
back-end field is fitted only when the rows that inform it span >= 2 GPUs
and >= 2 sources; else it keeps its prior (a constant its catalogue
value, a back end 1, 1, 0). A row's back end (the library or engine path
that ran it) comes from the row's own label (aic_backend, csv_backend).
Prints the in-sample figures (fitted to all rows given) in the usual
summary form, then with --loso the leave-one-GPU-out figures (each GPU
predicted with constants fitted without it), both overall and per kernel
family:
    validate: N rows, median |err| X%, mean |err| Y%, max |err| Z%
    validate: leave-one-GPU-out: N rows, median |err| X%, ...
    validate: family F: ... / validate: leave-one-GPU-out: family F: ...
Reliability C rows are printed and not counted. AIConfigurator tables
hold ~100k rows each: at most --cap rows (default 1000) of each file are
taken, every ceil(rows/cap)-th line (deterministic); fits use at most 150
rows per file and family of those. --fit prints the fitted constants and
back ends as the whole of configs/kernels.cfg. --check exits 1 unless the in-sample median <= MEDIAN
and the leave-one-GPU-out median <= LOSO_MEDIAN (percent).
Standard library only.
"""
import csv
import glob
import gzip
import math
import os
import re
import statistics as st
import subprocess
import sys
import threading

import measured

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The data files' GPU names -> catalogue names (hardware.cfg); a name the
# catalogue has is used as it is. AIConfigurator's folder names and the
# shared tables' short names for parts whose catalogue entry is longer.
GPU_ALIASES = {"h100_sxm": "h100-sxm-80g", "h100": "h100-sxm-80g", "h200_sxm": "h200",
               "b200_sxm": "b200", "gb200": "gb200-nvl72", "a100_sxm": "a100-80g",
               "h800-sxm": "h800"}

# The constants each family's rows inform (the fit's stages, in order).
STAGES = [
    ("gemm", ["gemm_eff", "gemm_eff_fp8", "gemm_eff_fp4", "gemm_block_promote", "gemm_tail",
              "mem_eff", "overlap", "floor_s", "quant_floor_s", "wo_dequant",
              "l2_bytes_per_clk"]),
    ("moe", ["moe_floor_s", "moe_passes"]),
    ("attn", ["attn_eff", "attn_dec_eff", "attn_split", "attn_fill", "attn_floor_s",
              "attn_cta_s", "attn_kv0"]),
    ("coll", ["coll_base_s", "coll_hop_ll_s", "coll_hop_ll128_s", "coll_hop_simple_s",
              "coll_link_eff", "coll_nvls_eff", "coll_pcie_eff", "coll_custom_s",
              "coll_nic_eff", "coll_net_s", "coll_nvls_s",
              "launch_event_s", "launch_python_s"]),
]
# Which rows inform a constant (beyond its stage): a predicate on the row.
INFORMS = {
    "gemm_eff_fp8": lambda r: r.fmt in ("fp8", "mxfp8", "int8", "fp8_block"),
    "gemm_eff_fp4": lambda r: r.fmt == "nvfp4",
    "gemm_block_promote": lambda r: r.fmt == "fp8_block",
    "quant_floor_s": lambda r: r.quant,
    "wo_dequant": lambda r: r.fmt in ("int8_wo", "int4_wo", "w4a16_mxfp4", "w4a8_mxfp4_mxfp8"),
    "coll_nvls_eff": lambda r: r.family == "all-reduce",
    "coll_nvls_s": lambda r: r.family == "all-reduce",
    "coll_pcie_eff": lambda r: r.gpu == "l40s" or r.gpu.startswith("h100-pcie"),
    "coll_custom_s": lambda r: r.family == "custom all-reduce",
    "coll_nic_eff": lambda r: r.nodes > 1,
    "coll_net_s": lambda r: r.nodes > 1,
    "launch_event_s": lambda r: r.timing == "event",
    "launch_python_s": lambda r: r.timing == "python",
}
FAMILY_STAGE = {"dense GEMM": "gemm", "grouped GEMM": "gemm", "fused MoE": "moe",
                "decode attention": "attn", "prefill attention": "attn",
                "MLA decode": "attn", "MLA prefill": "attn", "all-reduce": "coll",
                "all-gather": "coll", "reduce-scatter": "coll", "all-to-all": "coll",
                "custom all-reduce": "coll"}


class Unmodelled(Exception):
    pass


class Row:
    """One measured kernel: its kernel lines (summed), time, family, the
    source it comes from (a shared table's source_short; an
    AIConfigurator table folder gpu/op/engine/version), the back end
    that ran it ('' = the generic kernel) and how it was timed (timing:
    graph, event or python, the harness's per-call floor)."""
    __slots__ = ("rid", "rel", "gpu", "family", "lines", "measured", "fmt", "quant",
                 "nodes", "file", "fit", "source", "backend", "idx", "timing")

    def __init__(self, rid, rel, gpu, family, lines, measured, file, fmt="", quant=False,
                 nodes=1, source="", backend="", timing="graph"):
        self.rid, self.rel, self.gpu, self.family = rid, rel, gpu, family
        self.lines, self.measured, self.file = lines, measured, file
        self.fmt, self.quant, self.nodes = fmt, quant, nodes
        self.source, self.backend = source or file, backend
        if backend:
            self.lines = [ln + f" backend={backend}" for ln in lines]
        self.timing = timing
        if timing != "graph":
            self.lines = [ln + f" timing={timing}" for ln in self.lines]
        self.fit = True
        self.idx = -1


def binary():
    """The madsweep binary, found as validate.py finds it (msbatch.py)."""
    import msbatch
    return msbatch.binary()


def catalogue_gpus(configs):
    """Names of hardware.cfg entries (read from the file, not a list here)."""
    names = set()
    with open(os.path.join(configs, "hardware.cfg")) as f:
        for line in f:
            s = line.strip()
            if s.startswith("name = \""):
                names.add(s.split('"')[1])
    return names


def gpu_name(text, known):
    t = text.strip().lower()
    if t in known:
        return t
    alias = GPU_ALIASES.get(t)
    if alias in known:
        return alias
    raise Unmodelled(f"gpu {text!r} is not in the catalogue")


def num(row, key):
    text = (row.get(key) or "").strip()
    if not text:
        raise Unmodelled(f"column {key} is empty")
    try:
        return float(text)
    except ValueError:
        raise Unmodelled(f"column {key}: {text!r}")


def opt(row, key, default):
    text = (row.get(key) or "").strip()
    return float(text) if text else default


def gemm_line(gpu, m, n, k, groups, fmt, quant=0, reuse=0):
    if m < 1:  # fewer rows than groups: the groups that get one
        groups, m = max(1.0, groups * m), 1.0
    return (f"gpu={gpu} kind=gemm m={m:g} n={n:g} k={k:g} groups={groups:g} dtype={fmt} "
            f"quant={quant} reuse={reuse}")


def harness_reuse(notes):
    """Operand copies a benchmark cycles through, from the row's notes:
    replicated weights (AIConfigurator: 5), no L2 flush (1: the same
    operands every call), else 0 (flushed or unknown: cold)."""
    n = notes.lower()
    if "replicated up to 5x" in n:
        return 5
    if "no l2 flush" in n or "no explicit l2 flush" in n or "did not flush l2" in n:
        return 1
    return 0


def harness_timing(text):
    """How a shared-table row was timed, from its notes and library
    (kern_timing): `python` for Python-driven loops (PyTorch benchmark
    scripts such as all_reduce_bench.py, per-call CUDA events),
    `event` for event-timed loops without graphs (nccl-tests, rccl-tests,
    FlashInfer's --no_cuda_graph runs), else `graph` (CUDA-graph replay,
    CUPTI, profiler or nvbench kernel time, or a method not stated: no
    launch floor)."""
    t = text.lower()
    if "run with --no_cuda_graph" in t or "was run with --no_cuda_graph" in t:
        return "event"
    if "all_reduce_bench" in t or "cuda-event timing per call" in t:
        return "python"
    if any(k in t for k in ("nccl-tests", "rccl-tests", "all_reduce_perf")):
        return "event"
    return "graph"


def harness_clock(notes):
    """The SM clock (Hz) a row states it ran at (locked, or sustained
    under a power cap), or None (the catalogue's clock)."""
    m = re.search(r"(?:locked|sustained|sm clock)[^;]*?(\d+(?:\.\d+)?)\s*(mhz|ghz)",
                  notes.lower())
    if not m:
        return None
    return float(m.group(1)) * (1e6 if m.group(2) == "mhz" else 1e9)


def with_harness(r, row, clocks):
    """Row r of a shared table with its harness (timing, stated clock; a
    row 'same run as' an earlier one of its source takes that one's
    clock, kept in clocks: source -> Hz)."""
    text = " ".join(row.get(k) or "" for k in ("library", "library_version", "notes"))
    r.timing = harness_timing(text)
    notes = row.get("notes") or ""
    clk = harness_clock(notes)
    if clk:
        clocks[r.source] = clk
    elif "same run as" in notes.lower():
        clk = clocks.get(r.source)
    suffix = (f" timing={r.timing}" if r.timing != "graph" else "") + \
             (f" clock_hz={clk:g}" if clk else "")
    r.lines = [ln + suffix for ln in r.lines]
    return r


# ---- the shared kernels/ tables -------------------------------------------------

def map_gemm_csv(row, known, fname):
    gpu = gpu_name(row["gpu"], known)
    fmt = (row.get("dtype") or "").strip()
    fmts = {"bf16": "bf16", "fp8_e4m3_pertensor": "fp8", "fp8_e4m3_rowwise": "fp8",
            "fp8_e4m3_blk128": "fp8_block", "fp8_e4m3fnuz_blk128": "fp8_block",
            "mxfp8": "mxfp8", "nvfp4": "nvfp4"}
    if fmt not in fmts:
        raise Unmodelled(f"dtype {fmt!r}")
    fmt = fmts[fmt]
    g, m, n, k = num(row, "groups"), num(row, "m_per_group"), num(row, "n"), num(row, "k")
    layout = row.get("layout") or ""
    ru = harness_reuse(row.get("notes") or "")
    flops = 2 * g * m * n * k
    if (row.get("measured_time_us") or "").strip():
        t = num(row, "measured_time_us") * 1e-6
    else:
        t = flops / (num(row, "measured_tflops") * 1e12)
    family = "dense GEMM" if row["op"] == "gemm" else "grouped GEMM"
    if layout.startswith("fused MoE layer"):
        # FC1 n = 2 x inter (gate + up), k = hidden; g local experts, m rows each
        line = (f"gpu={gpu} kind=moe tokens={m * g:g} hidden={k:g} inter={n / 2:g} topk=1 "
                f"experts={g:g} dtype={fmt}")
        return Row(row["kernel_id"], row["reliability"], gpu, "fused MoE", [line], t, fname,
                   fmt, source=row["source_short"], backend=csv_backend(row, fmt))
    if layout.startswith("fused MoE stage"):
        raise Unmodelled("one stage of a fused MoE (gather/activation inside): no stage model")
    if "forward+backward" in layout or "fwd+dgrad+wgrad" in layout:
        lines = [gemm_line(gpu, m, n, k, g, fmt, 0, ru), gemm_line(gpu, m, k, n, g, fmt, 0, ru),
                 gemm_line(gpu, n, k, m, g, fmt, 0, ru)]
    elif "weight gradient" in layout:
        lines = [gemm_line(gpu, n, k, m, g, fmt, 0, ru)]
    else:
        lines = [gemm_line(gpu, m, n, k, g, fmt, 0, ru)]
    return Row(row["kernel_id"], row["reliability"], gpu, family, lines, t, fname, fmt,
               source=row["source_short"], backend=csv_backend(row, fmt))


def map_attention_csv(row, known, fname):
    gpu = gpu_name(row["gpu"], known)
    phase = row["phase"]
    if phase == "train_bwd":
        raise Unmodelled("attention backward: no backward model")
    if not (row.get("batch") or "").strip():
        raise Unmodelled("no shape ('up to' figure)")
    b, sq, skv = num(row, "batch"), num(row, "seq_q"), num(row, "seq_kv")
    hq, hkv, hd = num(row, "heads_q"), num(row, "heads_kv"), num(row, "head_dim")
    mla = hkv == 1 and hd == 576
    kvb = 1 if "fp8" in (row.get("kv_dtype") or "") else 2
    if phase == "decode":
        if sq > 1 and not mla:
            raise Unmodelled(f"decode with {sq:g} queries per sequence")
        vd = 512 if mla else hd
        # a row whose seq_kv is the maximum of uniformly drawn lengths (its
        # notes say so): the mean context is half of it
        ctx = max(skv - 1, 0)
        if "mean context is ~half" in (row.get("notes") or ""):
            ctx = skv / 2
        line = (f"gpu={gpu} kind=attn phase=decode batch={b:g} ctx={ctx:g} "
                f"heads_q={hq * sq:g} heads_kv={hkv:g} head_dim={hd:g} v_dim={vd:g} "
                f"kv_bytes={kvb} mla={int(mla)}")
        fam = "MLA decode" if mla else "decode attention"
        pairs = b * hq * sq * skv
        bytes_ = b * skv * hkv * (hd if mla else 2 * hd) * kvb
    else:
        if mla:
            raise Unmodelled("MLA prefill figure without its decompressed shape")
        causal = (row.get("causal") or "1").strip() != "0"
        fp8 = 1 if (row.get("dtype") or "").startswith("fp8") else 0
        ctx = max(skv - sq, 0)
        line = (f"gpu={gpu} kind=attn phase=prefill batch={b:g} seq={sq:g} ctx={ctx:g} "
                f"heads_q={hq:g} heads_kv={hkv:g} head_dim={hd:g} kv_bytes={kvb} "
                f"fp8_math={fp8} causal={int(causal)}")
        fam = "prefill attention"
        pairs = b * hq * sq * (ctx + (sq + 1) / 2 if causal else skv)
        bytes_ = 0
    if (row.get("measured_time_us") or "").strip():
        t = num(row, "measured_time_us") * 1e-6
    elif (row.get("measured_tflops") or "").strip():
        t = 2 * pairs * (hd + (512 if mla else hd)) / (num(row, "measured_tflops") * 1e12)
    elif bytes_ and (row.get("measured_gbps") or "").strip():
        t = bytes_ / (num(row, "measured_gbps") * 1e9)
    else:
        raise Unmodelled("no time, rate or bandwidth")
    return Row(row["kernel_id"], row["reliability"], gpu, fam, [line], t, fname,
               source=row["source_short"], backend=csv_backend(row))


COLL_FAMILY = {"all_reduce": "all-reduce", "all_gather": "all-gather",
               "reduce_scatter": "reduce-scatter", "alltoall": "all-to-all"}


def bus_factor(op, n):
    return 2 * (n - 1) / n if op == "all_reduce" else (n - 1) / n


def map_coll_csv(row, known, fname):
    gpu = gpu_name(row["gpu"], known)
    op = row["collective"]
    n, nodes = num(row, "gpus"), opt(row, "nodes", 1)
    per = opt(row, "gpus_per_node", n / nodes)
    size = num(row, "message_bytes")
    if (row.get("measured_time_us") or "").strip():
        t = num(row, "measured_time_us") * 1e-6
    elif (row.get("measured_algbw_gbs") or "").strip():
        t = size / (num(row, "measured_algbw_gbs") * 1e9)
    else:
        t = size * bus_factor(op, n) / (num(row, "measured_busbw_gbs") * 1e9)
    algo = (row.get("algorithm") or "").strip().lower()
    proto = (row.get("protocol") or "").strip().lower()
    algo = algo if algo in ("ring", "nvls") and nodes == 1 else "auto"
    proto = proto if proto in ("ll", "ll128", "simple") and algo == "ring" else "auto"
    line = (f"gpu={gpu} kind=coll op={op} bytes={size:g} gpus={n:g} gpus_per_node={per:g} "
            f"algo={algo} proto={proto}")
    return Row(row["coll_id"], row["reliability"], gpu, COLL_FAMILY[op], [line], t, fname,
               nodes=nodes, source=row["source_short"], backend=csv_backend(row))


# ---- AIConfigurator tables -----------------------------------------------------

AIC_FMT = {"bfloat16": "bf16", "float16": "bf16", "fp8": "fp8", "fp8_block": "fp8_block",
           "nvfp4": "nvfp4", "int8_wo": "int8_wo", "int4_wo": "int4_wo", "sq": "int8",
           "w4a16_mxfp4": "w4a16_mxfp4", "w4a8_mxfp4_mxfp8": "w4a8_mxfp4_mxfp8"}


def aic_gemm(row, gpu):
    fmt = AIC_FMT.get(row["gemm_dtype"])
    if not fmt:
        raise Unmodelled(f"gemm_dtype {row['gemm_dtype']}")
    if row["framework"].lower() == "vllm" and fmt == "fp8_block":
        raise Unmodelled("vLLM fp8_block GEMMs are timed eagerly (host launch floor)")
    m, n, k = float(row["m"]), float(row["n"]), float(row["k"])
    quant = int(fmt not in ("bf16", "int8_wo", "int4_wo"))
    # weight copies the collector cycles (aic README, gemm section):
    # TensorRT-LLM 5, SGLang and vLLM 6, vLLM nvfp4 one
    fw = row["framework"].lower()
    reuse = 5 if fw == "trtllm" else 1 if fmt == "nvfp4" and fw == "vllm" else 6
    return ("dense GEMM", [gemm_line(gpu, m, n, k, 1, fmt, quant, reuse)], fmt,
            bool(quant))


def aic_moe(row, gpu):
    fmt = AIC_FMT.get(row["moe_dtype"])
    if not fmt:
        raise Unmodelled(f"moe_dtype {row['moe_dtype']}")
    if row["distribution"] != "balanced":
        raise Unmodelled("power-law routing (the measured rank's load is drawn at random)")
    gated = 0 if "nongated" in row["kernel_source"] else 1
    line = (f"gpu={gpu} kind=moe tokens={row['num_tokens']} hidden={row['hidden_size']} "
            f"inter={row['inter_size']} topk={row['topk']} experts={row['num_experts']} "
            f"tp={row['moe_tp_size']} ep={row['moe_ep_size']} dtype={fmt} gated={gated}")
    return "fused MoE", [line], fmt, False


def aic_attn(row, gpu, decode):
    kvb = 1 if row["kv_cache_dtype"] == "fp8" else 2
    win = row.get("window_size") or "0"
    common = (f"gpu={gpu} kind=attn batch={row['batch_size']} heads_q={row['num_heads']} "
              f"heads_kv={row['num_key_value_heads']} head_dim={row['head_dim']} "
              f"kv_bytes={kvb} window={win} reuse=1")
    if decode:
        return "decode attention", [common + f" phase=decode ctx={row['step']}"], "", False
    fp8 = int(row.get("attn_dtype") == "fp8")
    return ("prefill attention",
            [common + f" phase=prefill seq={row['isl']} ctx={row['step']} fp8_math={fp8}"],
            "", False)


def aic_mla(row, gpu, decode):
    if row["framework"].lower() == "vllm" and row["version"].startswith("0.14"):
        raise Unmodelled("vLLM 0.14 MLA kernels: 4-8x the other engines' time on the same "
                         "GPU and shape (a non-absorbed software path the layer does not model)")
    kvb = 1 if row["kv_cache_dtype"] == "fp8" else 2
    h = row["num_heads"]
    if decode:
        return ("MLA decode", [f"gpu={gpu} kind=attn phase=decode batch={row['batch_size']} "
                               f"ctx={row['step']} heads_q={h} heads_kv=1 head_dim=576 "
                               f"v_dim=512 kv_bytes={kvb} mla=1 reuse=1"], "", False)
    return ("MLA prefill", [f"gpu={gpu} kind=attn phase=prefill batch={row['batch_size']} "
                            f"seq={row['isl']} ctx={row['step']} heads_q={h} heads_kv={h} "
                            f"head_dim=192 v_dim=128 kv_bytes={kvb} reuse=1"], "", False)


def aic_nccl(row, gpu):
    op = row["op_name"]
    elt = 2 if row["nccl_dtype"] == "half" else 1
    size = float(row["message_size"]) * elt
    n = row["num_gpus"]
    return (COLL_FAMILY[op], [f"gpu={gpu} kind=coll op={op} bytes={size:g} gpus={n} "
                              f"elt_bytes={elt}"], "", False)


def aic_custom(row, gpu):
    be = row.get("backend") or ""
    if be.endswith("_eager"):
        raise Unmodelled("eager custom all-reduce (host launch overhead inside)")
    size = float(row["message_size"]) * 2
    return ("custom all-reduce", [f"gpu={gpu} kind=coll op=all_reduce algo=custom "
                                  f"bytes={size:g} gpus={row['num_gpus']}"], "", False)


# ---- back ends -------------------------------------------------------------------
# A row's back end: the library or engine path whose kernel its time is,
# from the row's own label (AIConfigurator's kernel_source, written by its
# collector from the engine's dispatch: collector/<engine>/collect_*.py at
# the commit in aic/README.md; the shared tables' `library`). The generic
# kernel of each family (no back end) is the one every GPU has: cuBLAS
# through torch's F.linear for BF16 GEMMs (every engine's unquantized
# Linear), TensorRT-LLM's own attention, MLA and CUTLASS MoE ops, NCCL, and
# TensorRT-LLM's custom all-reduce. A back end's factors are fitted only
# from rows of >= 2 GPUs and >= 2 sources (else it keeps its prior 1, 1, 0).

MOE_PATHS = ["flashinfer_trtllm", "flashinfer_cutlass", "oaitriton", "fused_moe_triton",
             "triton", "marlin", "deepgemm", "cutlass", "min_latency", "nongated"]


def _ks(text):
    """A kernel_source label, shortened to the kernel path it names (an
    engine's MoE label: the first of MOE_PATHS it holds; vLLM's labels are
    quant method, path and expert class: the path is kept)."""
    t = text.lower().replace("_situ_as_silu", "")
    if "moe" in t:
        for path in MOE_PATHS:
            if path in t:
                return path.replace("_", "-")
    for pre in ("sglang_", "vllm_", "moe_torch_flow_", "moe_"):
        if t.startswith(pre):
            t = t[len(pre):]
    return t.replace("_", "-").replace(".", "-")


def aic_backend(table, engine, rec):
    """The back end of an AIConfigurator row ('' = generic)."""
    ks = rec.get("kernel_source") or ""
    if table == "gemm_perf":
        d = AIC_FMT.get(rec["gemm_dtype"], rec["gemm_dtype"])
        if d == "bf16":
            return ""
        if engine == "trtllm":
            if d == "fp8_block":
                return "trtllm-deepgemm" if ks == "deepgemm" else "trtllm-fp8-block"
            return {"fp8": "trtllm-fp8", "nvfp4": "trtllm-nvfp4", "int8_wo": "trtllm-wo",
                    "int4_wo": "trtllm-wo", "int8": "trtllm-sq"}.get(d, f"trtllm-{d}")
        if d == "fp8":
            return "cutlass-fp8"  # vLLM cutlass_scaled_mm, sgl-kernel fp8_scaled_mm
        if d == "nvfp4":
            return "flashinfer-cutedsl-nvfp4"
        if d == "fp8_block":
            return f"{engine}-deepgemm"
        return f"{engine}-{d}"
    if table == "moe_perf":
        d = AIC_FMT.get(rec["moe_dtype"], rec["moe_dtype"])
        k = _ks(ks)
        if engine == "trtllm" and k in ("cutlass", "moe-torch-flow", "torch-flow") \
                and d == "bf16":
            return ""
        return f"{engine}-moe-{k}-{d}"
    # TensorRT-LLM 1.0 (A100, L40S) ran its own attention and MLA kernels
    # for pre-Hopper parts (no XQA/FlashMLA path on sm80/sm89): a back end
    # of its own, named by the release
    v10 = engine == "trtllm" and (rec.get("version") or "").startswith("1.0")
    if table in ("context_attention_perf", "generation_attention_perf"):
        phase = "prefill" if table.startswith("context") else "decode"
        kv = "-fp8kv" if rec.get("kv_cache_dtype") == "fp8" else ""
        k = _ks(ks)
        if v10:
            return f"trtllm-v1.0-{phase}{kv}"
        if engine == "trtllm" and k == "torch-flow" and not kv:
            return ""
        return f"{engine}-{k}-{phase}{kv}"
    if table in ("context_mla_perf", "generation_mla_perf"):
        phase = "prefill" if table.startswith("context") else "decode"
        kv = "-fp8kv" if rec.get("kv_cache_dtype") == "fp8" else ""
        if v10:
            return f"trtllm-v1.0-mla-{phase}{kv}"
        if engine == "trtllm" and not kv:
            return ""
        return f"{engine}-mla-{_ks(ks)}-{phase}{kv}"
    if table == "custom_allreduce_perf":
        return "" if engine == "trtllm" else f"{engine}-custom-ar"
    return ""


# The engine code that runs each back end (first pattern that matches its
# name): the engine's dispatch or kernel wrapper, repo@commit path (a
# stored version of that file). Which engine release ran a row is its
# AIConfigurator folder's version (gpu/op/engine/version, in `source`);
# the label itself is written by AIConfigurator's collectors
# (ai-dynamo/aiconfigurator@095f58a51c4ca8e61b66ec108d86f223f8d559ce
# collector/<engine>/collect_*.py) from the path the engine took.
_SGL = "sgl-project/sglang@"
_VLLM = "vllm-project/vllm@"
_TRT = "NVIDIA/TensorRT-LLM@"
ENGINE_SOURCES = [
    (r"^sglang-mla-trtllm-mla", _SGL + "fcf5799f03ce0946a2373920bac785a22bd7746e "
     "python/sglang/srt/layers/attention/trtllm_mla_backend.py"),
    (r"^sglang-(mla-)?(fa3|flash-attention)-", _SGL + "756596d14cbf314dfa846f62064e4a9113f826ef "
     "python/sglang/srt/layers/attention/flashattention_backend.py"),
    (r"^sglang-(mla-)?triton-", _SGL + "a0160ca43a75b83130ad9745fb85a7cedc3e47fe "
     "python/sglang/srt/layers/attention/triton_backend.py"),
    (r"^sglang-flashinfer-", _SGL + "454e84dab2724394593c1e166acebe656b503ba7 "
     "python/sglang/srt/layers/attention/flashinfer_backend.py"),
    (r"^sglang-trtllm-mha-", _SGL + "d737979cbd17c6162f39c1953cfa72d3d23cc0d0 "
     "python/sglang/srt/layers/attention/trtllm_mha_backend.py"),
    (r"^sglang-moe-fused-moe-triton", _SGL + "639afcec15c9a10d1a83d828838e60b368dc5d17 "
     "python/sglang/srt/layers/moe/fused_moe_triton/fused_moe.py"),
    (r"^sglang-moe-marlin", _SGL + "15994bcefba9a36ebc168075f98ff798827db323 "
     "python/sglang/srt/layers/moe/fused_moe_triton/fused_marlin_moe.py"),
    (r"^sglang-moe-flashinfer-trtllm", _SGL + "457da51d3aa4ddc30012b2c9503057ed799f80c1 "
     "python/sglang/srt/layers/moe/flashinfer_trtllm_moe.py"),
    (r"^sglang-moe-flashinfer-cutlass", _SGL + "22b987fb3f7acd57f2f75940226b65a3a8336fac "
     "python/sglang/srt/layers/moe/flashinfer_cutlass_moe.py"),
    (r"^sglang-custom-ar", _SGL + "263bc85d64baa38d82ec20f58a61f2982c78075d "
     "python/sglang/srt/distributed/device_communicators/custom_all_reduce.py"),
    (r"^sglang-deepgemm", _SGL + "6082c49139ac8f1c99a835840de73971faa15e8e "
     "python/sglang/srt/layers/quantization/fp8_utils.py"),
    (r"^vllm-flash-attn-", _VLLM + "5704f34f361c6c59a9c092c4e1e96730cc6dc14d "
     "vllm/v1/attention/backends/flash_attn.py"),
    (r"^vllm-flashinfer-", _VLLM + "5314c90d9f16e7c14523f496b0b8f883693951d4 "
     "vllm/v1/attention/backends/flashinfer.py"),
    (r"^vllm-triton-attn-", _VLLM + "63013883d93ca538eab430b4f5242916b878f618 "
     "vllm/v1/attention/backends/triton_attn.py"),
    (r"^vllm-moe-flashinfer-cutlass", _VLLM + "33503b54cac742a65af872a1949f04f48bd10277 "
     "vllm/model_executor/layers/fused_moe/experts/flashinfer_cutlass_moe.py"),
    (r"^vllm-moe-flashinfer-trtllm", _VLLM + "d35a0ce582ced2c4d7f0a8d5964aa407fc912446 "
     "vllm/model_executor/layers/fused_moe/flashinfer_trtllm_moe.py"),
    (r"^vllm-moe-marlin", _VLLM + "424afe648c94488f077d92d17ee26aaa4b364216 "
     "vllm/model_executor/layers/fused_moe/experts/marlin_moe.py"),
    (r"^vllm-moe-oaitriton", _VLLM + "5dc2bf89818b168b611a3317619a4f45fb2bd396 "
     "vllm/model_executor/layers/fused_moe/experts/gpt_oss_triton_kernels_moe.py"),
    (r"^vllm-moe-triton", _VLLM + "13cb3e44373beb1c8b9d2c017f565af6f7a1b601 "
     "vllm/model_executor/layers/fused_moe/fused_moe.py"),
    (r"^vllm-custom-ar", _VLLM + "0ad80649d36672284c95b5e1ae73447d9d5f207f "
     "vllm/distributed/device_communicators/custom_all_reduce.py"),
    (r"^cutlass-fp8$", _VLLM + "646ad5a478f8ac4174d2cb200999951ab8edd4e7 "
     "vllm/model_executor/layers/quantization/utils/w8a8_utils.py (cutlass_scaled_mm); "
     + _SGL + "6082c49139ac8f1c99a835840de73971faa15e8e "
     "python/sglang/srt/layers/quantization/fp8_utils.py (sgl-kernel fp8_scaled_mm)"),
    (r"^flashinfer-cutedsl-nvfp4$", _VLLM + "c9a59901113ccfe729e9c2be54062abee99b37f7 "
     "vllm/model_executor/layers/quantization/modelopt.py (FlashInfer NVFP4 GEMM)"),
    (r"^trtllm-moe-deepgemm", _TRT + "5d307079333f20b56f7dc09c5d3cd2ef4d1983bf "
     "tensorrt_llm/_torch/modules/fused_moe/fused_moe_deepgemm.py"),
    (r"^trtllm-moe-min-latency", _TRT + "7b437aaa73bf5a44b1102aee5c631074da763b8f "
     "tensorrt_llm/_torch/modules/fused_moe/fused_moe_trtllm_gen.py"),
    (r"^trtllm-moe-", _TRT + "7b437aaa73bf5a44b1102aee5c631074da763b8f "
     "tensorrt_llm/_torch/modules/fused_moe/fused_moe_cutlass.py"),
    (r"^trtllm-v1\.0-", "NVIDIA/TensorRT-LLM@v1.0.0 tensorrt_llm/_torch/attention_backend/trtllm.py "
     "(release 1.0.0: the folder version of the rows)"),
    (r"^trtllm-mla-", _TRT + "c6d3bb2aae305e0b5ac1b97b7954dcf87d653322 "
     "tensorrt_llm/_torch/modules/attention.py (MLA), " + _TRT +
     "9144c0e6a535f6f3108d870bc1eef158853cb2ea tensorrt_llm/_torch/attention_backend/trtllm.py"),
    (r"^trtllm-torch-flow-flashinfer", _TRT + "c9dca69e1b7fe59dd23bfaefc7856eff20399f37 "
     "tensorrt_llm/_torch/attention_backend/flashinfer.py"),
    (r"^trtllm-torch-flow", _TRT + "9144c0e6a535f6f3108d870bc1eef158853cb2ea "
     "tensorrt_llm/_torch/attention_backend/trtllm.py"),
    (r"^trtllm-(fp8|fp8-block|deepgemm|nvfp4|wo|sq)$", _TRT + "ed53795b33fc139493f762a1c6c53f691cf52d38 "
     "tensorrt_llm/_torch/modules/linear.py"),
    (r"^(trtllm-gen|cudnn|flashinfer-fa2|flashinfer-cutlass|flashinfer-cutedsl)$",
     "flashinfer-ai/flashinfer@6b1a33f00684860c76c0eda91a240e33c2e3d164 flashinfer/decode.py "
     "(back-end dispatch of FlashInfer's wrappers)"),
    (r"^fa3$", "Dao-AILab/flash-attention@0e79d71175346c7151f49ab6287084a052bc9613 "
     "hopper/flash_api.cpp"),
    (r"^fa2$", "Dao-AILab/flash-attention@765fbd928364e298a38a5e4b5c540d30daa1aecb "
     "csrc/flash_attn/flash_api.cpp"),
    (r"^flashmla$", "deepseek-ai/FlashMLA@9241ae3ef9bac614dd25e45e507e089f888280e0"),
    (r"^tileops$", "tile-ai/TileOPs (PRs 2090, 2132)"),
]


def engine_source(name):
    """The engine code of back end `name` (ENGINE_SOURCES), or ''."""
    for pat, src in ENGINE_SOURCES:
        if re.search(pat, name):
            return src
    return ""


# The shared tables' `library` text (lower case, first match) -> back end.
CSV_BACKENDS = [
    ("linear (deepgemm)", "trtllm-deepgemm"), ("fused moe (deepgemm)", "trtllm-moe-deepgemm-fp8_block"),
    ("deepgemm", "deepgemm"), ("torch._grouped_mm", "torch-grouped-mm"),
    ("torch._scaled_grouped_mm", "torch-grouped-mm"), ("cutlass_scaled_mm", "cutlass-fp8"),
    ("block-scaled fp8 gemm", "vllm-fp8-block"), ("cute dsl", "flashinfer-cutedsl"),
    ("xla", "xla"), ("aiter ck", "aiter-ck"), ("grouped_gemm fork", "grouped-gemm-fork"),
    ("flashmla", "flashmla"), ("flash-attention-3", "fa3"), ("flash-attention-2", "fa2"),
    ("flash-attention-4", "fa4"), ("cudnn", "cudnn"), ("trtllm-gen", "trtllm-gen"),
    ("trtllm-native", "trtllm-gen"), ("flashinfer-fa2", "flashinfer-fa2"),
    ("flashinfer (comparator)", "flashinfer-fa2"), ("tileops", "tileops"), ("tlx", "tlx"),
    ("aiter", "aiter"), ("cutlass (via flashinfer)", "flashinfer-cutlass"),
    ("via torch.distributed", "torch-dist"), ("rccl", "rccl"),
]


def csv_backend(row, fmt=""):
    """The back end of a shared-table row: attention rows only. For the
    GEMM and collective tables, back ends lowered the in-sample error but
    raised the leave-one-GPU-out one (gemm.csv 18.1 -> 19.8 %, collectives
    18.0 -> 30.9 % median: their libraries are each measured on one or two
    GPUs, by one harness), so their rows take the generic kernel."""
    if "phase" not in row:
        return ""
    lib = (row.get("library") or "").lower()
    if "trt-llm" in lib and "linear (torch_flow)" in lib:
        return {"fp8": "trtllm-fp8", "fp8_block": "trtllm-fp8-block",
                "nvfp4": "trtllm-nvfp4"}.get(fmt, "")
    if "moe_torch_flow_cutlass" in lib:
        return "" if fmt == "bf16" else f"trtllm-moe-cutlass-{fmt}"
    for key, be in CSV_BACKENDS:
        if key in lib:
            return be
    return ""


AIC_TABLES = {
    "gemm_perf": aic_gemm,
    "moe_perf": aic_moe,
    "context_attention_perf": lambda r, g: aic_attn(r, g, False),
    "generation_attention_perf": lambda r, g: aic_attn(r, g, True),
    "context_mla_perf": lambda r, g: aic_mla(r, g, False),
    "generation_mla_perf": lambda r, g: aic_mla(r, g, True),
    "nccl_perf": aic_nccl,
    "custom_allreduce_perf": aic_custom,
}
AIC_SKIP = {
    "mla_context_module_perf": "a whole MLA module (projections, norms, RoPE): not one kernel",
    "mla_generation_module_perf": "a whole MLA module (projections, norms, RoPE): not one kernel",
    "mla_bmm_perf": "MLA absorbed batched matmuls: not modelled yet",
    "gdn_perf": "Gated DeltaNet kernels: no linear-attention model yet",
    "mamba2_perf": "Mamba2 kernels: no linear-attention model yet",
    "wideep_moe_perf": "wide-EP MoE (EPLB, per-rank token counts): not modelled yet",
    "wideep_context_moe_perf": "wide-EP MoE: not modelled yet",
    "wideep_generation_moe_perf": "wide-EP MoE: not modelled yet",
    "wideep_context_mla_perf": "wide-EP MLA modules: not one kernel",
    "wideep_generation_mla_perf": "wide-EP MLA modules: not one kernel",
    "wideep_deepep_ll_perf": "DeepEP dispatch/combine: not modelled yet",
    "wideep_deepep_normal_perf": "DeepEP dispatch/combine: not modelled yet",
    "trtllm_alltoall_perf": "TensorRT-LLM NVLink MoE all-to-all: not modelled yet",
    "computescale_perf": "quantization pieces (inside the GEMM rows' times)",
    "scale_matrix_perf": "quantization pieces (inside the GEMM rows' times)",
}


def read_aic(path, known, cap, rows, skipped):
    parts = path.replace("\\", "/").split("/")
    table = os.path.basename(path).split(".")[0]
    # .../<gpu>/<op>/<engine>/<version>/<table>.csv.gz
    gpu_dir, engine = parts[-5], parts[-3]
    fname = "/".join(parts[-5:])
    if table in AIC_SKIP or table not in AIC_TABLES:
        skipped[AIC_SKIP.get(table, f"table {table}: unknown")] = skipped.get(
            AIC_SKIP.get(table, f"table {table}: unknown"), 0) + 1
        return
    try:
        gpu = gpu_name(gpu_dir, known)
    except Unmodelled as e:
        skipped[str(e)] = skipped.get(str(e), 0) + 1
        return
    with gzip.open(path, "rt", newline="") as f:
        lines = f.read().splitlines()
    header, body = lines[0], lines[1:]
    step = max(1, math.ceil(len(body) / cap))
    mapper = AIC_TABLES[table]
    host = comm_host_bound(table, header, body)
    # nccl-tests: a loop of launches between CUDA events, without graphs
    timing = "event" if table == "nccl_perf" else "graph"
    for i, rec in enumerate(csv.DictReader([header] + body[::step])):
        rid = f"{fname}#{i * step + 2}"
        try:
            why = host.get((rec.get("op_name"), rec.get("num_gpus")))
            if why:
                raise Unmodelled(why)
            fam, klines, fmt, quant = mapper(rec, gpu)
            t = float(rec["latency"]) * 1e-3
            if not t > 0:
                raise Unmodelled("latency is not positive")
        except Unmodelled as e:
            skipped[f"{table} ({engine}): {e}"] = skipped.get(f"{table} ({engine}): {e}", 0) + 1
            continue
        rows.append(Row(rid, "A", gpu, fam, klines, t, fname, fmt, quant,
                        source="/".join(parts[-5:-1]),
                        backend=aic_backend(table, engine, rec), timing=timing))


def comm_host_bound(table, header, body):
    """A data check on a collective table: (op, GPUs) whose bus bandwidth
    at the table's largest size is under half that of 2 GPUs (a ring's or
    a switch's bus bandwidth does not fall with the GPU count: such rows
    measure a host path without GPU peer-to-peer, which the catalogue has
    no figures for) -> the reason, naming both figures."""
    if table not in ("nccl_perf", "custom_allreduce_perf"):
        return {}
    best = {}
    for rec in csv.DictReader([header] + body):
        if (rec.get("backend") or "").endswith("_eager"):
            continue
        elt = 1 if rec.get("nccl_dtype") == "int8" else 2
        size, n = float(rec["message_size"]) * elt, int(rec["num_gpus"])
        op = rec.get("op_name")
        bw = size * bus_factor(op, n) / (float(rec["latency"]) * 1e-3) / 1e9
        key = (op, n)
        if size > best.get(key, (0, 0))[0] or (size == best[key][0] and bw > best[key][1]):
            best[key] = (size, bw)
    out = {}
    for (op, n), (size, bw) in best.items():
        two = best.get((op, 2))
        if two and n > 2 and two[0] == size and bw < 0.5 * two[1]:
            out[(op, str(n))] = (f"{table}: {op} bus bandwidth at {n} GPUs {bw:.1f} GB/s, under "
                                 f"half of 2 GPUs' {two[1]:.1f} GB/s in the same collection (a host "
                                 f"path without GPU peer-to-peer; no catalogue figure)")
    return out


def read_inputs(paths, known, cap):
    rows, failures, skipped, clocks = [], [], {}, {}
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(glob.glob(os.path.join(p, "**", "*.csv.gz"), recursive=True))
        else:
            files.append(p)
    for path in files:
        if path.endswith(".csv.gz"):
            read_aic(path, known, cap, rows, skipped)
            continue
        fname = os.path.basename(path)
        try:
            with open(path, newline="", encoding="utf-8-sig") as f:
                reader = csv.DictReader(f)
                measured.check_header(path, reader.fieldnames)
                table = list(reader)
        except UnicodeDecodeError as e:
            measured.bad_input(f"{path}: not UTF-8 text (byte {e.start}: {e.reason})")
        except OSError as e:
            measured.bad_input(f"{path}: {e.strerror}")
        if not table:  # it was skipped without a word
            measured.bad_input(f"{path}: empty, or a header and no rows")
        keys = table[0].keys()
        if "coll_id" in keys:
            mapper, idkey = map_coll_csv, "coll_id"
        elif "phase" in keys:
            mapper, idkey = map_attention_csv, "kernel_id"
        elif "m_per_group" in keys:
            mapper, idkey = map_gemm_csv, "kernel_id"
        else:
            sys.exit(f"validate: {path}: not a kernel table (header {list(keys)[:4]}...)")
        for row in table:
            try:
                measured.check_measured(row, "measured_time_us")  # the mappers read it first
            except measured.BadMeasurement as e:  # bad data, not an unmodelled row
                failures.append((row.get(idkey, "?"), row.get("reliability", "?"),
                                 f"bad measurement: {e}"))
                continue
            try:
                r = with_harness(mapper(row, known, fname), row, clocks)
                for ln in r.lines:
                    r.quant = r.quant or "quant=1" in ln
                rows.append(r)
            except (Unmodelled, ValueError, KeyError) as e:
                failures.append((row.get(idkey, "?"), row.get("reliability", "?"), str(e)))
    return rows, failures, skipped


# ---- evaluation ------------------------------------------------------------------

class Evaluator:
    """One `madsweep kernel --batch` process holding the rows (`+`/`&`
    lines, sent once); predicts them, or a subset, under given constants
    (`set` then `eval`). Back ends the rows name that the catalogue lacks
    are added at their prior (1, 1, 0) in a temporary constants file."""

    def __init__(self, exe, configs, rows):
        self.params = read_params(exe, configs, None)  # name -> (lo, hi, value)
        missing = sorted({r.backend for r in rows if r.backend} -
                         {n.split(":")[0] for n in self.params if ":" in n})
        self.tmp = None
        cmd = [exe, "kernel", "--batch"]
        if missing:
            self.tmp = write_consts_file(configs, missing)
            cmd += ["--consts", self.tmp]
            self.params = read_params(exe, configs, self.tmp)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1 << 20)
        out = []
        for i, r in enumerate(rows):
            r.idx = i
            out.append("+ " + r.lines[0])
            out += ["& " + ln for ln in r.lines[1:]]
        self._send("\n".join(out) + "\n")
        self.n = len(rows)
        self.subs = {}

    def _send(self, text):
        # a writer thread: the process answers while it reads
        th = threading.Thread(target=lambda: (self.proc.stdin.write(text),
                                              self.proc.stdin.flush()))
        th.start()
        return th

    def _ask(self, text, nlines=1):
        th = self._send(text)
        out = [self.proc.stdout.readline().rstrip("\n") for _ in range(nlines)]
        th.join()
        return out

    def subset(self, key, idxs):
        """Subset slot for the row indices idxs (cached by key)."""
        if key in self.subs:
            return self.subs[key][0]
        slot = len(self.subs) % 4096
        for k in [k for k, v in self.subs.items() if v[0] == slot]:
            del self.subs[k]
        ans = self._ask(f"sub {slot} " + " ".join(map(str, idxs)) + "\n")[0]
        if not ans.startswith("ok"):
            sys.exit(f"validate: madsweep kernel: {ans}")
        self.subs[key] = (slot, list(idxs))
        return slot

    def predict(self, consts, slot=None):
        """Predicted seconds (None where a row fails) of every stored row,
        or of subset `slot`'s, under consts (name -> value)."""
        setl = "set " + " ".join(f"{k}={v!r}" for k, v in sorted(consts.items()))
        ans = self._ask(setl + "\neval" + ("" if slot is None else f" {slot}") + "\n", 2)
        if ans[0] != "ok":
            sys.exit(f"validate: constants refused: {ans[0]}")
        return [None if v == "nan" else float(v) for v in ans[1].split()]

    def why(self, idx):
        return self._ask(f"why {idx}\n")[0]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()
        if self.tmp:
            os.unlink(self.tmp)


def read_params(exe, configs, consts_file):
    """Every constant and back-end field: name -> (lo, hi, value), from
    `madsweep kernel --ranges` (ranges kept in cost/kernel/ctx.c)."""
    cmd = [exe, "kernel", "--ranges"]
    env = dict(os.environ, MADSWEEP_CONFIGS=configs)
    if consts_file:
        cmd += ["--consts", consts_file]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"validate: madsweep kernel --ranges failed: {out.stderr.strip()}")
    res = {}
    for line in out.stdout.splitlines():
        name, lo, hi, val = line.split()[:4]
        res[name] = (float(lo), float(hi), float(val))
    return res


def write_consts_file(configs, missing):
    """A copy of configs/kernels.cfg with back ends `missing` added at
    their prior; its path."""
    import tempfile
    with open(os.path.join(configs, "kernels.cfg")) as f:
        text = f.read()
    add = ",\n".join(f'  {{ name = "{b}"; source = "not in the catalogue: prior"; eff = 1.0; '
                     f'mem = 1.0; floor_s = 0.0; nosplit = 0.0; }}' for b in missing)
    if "backends" in text:
        i = text.rindex(");")
        text = text[:i].rstrip() + ",\n" + add + "\n);\n"
    else:
        text += "backends = (\n" + add + "\n);\n"
    fd, path = tempfile.mkstemp(suffix=".cfg", prefix="kernels-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


# ---- the fit ---------------------------------------------------------------------
# Constants are fitted by Levenberg-Marquardt on the residuals
# r = log(predicted / measured) under a robust (pseudo-Huber, scale ROBUST)
# loss, by iteratively reweighted least squares; each parameter moves in
# log space (linear in microseconds for a back end's floor, which may be
# negative), clamped to its range; the Jacobian by forward differences,
# a back end's columns on its own rows only. Deterministic: the start is
# the catalogue, no randomness, a fixed iteration budget.
ROBUST = 0.10
# A weak prior (pseudo-rows) pulls each fitted parameter toward its start
# (a back end: 1, 1, 0; a constant: its catalogue value): one unit of x
# (a factor e, or 10 us of floor) costs as much as PRIOR rows at the
# robust scale. It keeps a parameter that its rows barely inform where it
# was instead of letting it run to a bound.
PRIOR = 2.0
# A back end's fields (cost/kernel/ctx.c kb_info), in the catalogue's order.
BE_FIELDS = ("eff", "mem", "floor_s", "nosplit")
# Rounds of coordinate steps on the constants where LM stalls (lm_fit).
POLISH = 3


def _to_x(name, v, lo, hi):
    if name.endswith(":floor_s"):
        return v * 1e5
    if name.endswith(":nosplit"):
        return v * 4.0
    return math.log(max(v, lo, hi * 1e-4))


def _from_x(name, x, lo, hi):
    v = x * 1e-5 if name.endswith(":floor_s") else x / 4.0 if name.endswith(":nosplit") \
        else math.exp(x)
    return min(max(v, lo), hi)


def _resid(preds, rows):
    return [math.log(p / r.measured) if p and p > 0 else 3.0 for p, r in zip(preds, rows)]


def _loss(res):
    c2 = ROBUST * ROBUST
    return sum(c2 * (math.sqrt(1 + x * x / c2) - 1) for x in res)


def _solve(a, b):
    """Solves a x = b (a symmetric positive definite, small) by Gaussian
    elimination with partial pivoting."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda i: abs(m[i][c]))
        m[c], m[p] = m[p], m[c]
        if abs(m[c][c]) < 1e-300:
            continue
        for i in range(c + 1, n):
            f = m[i][c] / m[c][c]
            if f:
                for j in range(c, n + 1):
                    m[i][j] -= f * m[c][j]
    x = [0.0] * n
    for c in range(n - 1, -1, -1):
        if abs(m[c][c]) < 1e-300:
            continue
        x[c] = (m[c][n] - sum(m[c][j] * x[j] for j in range(c + 1, n))) / m[c][c]
    return x


def lm_fit(ev, rows, consts, free, params, iters=12):
    """Levenberg-Marquardt of `free` (names) over rows; returns new consts."""
    if not free or not rows:
        return consts
    slot = ev.subset(("fit", tuple(r.idx for r in rows)), [r.idx for r in rows])
    pos = {r.idx: i for i, r in enumerate(rows)}
    # rows a back end's fields move (its columns are zero elsewhere)
    own = {}
    for n in free:
        if ":" in n:
            be = n.split(":")[0]
            if be not in own:
                idx = [r.idx for r in rows if r.backend == be]
                own[be] = (ev.subset(("be", be, tuple(idx)), idx), [pos[i] for i in idx])
    x = {n: _to_x(n, consts[n], *params[n][:2]) for n in free}
    x0 = dict(x)
    mu = PRIOR * ROBUST * ROBUST

    def total(res_, xs):
        return _loss(res_) + 0.5 * mu * sum((xs[n] - x0[n]) ** 2 for n in free)
    cur = dict(consts)
    res = _resid(ev.predict(cur, slot), rows)
    loss = total(res, x)
    lam = 1e-2
    polish_left = POLISH
    for _ in range(iters):
        c2 = ROBUST * ROBUST
        w = [1.0 / math.sqrt(1 + r * r / c2) for r in res]
        cols = []
        for n in free:
            h = 0.02
            trial = dict(cur)
            trial[n] = _from_x(n, x[n] + h, *params[n][:2])
            if trial[n] == cur[n]:
                trial[n] = _from_x(n, x[n] - h, *params[n][:2])
                h = -h
            if ":" in n:
                sl, where = own[n.split(":")[0]]
                sub = [rows[i] for i in where]
                r2 = _resid(ev.predict(trial, sl), sub)
                cols.append((where, [(a - res[i]) / h for a, i in zip(r2, where)]))
            else:
                r2 = _resid(ev.predict(trial, slot), rows)
                cols.append((None, [(a - b) / h for a, b in zip(r2, res)]))
        nf = len(free)
        ata = [[0.0] * nf for _ in range(nf)]
        atb = [0.0] * nf
        for i, (wi, ci) in enumerate(cols):
            if wi is None:
                wc = [a * b for a, b in zip(ci, w)]
                atb[i] = -sum(a * b for a, b in zip(wc, res))
            else:
                wc = [a * w[k] for a, k in zip(ci, wi)]
                atb[i] = -sum(a * res[k] for a, k in zip(wc, wi))
            for j in range(i, nf):
                wj, cj = cols[j]
                if wi is None and wj is None:
                    v = sum(a * b for a, b in zip(wc, cj))
                elif wi is None:
                    v = sum(ci[k] * w[k] * b for k, b in zip(wj, cj))
                elif wj is None:
                    v = sum(a * cj[k] for a, k in zip(wc, wi))
                elif wi is wj or wi == wj:
                    v = sum(a * b for a, b in zip(wc, cj))
                else:
                    v = 0.0
                ata[i][j] = ata[j][i] = v
        improved = False
        for i, n in enumerate(free):
            atb[i] -= mu * (x[n] - x0[n])
        for _t in range(6):
            a = [[ata[i][j] + ((lam * (ata[i][i] + 1e-9) + mu) if i == j else 0.0)
                  for j in range(nf)] for i in range(nf)]
            d = _solve(a, atb)
            trial = dict(cur)
            xt = {}
            for n, dn in zip(free, d):
                dn = max(-1.0, min(1.0, dn))
                trial[n] = _from_x(n, x[n] + dn, *params[n][:2])
                xt[n] = _to_x(n, trial[n], *params[n][:2])
            rt = _resid(ev.predict(trial, slot), rows)
            lt = total(rt, xt)
            if lt < loss - 1e-9:
                cur, x, res, loss = trial, xt, rt, lt
                lam = max(lam / 3, 1e-6)
                improved = True
                break
            lam *= 4
        if not improved or loss == 0:
            if polish_left <= 0 or loss == 0:
                break
            # the model has kinks (min over algorithms, ceil of waves, max
            # of compute and memory): where LM stalls, try coordinate steps
            # on each constant (log space) and resume LM from a better point
            polish_left -= 1
            moved = False
            for n in free:
                if ":" in n:
                    continue
                for h in (0.25, -0.25, 0.08, -0.08):
                    trial = dict(cur)
                    trial[n] = _from_x(n, x[n] + h, *params[n][:2])
                    if trial[n] == cur[n]:
                        continue
                    xt = dict(x)
                    xt[n] = _to_x(n, trial[n], *params[n][:2])
                    rt = _resid(ev.predict(trial, slot), rows)
                    lt = total(rt, xt)
                    if lt < loss - 1e-9:
                        cur, x, res, loss, moved = trial, xt, rt, lt, True
                        break
            if not moved:
                break
            lam = 1e-2
    return cur


def informed(name, rows):
    """Rows that inform constant or back-end field `name`."""
    if ":" in name:
        be = name.split(":")[0]
        if name.endswith(":nosplit"):  # decode attention only
            return [r for r in rows if r.backend == be and r.family.endswith("decode")]
        return [r for r in rows if r.backend == be]
    return [r for r in rows if INFORMS.get(name, lambda r: True)(r)]


def fit(ev, rows, start, params, log=None):
    """The constants fitted to `rows` (reliability A and B, fit sample),
    stage by stage (STAGES; a stage's back ends with it). A constant or
    back-end field is fitted only when the rows that inform it span >= 2
    GPUs and >= 2 sources (an AIConfigurator table folder
    gpu/op/engine/version is a source); else it keeps its prior (the
    catalogue value of a constant, 1/1/0 for a back end). Returns (values,
    {name: 'fitted'|'kept: why'})."""
    consts, how = dict(start), {}
    for name in start:
        if ":" in name:
            consts[name] = 0.0 if name.endswith((":floor_s", ":nosplit")) else 1.0
    for stage, names in STAGES:
        srows = [r for r in rows if FAMILY_STAGE[r.family] == stage and r.fit]
        bes = sorted({r.backend for r in srows if r.backend})
        names = names + [f"{b}:{f}" for b in bes for f in BE_FIELDS]
        free = []
        for n in names:
            inf = informed(n, srows)
            g, so = len({r.gpu for r in inf}), len({r.source for r in inf})
            if g < 2 or so < 2:
                how[n] = f"kept: its rows span {g} GPU(s), {so} source(s)"
            else:
                free.append(n)
                how[n] = "fitted"
        consts = lm_fit(ev, srows, consts, free, params)
        if log:
            log(f"fit {stage}: {len(srows)} rows, {len(free)} free")
    return consts, how


def summary(label, errs):
    if not errs:
        return f"validate: {label}0 rows"
    return (f"validate: {label}{len(errs)} rows, median |err| {100 * st.median(errs):.1f}%, "
            f"mean |err| {100 * st.fmean(errs):.1f}%, max |err| {100 * max(errs):.1f}%")


def rel_err(p, r):
    return p / r.measured - 1.0 if isinstance(p, float) else None


CFG_HEADER = """\
# kernels.cfg - constants of the kernel layer (cost/kernel/) that are not
# hardware figures, shared by every GPU, and its back ends. Written by
# scripts/validate_kernels.py --fit (fit(): stage by stage, Levenberg-
# Marquardt on log(predicted/measured) under a robust loss, from these
# values) on the reliability A and B rows of every shared kernel table:
# kernels/gemm.csv, attention.csv, collectives.csv and every table of
# kernels/aic/ the layer models (at most 1000 rows of each AIConfigurator
# file, every ceil(rows/1000)-th; the fit uses at most 150 rows per file
# and kernel family of those). A constant or back-end field whose rows
# span a single GPU or a single source (an AIConfigurator table folder
# gpu/op/engine/version is one source) is not fitted ("kept"): a constant
# stays at its value below, a prior; a back end at 1, 1, 0. Each value's
# allowed range (cost/kernel/ctx.c, checked on load) is in its comment.
#
# backends: the library or engine path that ran a kernel (a kernel line's
# backend=NAME; none = the generic kernel: cuBLAS for BF16 GEMMs,
# TensorRT-LLM's attention, MLA and CUTLASS MoE ops, NCCL, TensorRT-LLM's
# custom all-reduce). eff scales the main-loop (GEMM, MoE) or prefill
# tensor rate, mem the streamed bandwidth (decode KV, weights; collectives:
# the link), floor_s adds to the per-call floor. `source` names the engine
# code that runs the back end (repo@commit path: the engine's dispatch or
# kernel wrapper) and the rows (AIConfigurator folders gpu/op/engine/version,
# whose kernel_source label the collector reads from the engine's dispatch;
# shared-table sources) that name it.
"""


def print_fit(consts, how, params, rows):
    """The fitted values as the whole of configs/kernels.cfg (group
    `kernel`, list `backends`), each with its range and how it was set."""
    docs = {}
    exe = binary()
    out = subprocess.run([exe, "kernel", "--ranges"], capture_output=True, text=True)
    for line in out.stdout.splitlines():
        parts = line.split(None, 4)
        docs[parts[0]] = parts[4] if len(parts) > 4 else ""
    print(CFG_HEADER + "kernel = {")
    for n in sorted((k for k in consts if ":" not in k), key=list(params).index):
        lo, hi, _ = params[n]
        print(f"  # {docs.get(n, '')}; range {lo:g} to {hi:g}; {how.get(n, 'kept')}")
        print(f"  {n} = {consts[n]:.4g};")
    print("};")
    labels = {}
    for r in rows:
        if r.backend:
            labels.setdefault(r.backend, set()).add(r.source)
    print("backends = (")
    names = sorted({k.split(":")[0] for k in consts if ":" in k})
    for i, b in enumerate(names):
        f = {fld: consts[f"{b}:{fld}"] for fld in BE_FIELDS}
        srcs = sorted(labels.get(b, []))
        src = "rows of " + ", ".join(srcs[:4]) + (f" and {len(srcs) - 4} more"
                                                  if len(srcs) > 4 else "")
        code = engine_source(b)
        src = (f"code: {code}; " if code else "") + src
        hw = "; ".join(f"{fld} {how.get(f'{b}:{fld}', 'kept')}" for fld in f)
        print(f"  # {hw}")
        vals = "; ".join(f"{fld} = {f[fld]:.4g}" for fld in BE_FIELDS)
        print(f'  {{ name = "{b}"; {vals};\n    source = "{src}"; }}'
              + ("," if i < len(names) - 1 else ""))
    print(");")


def sample_for_fit(rows, per=150):
    """At most `per` rows per (file, family), every k-th (deterministic)."""
    groups = {}
    for r in rows:
        groups.setdefault((r.file, r.family), []).append(r)
    out = []
    for key in sorted(groups):
        g = groups[key]
        step = max(1, math.ceil(len(g) / per))
        out += g[::step]
    return out


def is_kernel_input(paths):
    """True when the first path is a kernel table: a directory, a .csv.gz
    file, or a CSV whose first column is kernel_id or coll_id."""
    for p in paths:
        if p.startswith("--"):
            continue
        if os.path.isdir(p) or p.endswith(".csv.gz"):
            return True
        try:
            with open(p, newline="", encoding="utf-8-sig", errors="replace") as f:
                first = f.readline().split(",")[0].strip()
        except OSError:
            return False
        return first in ("kernel_id", "coll_id")
    return False


def main(argv):
    args = argv[1:]
    loso = "--loso" in args
    show_rows = "--rows" in args
    do_fit = "--fit" in args
    args = [a for a in args if a not in ("--loso", "--rows", "--fit")]
    check, cap = None, 1000
    v = measured.take_option(args, "--check", 2, float, 0, "MEDIAN MAX (|err| limits, %)")
    if v:
        check = tuple(v)
    v = measured.take_option(args, "--cap", 1, int, 0, "a count of rows")
    if v:
        cap = v[0]
    if not args:
        sys.exit(__doc__.split("\n\n")[1])
    exe = binary()
    configs = os.environ.get("MADSWEEP_CONFIGS") or os.path.join(ROOT, "configs")
    known = catalogue_gpus(configs)
    rows, failures, skipped = read_inputs(args, known, cap)
    bad_ab = 0  # A/B rows whose measurement is none: they fail the run
    for rid, rel, why in failures:
        if why.startswith("bad measurement: "):
            print(f"{rid:<24} {rel:>3} FAILED: {why}")
            bad_ab += rel in ("A", "B")
        else:
            print(f"{rid:<24} {rel:>3} not modelled: {why}")
    for why, cnt in sorted(skipped.items()):
        print(f"not modelled: {cnt} {'rows' if 'table' not in why else 'files'}: {why}")
    ev = Evaluator(exe, configs, rows)
    params = ev.params
    start = {n: v[2] for n, v in params.items()}
    targets = [r for r in rows if r.rel in ("A", "B")]
    fitrows = sample_for_fit(targets)
    consts, how = fit(ev, fitrows, start, params)
    preds = ev.predict(consts)
    for r, p in zip(rows, preds):
        if p is None:
            print(f"{r.rid:<24} {r.rel:>3} not modelled: {ev.why(r.idx)}")
    if do_fit:
        print_fit(consts, how, params, rows)
        ev.close()
        return 0
    errs, fam = [], {}
    for r, p in zip(rows, preds):
        e = rel_err(p, r)
        if e is None:
            continue
        if show_rows or r.rel == "C":
            print(f"{r.rid:<24} {r.rel:>3} {r.gpu:<14} {r.family:<18} predicted "
                  f"{p * 1e6:10.2f} us measured {r.measured * 1e6:10.2f} us {100 * e:+7.1f}%")
        if r.rel in ("A", "B"):
            errs.append(abs(e))
            fam.setdefault(r.family, []).append(abs(e))
    print(summary("", errs))
    loso_errs, loso_fam = [], {}
    if loso:
        gpus = sorted({r.gpu for r in targets})
        allp = {}
        for g in gpus:
            keep = [r for r in fitrows if r.gpu != g]
            c_g, _ = fit(ev, keep, start, params)
            held = [r for r in targets if r.gpu == g]
            slot = ev.subset(("held", g), [r.idx for r in held])
            for r, p in zip(held, ev.predict(c_g, slot)):
                e = rel_err(p, r)
                if e is not None:
                    loso_errs.append(abs(e))
                    loso_fam.setdefault(r.family, []).append(abs(e))
        print(summary("leave-one-GPU-out: ", loso_errs))
    for f in sorted(fam):
        print(summary(f"family {f}: ", fam[f]))
        if loso:
            print(summary(f"leave-one-GPU-out: family {f}: ", loso_fam.get(f, [])))
    ev.close()
    if bad_ab:
        print(f"validate: {bad_ab} rows of reliability A or B have no valid measurement")
        return 1
    if check:
        ok = errs and 100 * st.median(errs) <= check[0]
        if loso:
            ok = ok and loso_errs and 100 * st.median(loso_errs) <= check[1]
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
