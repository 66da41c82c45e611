"""validate_serving.py - the serving rows of validate.py and calibrate.py:
compare the detailed fidelity's serving model with published LLM-serving
measurements.

A serving file (schema: docs/validation.md, "Serving file") is recognised by its header
(measured_output_tokens_per_s). Every row becomes a `fidelity =
"detailed"` inference point on the serving stack its engine and release
match (configs/stacks.cfg, each serving stack's `match`; measured.py),
on the hardware the catalogue names or aliases, evaluated as `madsweep
eval POINT --json` would. Scenarios:
    offline      concurrency = "max": all requests queued, the replica runs
                 at the concurrency its KV cache and engine admit;
    fixed_batch  scheduler = "static", micro_batch = batch / dp: the batch
                 prefills at once, then decodes in lock-step;
    latency      the same at batch 1; a row that measures only the first
                 token (decode 1) compares output tokens/s = batch / TTFT;
    concurrency  concurrency = the row's (closed loop);
    rate         request_rate = the row's Poisson rate (open loop).
Prompt and output lengths are the row's (means for variable lengths,
rounded). Precisions pass to the point as the row states them (fp16 as
bf16: the same tensor cores), so the tool accepts them or refuses them
with its own message. Attention data parallelism (the schema's tp = 1,
ep = dp = n > 1: one instance, attention data-parallel over n ranks)
becomes tp = n, attn_dp = n, ep = n, etp = 1. Architectures: the `arch` column's
names (ARCHS); DeepSeek-V3's latent attention and shared experts and a
head size that is not hidden/heads are read from `notes`, where the
file states them. Per row: predicted and measured output tokens/s, TPOT
(mean TPOT, or the median ITL where the row stores one) and TTFT where
measured (an offline TTFT is the backlog's: printed, never scored), the
band of output tokens/s from the stack's and hardware's ranges. Summary
lines:
    validate: N rows, median |err| X%, mean |err| Y%, max |err| Z%
over output tokens/s of the rows of reliability A and B (a row that
cannot be evaluated is listed with its reason and fails the run), then
the same for TPOT and TTFT and per engine. With --check MEDIAN MAX
[TPOT_MEDIAN], the exit status is 1 unless they hold.
Nothing is keyed on point_id or source_short. Standard library only.
"""
import re
import statistics as st

NAME = "serving"
OBJECTIVES = ("measured_output_tokens_per_s", "measured_tpot_ms", "measured_ttft_ms")
WORKLOAD = ("scenario", "batch", "concurrency", "request_rate", "prompt_tokens",
            "decode_tokens")
# arch column -> the detailed model's arch, MLP and positions. Every one
# has an output head of its own: tie_word_embeddings defaults to False in
# transformers' LlamaConfig, Qwen3Config, MixtralConfig and GPTJConfig,
# and the published checkpoints keep it so (untied_embeddings = true).
# deepseek_v3: DeepSeek-V3's layout (its MLA ranks and shared experts
# from `notes`); qwen3_moe: Qwen3's attention with routed experts in
# every layer (serving_calibration_v2_additions.md, "MoE fields").
ARCHS = {"llama": ("llama", "swiglu", "rope"), "qwen3": ("llama", "swiglu", "rope"),
         "mixtral": ("mixtral", "swiglu", "rope"), "gptj": ("gpt", "gelu", "rope"),
         "gpt": ("gpt", "gelu", "learned"), "deepseek_v3": ("deepseek", "swiglu", "rope"),
         "qwen3_moe": ("llama", "swiglu", "rope")}
HEAD_DIM = {"qwen3": 128, "qwen3_moe": 128}  # the schema notes: heads x 128 != hidden
# Qwen3 normalizes each query and key head (q_norm, k_norm in transformers'
# modeling_qwen3.py and modeling_qwen3_moe.py): the model key qk_norm
QK_NORM = {"qwen3", "qwen3_moe"}
# DeepSeek-V3's attention and MoE figures as the rows' notes state them
# (config_671B.json: q_lora_rank 1536, kv_lora_rank 512, ...)
NOTE_KEYS = (("q_lora_rank", r"\bq_lora_rank (\d+)"), ("kv_lora_rank", r"\bkv_lora_rank (\d+)"),
             ("qk_nope_head_dim", r"\bqk_nope_head_dim (\d+)"),
             ("qk_rope_head_dim", r"\bqk_rope_head_dim (\d+)"),
             ("v_head_dim", r"\bv_head_dim (\d+)"), ("shared_experts", r"\+ (\d+) shared\b"),
             ("dense_layers", r"\bfirst (\d+) dense\b"))


class Unmappable(ValueError):
    pass


def num(row, key, conv=float):
    text = (row.get(key) or "").strip()
    if text == "":
        return None
    try:
        return conv(text)
    except ValueError:
        raise Unmappable(f"column {key}: cannot read {text!r}")


def need(row, key, conv=int):
    v = num(row, key, conv)
    if v is None:
        raise Unmappable(f"column {key} is empty")
    return v


def prepare(r, ctx):
    """The point text of measured.Row r; sets its stack, hardware and
    scenario (r.info)."""
    r.stack = ctx.serving_stack(r.cols, r.used)
    r.hw = ctx.gpu(r.cols.get("gpu"))
    text, sc = point_text(r.cols, r.used, r.hw, r.stack)
    r.info["scenario"] = sc
    return text


def point_text(row, used, gpu, stack):
    arch_col = (row.get("arch") or "").strip()
    if arch_col not in ARCHS:
        raise Unmappable(f"arch {arch_col!r}: no model layout for it (ARCHS)")
    arch, mlp, pos = ARCHS[arch_col]
    layers, hidden, heads = need(row, "layers"), need(row, "hidden"), need(row, "heads")
    ffn = num(row, "ffn", int) or 4 * hidden
    kv = num(row, "kv_heads", int) or heads
    vocab = need(row, "vocab")
    gpus = need(row, "gpus")
    tp = num(row, "tp", int) or 1
    pp = num(row, "pp", int) or 1
    ep = num(row, "ep", int) or 1
    dp = num(row, "dp", int) or max(1, gpus // (tp * pp))
    experts = num(row, "experts", int)
    attn_dp = 1
    if tp == 1 and dp > 1 and ep == dp and experts:
        # the schema's attention data parallelism: one instance of dp
        # ranks, attention data-parallel, experts over all of them
        tp, attn_dp, dp = dp, dp, 1
        used.append(f"attention DP {attn_dp} (tp={tp}, attn_dp={attn_dp}, ep={ep}, etp=1)")
    isl = max(1, round(need(row, "prompt_tokens", float)))
    osl = max(1, round(need(row, "decode_tokens", float)))
    wp = (row.get("weight_precision") or "").strip() or "bf16"
    kvp = (row.get("kv_precision") or "").strip()
    if not kvp:
        used.append("kv_precision=engine default (weights' dtype)")
    notes = row.get("notes") or ""
    model = [f'  name = "{row["point_id"]}"; type = "llm"; arch = "{arch}";',
             f"  layers = {layers}; hidden = {hidden}; ffn = {ffn}; heads = {heads};",
             f"  kv_heads = {kv}; seq_len = {max(4096, isl + osl)}; vocab = {vocab};",
             f'  mlp = "{mlp}"; position = "{pos}"; causal = true; dropout = false;',
             "  untied_embeddings = true;"]
    if arch_col in HEAD_DIM:
        model.append(f"  head_dim = {HEAD_DIM[arch_col]};")
    if arch_col in QK_NORM:
        model.append("  qk_norm = true;")
    if experts:
        model.append(f"  experts = {experts}; top_k = {num(row, 'top_k', int) or 2}; "
                     f"expert_ffn = {num(row, 'expert_ffn', int) or ffn};")
    if arch == "deepseek":
        for key, pattern in NOTE_KEYS:
            m = re.search(pattern, notes)
            if m:
                model.append(f"  {key} = {int(m.group(1))};")
                used.append(f"{key}={m.group(1)} (notes)")
    task = ['  type = "inference";', f"  tp = {tp}; pp = {pp}; dp = {dp};",
            f'  precision = "{"bf16" if wp == "fp16" else wp}";',
            f"  prompt_tokens = {isl}; decode_tokens = {osl};"]
    if attn_dp > 1:
        # experts whole (expert tensor parallelism 1), ep folded over the
        # tp ranks: each rank holds ep's share of the routed experts
        task.append(f"  attn_dp = {attn_dp}; etp = 1;")
    if experts and ep > 1:
        task.append(f"  ep = {ep};")
    if kvp:
        task.append(f'  kv_precision = "{kvp}";')
    # the random dataset at random_range_ratio 0: lengths uniform up to
    # the nominal, twice the mean (serving_calibration.md, Caveats)
    if "random_range_ratio 0.0" in notes and "dataset random" in notes:
        task.append("  uniform_lengths = true;")
        used.append("lengths uniform")
    sc = (row.get("scenario") or "").strip()
    if sc in ("fixed_batch", "latency"):
        batch = num(row, "batch", int) or 1
        if batch % dp:
            raise Unmappable(f"batch {batch} not a multiple of dp {dp}")
        task += ['  scheduler = "static";', f"  micro_batch = {batch // dp};"]
    elif sc == "offline":
        task.append('  concurrency = "max";')
        # the benchmark's burst: "N requests" / "N prompts" in the source's
        # location or notes (a workload fact of the run, as head_dim is)
        burst = re.search(r"\b(\d+) (?:requests|prompts)\b",
                          (row.get("source_location") or "") + " " + notes)
        if burst:
            task.append(f"  requests = {int(burst.group(1))};")
            used.append(f"requests={burst.group(1)}")
    elif sc == "concurrency":
        task.append(f"  concurrency = {need(row, 'concurrency')};")
    elif sc == "rate":
        task.append(f"  request_rate = {need(row, 'request_rate', float)!r};")
    else:
        raise Unmappable(f"unknown scenario {sc!r}")
    lines = ['fidelity = "detailed";', f'stack = "{stack}";', "model = {"] + model + [
        "};", "system = {",
        f'  name = "{row["point_id"]}"; hardware = "{gpu}"; devices = {gpus};', "};",
        "task = {"] + task + ["};"]
    return "\n".join(lines) + "\n", sc


def is_schema(fieldnames):
    return "measured_output_tokens_per_s" in (fieldnames or [])


def _itl(row):
    """The row stores the median ITL as its TPOT (the notes say ITL)."""
    return "ITL" in (row.get("notes") or "") and (row.get("tpot_stat") or "").strip() == "median"


def measured(row):
    """{objective: value}: output tokens/s (batch / TTFT for a first-token
    row), TPOT where measured, TTFT where measured below saturation (not
    offline, not a first-token row's)."""
    out = {}
    tok, derived = measured_tokens(row)
    if tok is not None:
        out["measured_output_tokens_per_s"] = tok
    tpot = num(row, "measured_tpot_ms")
    if tpot:
        out["measured_tpot_ms"] = tpot
    ttft = num(row, "measured_ttft_ms")
    if ttft and (row.get("scenario") or "").strip() != "offline" and not derived:
        out["measured_ttft_ms"] = ttft
    return out


def predicted(r, res):
    return {"measured_output_tokens_per_s": res["output_tokens_per_s"],
            "measured_tpot_ms": 1e3 * (res["itl_p50_s"] if _itl(r.cols) else res["tpot_s"]),
            "measured_ttft_ms": 1e3 * res["ttft_s"]}


def measured_tokens(row):
    """Measured output tokens/s, or batch / TTFT for a first-token row."""
    v = num(row, "measured_output_tokens_per_s")
    if v is not None:
        return v, False
    ttft = num(row, "measured_ttft_ms")
    osl = num(row, "decode_tokens")
    if ttft and osl == 1:
        return (num(row, "batch", int) or 1) / (ttft / 1e3), True
    return None, False


def stats(xs):
    if not xs:
        return "0 rows"
    return (f"{len(xs)} rows, median |err| {100 * st.median(xs):.1f}%, mean |err| "
            f"{100 * st.fmean(xs):.1f}%, max |err| {100 * max(xs):.1f}%")


def report(rows, results, report_failures, check):
    """Prints the table and the summary lines of mapped rows (measured.Row)
    and their results; returns the exit status and {objective: A+B errors}."""
    import measured as ms
    err_tok, err_tpot, err_ttft, failures, per_engine = [], [], [], [], {}
    print(f"{'point':<30} {'rel':>3} {'engine':<7} {'scenario':<11} {'tok/s':>9} "
          f"{'meas':>9} {'err':>7} {'band_lo':>9} {'band_hi':>9} {'tpot_ms':>8} "
          f"{'meas':>7} {'err':>7} {'ttft_ms':>8} {'meas':>8}  notes")
    for r in rows:
        row, used = r.cols, list(r.used)
        res = results.get(r.index)
        why = r.why or ms.failure(res)
        if not why and "measured_output_tokens_per_s" not in r.measured:
            why = "unmappable: no measured output tokens/s nor first-token latency"
        if why:
            failures.append((r.pid, r.rel, why))
            continue
        meas, derived = measured_tokens(row)
        if derived:
            used.append("tok/s=batch/TTFT (first-token row)")
        sc = r.info["scenario"]
        pred = res["output_tokens_per_s"]
        it, lo_t, hi_t = (res["iteration_time_s"], res.get("iteration_time_lo_s"),
                          res.get("iteration_time_hi_s"))
        # the band of a rate: the iteration's band at the same requests
        lo = pred * it / hi_t if hi_t else pred
        hi = pred * it / lo_t if lo_t else pred
        e = pred / meas - 1.0
        ab = r.ab
        if ab:
            err_tok.append(abs(e))
            per_engine.setdefault(r.stack, []).append(abs(e))
        tpot_m = num(row, "measured_tpot_ms")
        itl = _itl(row)
        tpot_p = 1e3 * (res["itl_p50_s"] if itl else res["tpot_s"])
        tpot_txt = f"{tpot_p:8.2f} {'':>7} {'':>7}"
        if tpot_m:
            et = tpot_p / tpot_m - 1.0
            if ab:
                err_tpot.append(abs(et))
            tpot_txt = f"{tpot_p:8.2f} {tpot_m:7.2f} {100 * et:+6.1f}%"
            if itl:
                used.append("tpot=median ITL")
        ttft_m = num(row, "measured_ttft_ms")
        ttft_p = 1e3 * res["ttft_s"]
        ttft_txt = f"{ttft_p:8.1f} {ttft_m if ttft_m is not None else '':>8}"
        if ttft_m and sc != "offline" and not derived and ab:
            err_ttft.append(abs(ttft_p / ttft_m - 1.0))
        elif ttft_m and sc == "offline":
            used.append("ttft: backlog, not scored")
        print(f"{r.pid:<30} {r.rel:>3} {r.stack:<7} {sc:<11} {pred:9.1f} {meas:9.1f} "
              f"{100 * e:+6.1f}% {lo:9.1f} {hi:9.1f} {tpot_txt} {ttft_txt}  "
              f"{'; '.join(used) if used else '-'}")
    failed_ab = report_failures(failures, len(rows))
    for eng in sorted(per_engine):
        print(f"validate: engine {eng}: output tokens/s: {stats(per_engine[eng])}")
    print(f"validate: TTFT (rows measuring it below saturation, offline excluded): "
          f"{stats(err_ttft)}")
    print(f"validate: TPOT: {stats(err_tpot)}")
    print(f"validate: {stats(err_tok)}")
    errs = {"measured_output_tokens_per_s": err_tok, "measured_tpot_ms": err_tpot,
            "measured_ttft_ms": err_ttft}
    if failed_ab:
        return 1, errs
    if check:
        ok = bool(err_tok) and 100 * st.median(err_tok) <= check[0] and \
            100 * max(err_tok) <= check[1]
        if len(check) > 2:
            ok = ok and bool(err_tpot) and 100 * st.median(err_tpot) <= check[2]
        return (0 if ok else 1), errs
    return 0, errs
