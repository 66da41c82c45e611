"""hf_config.py - read a Hugging Face `config.json` into the detailed
fidelity's model keys, and say what it cannot express.

    import hf_config
    m = hf_config.read("DIR/ORG--NAME_config.json")
    m.keys          # model keys of a point's `model = { ... }` group
    m.unsupported   # [(field, why)]: what the model keys cannot express
    m.approx        # [(field, how)]: what --approximate would map instead
    m.quant         # the checkpoint's quantisation (quantization_config)
    hf_config.model_group(m, name, seq_len)   # the group's text

Architectures read (by their config fields, never by a model's name):
dense decoders (Llama, Qwen3), grouped-query attention (num_key_value_heads,
head_dim when it is not hidden / heads), multi-head latent attention
(kv_lora_rank, q_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim),
mixtures of experts (num_experts / n_routed_experts / num_local_experts,
num_experts_per_tok, moe_intermediate_size, shared experts as
n_shared_experts or shared_expert_intermediate_size, dense-first layers as
first_k_dense_replace or a leading mlp_only_layers), multi-token
prediction modules (num_nextn_predict_layers, mtp_num_hidden_layers), a
multimodal checkpoint's text_config, and the attention kinds of
docs/model.md: sliding-window layers (sliding_window with layer_types, or
on every layer) and Gated DeltaNet linear-attention layers (layer_types
linear_attention, linear_num_key_heads, linear_num_value_heads,
linear_key_head_dim, linear_value_head_dim, linear_conv_kernel_dim,
mamba_ssm_dtype) beside full attention every full_attention_interval-th
layer ((i + 1) % k == 0); attn_output_gate; DeepSeek sparse attention
(index_topk, index_n_heads, index_head_dim); attention sinks (gpt-oss:
transformers models/gpt_oss/modeling_gpt_oss.py GptOssAttention.sinks, not
a config field); parts a quantized checkpoint keeps in BF16
(quantization_config modules_to_not_convert / ignore / exclude_modules
naming self_attn: attn_weight_precision "bf16"). What the model keys
cannot express is named with the field that says it:
  layer_types                    a pattern of kinds other than one in
                                 every k layers full (or sliding and
                                 linear layers in one model);
  max_window_layers              windows on a suffix of the layers only
                                 (Qwen2's use_sliding_window);
  decoder_sparse_step, moe_layer_freq, mlp_only_layers  MoE layers
                                 interleaved with dense ones;
  shared_expert_intermediate_size  not a whole number of experts.
Architecture facts that config.json does not state, from the modeling
code of transformers: Qwen3, Qwen3-MoE and Qwen3.5 normalise each query
and key head (modeling_qwen3.py Qwen3Attention.q_norm/k_norm; qk_norm);
gpt-oss adds the attention sinks above. The C reader of `model = {
hf_config = "..."; }` (driver/) reads the same fields the same way.
Standard library only.
"""
import json
import os

# model_type prefixes whose attention normalises each query and key head
# (transformers models/qwen3/modeling_qwen3.py, qwen3_moe, qwen3_5_moe:
# q_norm, k_norm RMSNorm over head_dim)
QK_NORM_TYPES = ("qwen3",)
# model_type prefixes with a learned attention-sink logit per head
# (transformers models/gpt_oss/modeling_gpt_oss.py: self.sinks)
SINK_TYPES = ("gpt_oss",)


class HFModel:
    """A config.json read into model keys (see the module docstring)."""

    def __init__(self):
        self.keys = {}
        self.unsupported = []
        self.approx = []
        self.quant = {}
        self.notes = []
        self.model_type = ""
        self.mtp_modules = 0
        self.window = 0

    @property
    def moe(self):
        return self.keys.get("experts", 0) > 0


def path_for(hf_dir, model_path):
    """DIR/ORG--NAME_config.json for a model_path ORG/NAME."""
    return os.path.join(hf_dir, model_path.strip().replace("/", "--") + "_config.json")


def _text(cfg):
    """A multimodal checkpoint's language model (text_config) merged over
    the top level (its architectures, quantization_config)."""
    tc = cfg.get("text_config")
    if not isinstance(tc, dict):
        return dict(cfg), False
    out = dict(cfg)
    out.update(tc)
    return out, True


def _quant(cfg):
    """The checkpoint's stored precision from quantization_config: the
    weights' dtype, whether the attention projections are left out of it
    (experts_only: only the MLP/experts quantised), the KV-cache dtype
    the checkpoint asks for, and block/group scaling."""
    q = cfg.get("quantization_config")
    if not isinstance(q, dict):
        return {}
    method = str(q.get("quant_method") or q.get("quant_algo") or "").lower()
    skip = " ".join(str(x) for x in (q.get("modules_to_not_convert") or q.get("ignore") or
                                     q.get("exclude_modules") or []))
    out = {"method": method}
    if method == "fp8":
        out["weights"] = "fp8"
        out["block"] = q.get("weight_block_size")
    elif method in ("mxfp4", "nvfp4", "modelopt_fp4"):
        out["weights"] = "fp4"
    elif method in ("awq", "gptq", "awq_marlin", "gptq_marlin") and q.get("bits") == 4:
        out["weights"] = "int4"
    elif method == "modelopt":
        algo = str(q.get("quant_algo") or "").lower()
        out["weights"] = {"fp8": "fp8", "nvfp4": "fp4"}.get(algo)
    kv = str(q.get("kv_cache_quant_algo") or q.get("kv_cache_scheme") or "").lower()
    if "fp8" in kv:
        out["kv"] = "fp8"
    out["experts_only"] = "self_attn" in skip or "attn" in skip.split(".")
    return out


def _layer_kinds(cfg):
    """Counts of the layer_types list ({} when the config has none)."""
    kinds = {}
    for t in cfg.get("layer_types") or []:
        kinds[t] = kinds.get(t, 0) + 1
    return kinds


def _interval(types, n):
    """k when layer i of `types` is full attention exactly when (i + 1) % k
    == 0 (0: none is), else None."""
    full = [i for i, t in enumerate(types) if t == "full_attention"]
    if not full:
        return 0
    k = full[0] + 1
    return k if full == list(range(k - 1, n, k)) else None


# bytes of a recurrent-state element by mamba_ssm_dtype
STATE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


def _pattern(m, why):
    m.unsupported.append(("layer_types", why))
    m.approx.append(("layer_types", "every layer full attention"))


def _linear(cfg, m, types, n):
    """Gated DeltaNet layers beside full attention."""
    k = _interval(types, n) if types else cfg.get("full_attention_interval") or 0
    if k is None:
        _pattern(m, "linear_attention and full_attention layers in no one-in-k pattern")
        return
    for f in ("linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim",
              "linear_value_head_dim"):
        if not isinstance(cfg.get(f), int) or cfg[f] <= 0:
            raise ValueError(f"field {f}: missing or not a positive integer")
    dt = str(cfg.get("mamba_ssm_dtype") or "float32")
    if dt not in STATE_BYTES:
        m.unsupported.append(("mamba_ssm_dtype", f"state dtype {dt!r}"))
        return
    m.keys.update(full_attention_interval=k, linear_key_heads=cfg["linear_num_key_heads"],
                  linear_value_heads=cfg["linear_num_value_heads"],
                  linear_key_head_dim=cfg["linear_key_head_dim"],
                  linear_value_head_dim=cfg["linear_value_head_dim"],
                  linear_conv_kernel=cfg.get("linear_conv_kernel_dim") or 0,
                  linear_state_bytes=STATE_BYTES[dt])


def _kinds(cfg, m):
    """Sliding-window or Gated DeltaNet layers beside full attention."""
    kinds = _layer_kinds(cfg)
    types = cfg.get("layer_types") or []
    n = cfg["num_hidden_layers"]
    win = cfg.get("sliding_window")
    known = ("full_attention", "sliding_attention", "linear_attention")
    if types and len(types) != n:
        raise ValueError(f"field layer_types: {len(types)} entries, num_hidden_layers {n}")
    if any(t not in known for t in kinds) or (kinds.get("sliding_attention") and
                                              kinds.get("linear_attention")):
        _pattern(m, f"layer kinds {sorted(kinds)}")
        return
    if kinds.get("linear_attention") or (not types and cfg.get("linear_num_value_heads")):
        _linear(cfg, m, types, n)
        return
    if not win:
        return
    if types:
        if not kinds.get("sliding_attention"):
            return
        k = _interval(types, n)
        if k is None:
            _pattern(m, "sliding_attention and full_attention layers in no one-in-k pattern")
            return
    elif "use_sliding_window" in cfg:
        # Qwen2-style: when on, the layers from max_window_layers on slide
        lo = cfg.get("max_window_layers") or 0
        if not cfg["use_sliding_window"] or lo >= n:
            return
        if lo > 0:
            m.unsupported.append(("max_window_layers", f"windows on layers {lo} to {n - 1} "
                                  "only"))
            m.approx.append(("max_window_layers", "every layer full attention"))
            return
        k = 0
    else:
        k = 0  # Mistral-style: a window on every layer
    m.window = win
    m.keys.update(sliding_window=win, full_attention_interval=k)


def _attention(cfg, m):
    h = cfg["hidden_size"]
    heads = cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads") or heads
    m.keys.update(heads=heads, kv_heads=kv)
    if cfg.get("kv_lora_rank"):
        m.keys.update(kv_lora_rank=cfg["kv_lora_rank"], q_lora_rank=cfg.get("q_lora_rank") or 0,
                      qk_nope_head_dim=cfg["qk_nope_head_dim"],
                      qk_rope_head_dim=cfg["qk_rope_head_dim"], v_head_dim=cfg["v_head_dim"])
        m.keys["arch"] = "deepseek"
    else:
        hd = cfg.get("head_dim") or h // heads
        if hd * heads != h:
            m.keys["head_dim"] = hd
    if m.model_type.startswith(QK_NORM_TYPES):
        m.keys["qk_norm"] = "true"
    if cfg.get("index_topk") or cfg.get("index_n_heads"):
        for f in ("index_topk", "index_n_heads", "index_head_dim"):
            if not isinstance(cfg.get(f), int) or cfg[f] <= 0:
                raise ValueError(f"field {f}: missing or not a positive integer")
        m.keys.update(index_topk=cfg["index_topk"], index_heads=cfg["index_n_heads"],
                      index_head_dim=cfg["index_head_dim"])
    if cfg.get("attn_output_gate"):
        m.keys["attn_output_gate"] = "true"
    if m.model_type.startswith(SINK_TYPES):
        m.keys["attn_sinks"] = "true"
    _kinds(cfg, m)


def _experts(cfg, m):
    E = cfg.get("num_experts") or cfg.get("n_routed_experts") or cfg.get("num_local_experts") or 0
    if not E:
        return
    k = cfg.get("num_experts_per_tok") or cfg.get("experts_per_token") or 0
    fe = cfg.get("moe_intermediate_size") or cfg["intermediate_size"]
    m.keys.update(experts=E, top_k=k, expert_ffn=fe)
    if cfg.get("n_shared_experts"):
        m.keys["shared_experts"] = cfg["n_shared_experts"]
    elif cfg.get("shared_expert_intermediate_size"):
        fs = cfg["shared_expert_intermediate_size"]
        if fs % fe:
            m.unsupported.append(("shared_expert_intermediate_size",
                                  f"{fs} is not a whole number of experts of {fe}"))
            m.approx.append(("shared_expert_intermediate_size", f"{-(-fs // fe)} shared experts"))
            m.keys["shared_experts"] = -(-fs // fe)
        else:
            m.keys["shared_experts"] = fs // fe
    n = cfg["num_hidden_layers"]
    dense = cfg.get("first_k_dense_replace") or 0
    only = sorted(cfg.get("mlp_only_layers") or [])
    if only:
        if only == list(range(len(only))):
            dense = max(dense, len(only))
        else:
            m.unsupported.append(("mlp_only_layers", f"dense layers {only} among the MoE ones"))
            m.approx.append(("mlp_only_layers", "every layer MoE"))
    step = cfg.get("decoder_sparse_step") or cfg.get("moe_layer_freq") or 1
    if step != 1:
        m.unsupported.append(("decoder_sparse_step", f"a MoE layer every {step} layers"))
        m.approx.append(("decoder_sparse_step", "every layer MoE"))
    if dense:
        m.keys["dense_layers"] = dense
        m.keys["arch"] = "deepseek"
    if m.keys.get("shared_experts"):
        m.keys["arch"] = "deepseek"
    if dense < n and dense and "intermediate_size" not in cfg:
        m.unsupported.append(("intermediate_size", "dense layers without an FFN size"))


def parse(cfg):
    """An HFModel from a config.json's dict."""
    m = HFModel()
    cfg, multimodal = _text(cfg)
    m.model_type = str(cfg.get("model_type") or "")
    for f in ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size"):
        if not isinstance(cfg.get(f), int) or cfg[f] <= 0:
            raise ValueError(f"field {f}: missing or not a positive integer")
    m.keys.update(type="llm", arch="llama", layers=cfg["num_hidden_layers"],
                  hidden=cfg["hidden_size"], vocab=cfg["vocab_size"])
    ffn = cfg.get("intermediate_size") or cfg.get("moe_intermediate_size") or 4 * cfg["hidden_size"]
    m.keys["ffn"] = ffn
    act = str(cfg.get("hidden_act") or cfg.get("hidden_activation") or "silu").lower()
    # SiLU-gated MLPs (Llama, Qwen, DeepSeek, gpt-oss) are the three-matrix
    # SwiGLU; a plain GeLU MLP has two
    m.keys["mlp"] = "swiglu" if act in ("silu", "swish", "swiglu") else "gelu"
    if act.startswith("gelu") and m.model_type.startswith("gemma"):
        m.keys["mlp"] = "swiglu"  # Gemma's GeGLU: three matrices
    m.keys["position"] = "rope" if (cfg.get("rope_theta") or cfg.get("rope_parameters") or
                                    cfg.get("rope_scaling")) else "learned"
    m.keys["untied_embeddings"] = "false" if cfg.get("tie_word_embeddings") else "true"
    m.keys["dropout"] = "false"
    _attention(cfg, m)
    _experts(cfg, m)
    m.mtp_modules = cfg.get("num_nextn_predict_layers") or cfg.get("mtp_num_hidden_layers") or 0
    if m.mtp_modules:
        m.keys["mtp_layers"] = m.mtp_modules  # in memory only when they draft
    m.quant = _quant(cfg)
    if m.quant.get("weights") and m.quant.get("experts_only"):
        m.keys["attn_weight_precision"] = "bf16"  # modules_to_not_convert: self_attn
    if multimodal and isinstance(cfg.get("vision_config"), dict):
        m.notes.append("vision_config: the vision encoder is not modelled (text prompts)")
    return m


def read(path):
    """An HFModel from a config.json file; ValueError names the file and
    field it cannot read."""
    try:
        with open(path) as f:
            cfg = json.load(f)
    except OSError as e:
        raise ValueError(f"{path}: {e.strerror}")
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}: not JSON ({e.msg})")
    try:
        return parse(cfg)
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path}: {e}")


def model_group(m, name, seq_len):
    """The point's `model = { ... }` lines for HFModel m."""
    keys = dict(m.keys)
    keys["seq_len"] = seq_len
    order = ("type", "arch", "layers", "hidden", "ffn", "heads", "kv_heads", "head_dim",
             "seq_len", "vocab", "mlp", "position", "untied_embeddings", "dropout", "qk_norm",
             "experts", "top_k", "shared_experts", "expert_ffn", "dense_layers", "q_lora_rank",
             "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "mtp_layers",
             "sliding_window", "full_attention_interval", "attn_sinks", "attn_output_gate",
             "linear_key_heads", "linear_value_heads", "linear_key_head_dim",
             "linear_value_head_dim", "linear_conv_kernel", "linear_state_bytes", "index_topk",
             "index_heads", "index_head_dim", "attn_weight_precision",
             "dense_weight_precision", "expert_weight_precision")
    strings = ("type", "arch", "mlp", "position", "attn_weight_precision",
               "dense_weight_precision", "expert_weight_precision")
    parts = [f'name = "{name}";']
    for k in order:
        if k not in keys:
            continue
        v = keys[k]
        parts.append(f'{k} = "{v}";' if k in strings else f"{k} = {v};")
    lines, cur = [], "  "
    for p in parts:
        if len(cur) + len(p) > 96:
            lines.append(cur.rstrip())
            cur = "  "
        cur += p + " "
    lines.append(cur.rstrip())
    return ["model = {"] + lines + ["};"]
