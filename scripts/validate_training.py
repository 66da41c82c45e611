"""validate_training.py - the LLM training rows of validate.py and
calibrate.py: a row of calibration.csv or calibration_v3_additions.csv
(schemas: the reference's measured/calibration_v3.md) as a detailed point.

Every row becomes a `fidelity = "detailed"` point file, evaluated as
`madsweep eval POINT --json` would (scripts/msbatch.py); the comparison
is over measured_iteration_time_s. Names the row gives (GPU, precision,
arch, position, MLP, recompute) pass to the point as they are, so the
tool accepts or refuses them with its own message; a GPU is read from
the hardware catalogue (name or alias). The row's `stack` column names
the software stack (configs/stacks.cfg; empty: "unknown", the tool's
default stack; --use-stack NAME=OTHER runs the rows of NAME on OTHER).
Files of the calibration_v3_additions.csv schema add the MoE columns
experts, top_k, shared_experts, expert_ffn, dense_layers (model keys)
and capacity_factor (empty: 1, balanced routing); a head size that is
not hidden/heads comes from `notes` ("head_dim N"); arch deepseek-mla
stands for DeepSeek-V3's latent attention (ARCH_KEYS).
Defaults for empty cells (the tool's documented defaults, said per row):
ffn = 4 hidden, kv_heads = heads, mlp = gelu, position = learned, causal =
1, precision = bf16, gpus_per_node = the hardware's scale-up domain,
nic_gbps_per_gpu = the hardware's NIC, tp = pp = cp = ep = vpp = 1 (dp
derived from gpus when empty; with --vpp-auto a row with pp > 1 that
leaves vpp empty takes vpp = "auto", the fastest interleaving that fits,
said per row as vpp=auto: on calibration.csv that makes the A+B rows
worse, 2.9 % -> 3.5 % median and 11.8 % -> 25.3 % max, as the runs that
leave it unstated ran slower than the best interleaving; so it is not
the default); zero_stage, sequence_parallel: the
stack's defaults; micro_batch = auto (the fastest that divides the
replica's batch and fits, as a tuned run picks it; the stack's default
when grad_accum is stated); grad_accum = global_batch / (micro_batch dp);
recompute = auto (the least of none, selective, full whose memory fits
the device: what a practitioner would run).
Nothing is keyed on point_id or source_short. Standard library only.
"""
import re

NAME = "training"
# the measured column and the result field it is compared with
OBJECTIVES = ("measured_iteration_time_s",)
# the columns of a row's workload (measured.Row.deployment: the rest is
# the deployment)
WORKLOAD = ("seq_len", "global_batch", "micro_batch", "grad_accum")


def is_schema(fieldnames):
    return "measured_iteration_time_s" in (fieldnames or []) and \
        "measured_output_tokens_per_s" not in (fieldnames or [])


def measured(row):
    v = (row.get("measured_iteration_time_s") or "").strip()
    return {"measured_iteration_time_s": float(v)} if v else {}


def predicted(row, res):
    return {"measured_iteration_time_s": res["iteration_time_s"]}


# Architecture names of calibration_v3.md ("New values") that stand for a
# layout the columns cannot hold: the tool's arch and model keys.
# deepseek-mla: DeepSeek-V3's multi-head latent attention (config.json of
# deepseek-ai/DeepSeek-V3: q_lora_rank 1536, kv_lora_rank 512,
# qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128).
ARCH_KEYS = {"deepseek-mla": ("deepseek", {"q_lora_rank": 1536, "kv_lora_rank": 512,
                                           "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
                                           "v_head_dim": 128})}
# Mixture-of-experts columns of calibration_v3_additions.csv -> model keys.
MOE_KEYS = ("experts", "top_k", "shared_experts", "expert_ffn", "dense_layers")


class Unmappable(ValueError):
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


def prepare(r, ctx):
    """The point text of measured.Row r; sets its stack and hardware."""
    r.stack = ctx.column_stack(r.cols, r.used)
    r.hw = ctx.gpu(r.cols.get("gpu"))
    return point_text(r.cols, r.used, ctx, r.stack)


def point_text(row, used, ctx, stack):
    """The point file of one row (ctx: measured.Context, for the
    catalogue's hardware names; stack: the one it runs on)."""
    arch = (row.get("arch") or "").strip()
    arch, extra = ARCH_KEYS.get(arch, (arch, {}))
    extra = dict(extra)
    for key in MOE_KEYS:
        if (row.get(key) or "").strip():
            extra[key] = cell(row, key, 0, used)
    # calibration_v3.md: a head size that is not hidden/heads (Qwen3) is
    # given in `notes` as "head_dim N"
    hd = re.search(r"\bhead_dim (\d+)", row.get("notes") or "")
    if hd and "kv_lora_rank" not in extra:
        extra["head_dim"] = int(hd.group(1))
    # Qwen3's per-head query/key norms, stated in `notes` as "qk-layernorm"
    if re.search(r"\bqk-layernorm\b", row.get("notes") or ""):
        extra["qk_norm"] = "true"
    gpu = ctx.gpu(row.get("gpu"))
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
    if (row.get("vpp") or "").strip() or pp <= 1 or not ctx.vpp_auto:
        vpp = cell(row, "vpp", 1, used)
    else:
        # --vpp-auto: an unstated interleaving resolves like recompute,
        # the fastest that fits
        vpp = '"auto"'
        used.append("vpp=auto")
    # calibration_v3.md: LoRA fine-tuning rows say so in `notes` ("LoRA
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
    # (calibration_v3.md): DeepEP / HybridEP are Megatron-Core's flex
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
