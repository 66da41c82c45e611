"""validate_serving.py - the serving half of validate.py: compare the
detailed fidelity's serving model with published LLM-serving measurements.

A serving file (schema: docs/validation.md, "Serving file")
is recognised by its header (measured_output_tokens_per_s); validate.py
dispatches here. Every row becomes a `fidelity = "detailed"` inference
point on the row's engine as a serving stack (configs/stacks.cfg:
tensorrt-llm -> "trtllm", vllm -> "vllm", sglang -> "sglang", any other
-> "unknown"; TensorRT-LLM 0.5/0.6 -> "trtllm-0.6", other 0.x ->
"trtllm-engine"), evaluated with `madsweep eval POINT --json`. Scenarios:
    offline      concurrency = "max": all requests queued, the replica runs
                 at the concurrency its KV cache and engine admit;
    fixed_batch  scheduler = "static", micro_batch = batch / dp: the batch
                 prefills at once, then decodes in lock-step;
    latency      the same at batch 1; a row that measures only the first
                 token (decode 1) compares output tokens/s = batch / TTFT;
    concurrency  concurrency = the row's (closed loop);
    rate         request_rate = the row's Poisson rate (open loop).
Prompt and output lengths are the row's (means for variable lengths,
rounded). Per row: predicted and measured output tokens/s, TPOT (mean
TPOT, or the median ITL where the row stores one) and TTFT where measured
(an offline TTFT is the backlog's: printed, never scored), the band of
output tokens/s from the stack's and hardware's ranges. Summary lines:
    validate: N rows, median |err| X%, mean |err| Y%, max |err| Z%
over output tokens/s of the rows of reliability A and B (a row that
cannot be evaluated is listed with its reason and fails the run), then
the same for TPOT and TTFT and per engine. With --check MEDIAN MAX
[TPOT_MEDIAN], the exit status is 1 unless they hold.
Nothing is keyed on point_id or source_short. Standard library only.
"""
import re
import statistics as st

GPUS = {"a100-40g", "a100-80g", "h100-sxm-80g", "h200", "b200", "l40s", "mi300x",
        "h100-96g-500w", "gb200-nvl72"}
ENGINES = {"tensorrt-llm": "trtllm", "trtllm": "trtllm", "vllm": "vllm", "sglang": "sglang"}
# arch column -> the detailed model's arch, MLP and positions. Every one
# has an output head of its own: tie_word_embeddings defaults to False in
# transformers' LlamaConfig, Qwen3Config, MixtralConfig and GPTJConfig,
# and the published checkpoints keep it so (untied_embeddings = true).
ARCHS = {"llama": ("llama", "swiglu", "rope"), "qwen3": ("llama", "swiglu", "rope"),
         "mixtral": ("mixtral", "swiglu", "rope"), "gptj": ("gpt", "gelu", "rope"),
         "gpt": ("gpt", "gelu", "learned")}
DTYPES = {"bf16", "fp16", "fp8", "int8"}
HEAD_DIM = {"qwen3": 128}  # per the file's schema notes (Qwen3: heads x 128 != hidden)
# Qwen3 normalizes each query and key head (q_norm, k_norm in transformers'
# modeling_qwen3.py): the model key qk_norm, as the catalogue's Qwen3 models
QK_NORM = {"qwen3"}


class Unmappable(Exception):
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


def point_text(row, used):
    arch_col = (row.get("arch") or "").strip()
    if arch_col not in ARCHS:
        raise Unmappable(f"unknown arch {arch_col!r}")
    arch, mlp, pos = ARCHS[arch_col]
    gpu = (row.get("gpu") or "").strip()
    if gpu not in GPUS:
        raise Unmappable(f"unknown gpu {gpu!r}")
    engine = (row.get("engine") or "").strip().lower()
    stack = ENGINES.get(engine, "unknown")
    ver = (row.get("engine_version") or "").strip()
    if stack == "trtllm" and ver[:3] in ("0.5", "0.6"):
        stack = "trtllm-0.6"  # the release line before XQA and in-flight batching benchmarks
    elif stack == "trtllm" and ver.startswith("0."):
        stack = "trtllm-engine"  # TensorRT engines (1.x serves on PyTorch by default)
    if stack == "unknown":
        used.append("stack=unknown")
    layers, hidden, heads = need(row, "layers"), need(row, "hidden"), need(row, "heads")
    ffn = num(row, "ffn", int) or 4 * hidden
    kv = num(row, "kv_heads", int) or heads
    vocab = need(row, "vocab")
    gpus = need(row, "gpus")
    tp = num(row, "tp", int) or 1
    pp = num(row, "pp", int) or 1
    ep = num(row, "ep", int) or 1
    dp = num(row, "dp", int) or max(1, gpus // (tp * pp))
    isl = max(1, round(need(row, "prompt_tokens", float)))
    osl = max(1, round(need(row, "decode_tokens", float)))
    wp = (row.get("weight_precision") or "").strip() or "bf16"
    if wp not in DTYPES:
        raise Unmappable(f"unknown weight_precision {wp!r}")
    kvp = (row.get("kv_precision") or "").strip()
    if kvp and kvp not in DTYPES:
        raise Unmappable(f"unknown kv_precision {kvp!r}")
    if not kvp:
        used.append("kv_precision=engine default (weights' dtype)")
    model = [f'  name = "{row["point_id"]}"; type = "llm"; arch = "{arch}";',
             f"  layers = {layers}; hidden = {hidden}; ffn = {ffn}; heads = {heads};",
             f"  kv_heads = {kv}; seq_len = {max(4096, isl + osl)}; vocab = {vocab};",
             f'  mlp = "{mlp}"; position = "{pos}"; causal = true; dropout = false;',
             "  untied_embeddings = true;"]
    if arch_col in HEAD_DIM:
        model.append(f"  head_dim = {HEAD_DIM[arch_col]};")
    if arch_col in QK_NORM:
        model.append("  qk_norm = true;")
    experts = num(row, "experts", int)
    if experts:
        model.append(f"  experts = {experts}; top_k = {num(row, 'top_k', int) or 2}; "
                     f"expert_ffn = {num(row, 'expert_ffn', int) or ffn};")
    task = ['  type = "inference";', f"  tp = {tp}; pp = {pp}; dp = {dp};",
            f'  precision = "{"bf16" if wp == "fp16" else wp}";',
            f"  prompt_tokens = {isl}; decode_tokens = {osl};"]
    if experts and ep > 1:
        task.append(f"  ep = {ep};")
    if kvp:
        task.append(f'  kv_precision = "{kvp}";')
    # the random dataset at random_range_ratio 0: lengths uniform up to
    # the nominal, twice the mean (serving_calibration.md, Caveats)
    if "random_range_ratio 0.0" in (row.get("notes") or "") and \
            "dataset random" in (row.get("notes") or ""):
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
                          (row.get("source_location") or "") + " " + (row.get("notes") or ""))
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
    return "\n".join(lines) + "\n", stack, sc


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


def run(rows, run_point, report_failures, check):
    """run_point(pid, text) evaluates a point file's text: (result, None)
    or (None, why); report_failures lists the rows that could not be
    evaluated and returns those of reliability A or B."""
    err_tok, err_tpot, err_ttft, failures, per_engine = [], [], [], [], {}
    print(f"{'point':<30} {'rel':>3} {'engine':<7} {'scenario':<11} {'tok/s':>9} "
          f"{'meas':>9} {'err':>7} {'band_lo':>9} {'band_hi':>9} {'tpot_ms':>8} "
          f"{'meas':>7} {'err':>7} {'ttft_ms':>8} {'meas':>8}  notes")
    for row in rows:
        pid = row.get("point_id", "?")
        rel = (row.get("reliability") or "").strip() or "?"
        used = []
        try:
            text, stack, sc = point_text(row, used)
            meas, derived = measured_tokens(row)
            if meas is None:
                raise Unmappable("no measured output tokens/s nor first-token latency")
        except Unmappable as e:
            failures.append((pid, rel, f"unmappable: {e}"))
            continue
        if derived:
            used.append("tok/s=batch/TTFT (first-token row)")
        res, why = run_point(pid, text)
        if res is None:
            failures.append((pid, rel, why))
            continue
        pred = res["output_tokens_per_s"]
        it, lo_t, hi_t = (res["iteration_time_s"], res.get("iteration_time_lo_s"),
                          res.get("iteration_time_hi_s"))
        # the band of a rate: the iteration's band at the same requests
        lo = pred * it / hi_t if hi_t else pred
        hi = pred * it / lo_t if lo_t else pred
        e = pred / meas - 1.0
        ab = rel in ("A", "B")
        if ab:
            err_tok.append(abs(e))
            per_engine.setdefault(stack, []).append(abs(e))
        notes = (row.get("notes") or "")
        tpot_m = num(row, "measured_tpot_ms")
        itl = "ITL" in notes and (row.get("tpot_stat") or "").strip() == "median"
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
        print(f"{pid:<30} {rel:>3} {stack:<7} {sc:<11} {pred:9.1f} {meas:9.1f} "
              f"{100 * e:+6.1f}% {lo:9.1f} {hi:9.1f} {tpot_txt} {ttft_txt}  "
              f"{'; '.join(used) if used else '-'}")
    failed_ab = report_failures(failures, len(rows))
    for eng in sorted(per_engine):
        print(f"validate: engine {eng}: output tokens/s: {stats(per_engine[eng])}")
    print(f"validate: TTFT (rows measuring it below saturation, offline excluded): "
          f"{stats(err_ttft)}")
    print(f"validate: TPOT: {stats(err_tpot)}")
    print(f"validate: {stats(err_tok)}")
    if failed_ab:
        return 1
    if check:
        ok = bool(err_tok) and 100 * st.median(err_tok) <= check[0] and \
            100 * max(err_tok) <= check[1]
        if len(check) > 2:
            ok = ok and bool(err_tpot) and 100 * st.median(err_tpot) <= check[2]
        return 0 if ok else 1
    return 0
