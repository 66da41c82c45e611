/*
 * hf_config.c - a Hugging Face config.json as a detailed LLM model
 * (hf_config.h), with jansson: the fields of scripts/hf_config.py read
 * the same way, so that a point naming a config and validate.py's
 * mapping of it are one model.
 *
 * Invariants: every field is looked up in text_config first (a
 * multimodal checkpoint's language model), then at the top level; an
 * integer field is a JSON integer (or a real with an integral value);
 * the first field that cannot be read or expressed stops the read, named
 * in the error; nothing is allocated past the call (the document is
 * freed on every path).
 */
#include "hf_config.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../cost/task.h"

/* The document being read, and the first error. */
typedef struct hf_doc {
    json_t *root, *text;
    const char *path;
    char *err;
    size_t errsize;
    bool failed;
} hf_doc;

static void hf_fail(hf_doc *d, const char *field, const char *fmt, ...)
{
    if (d->failed)
        return;
    d->failed = true;
    int n = snprintf(d->err, d->errsize, "%s: field %s: ", d->path, field);
    if (n < 0 || (size_t)n >= d->errsize)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->err + n, d->errsize - (size_t)n, fmt, ap);
    va_end(ap);
}

static json_t *hf_get(const hf_doc *d, const char *k)
{
    json_t *v = d->text ? json_object_get(d->text, k) : NULL;
    return v ? v : json_object_get(d->root, k);
}

/* An integer field: its value, `dflt` when absent or null, and a failure
 * when present but not an integer of at most 2^40. */
static int64_t hf_int(hf_doc *d, const char *k, int64_t dflt)
{
    json_t *v = hf_get(d, k);
    if (!v || json_is_null(v))
        return dflt;
    double x = json_is_integer(v) ? (double)json_integer_value(v)
               : json_is_real(v)  ? json_real_value(v)
                                  : -1.0;
    if (!(x >= 0.0 && x <= (double)(INT64_C(1) << 40) && x == (double)(int64_t)x)) {
        hf_fail(d, k, "not a non-negative integer");
        return dflt;
    }
    return (int64_t)x;
}

/* A required positive integer field. */
static int64_t hf_need(hf_doc *d, const char *k)
{
    int64_t v = hf_int(d, k, 0);
    if (v <= 0)
        hf_fail(d, k, "missing or not a positive integer");
    return v;
}

/* The first of `a`, `b` (and `c`) that is set and positive. */
static int64_t hf_first(hf_doc *d, const char *a, const char *b, const char *c)
{
    int64_t v = hf_int(d, a, 0);
    if (v <= 0 && b)
        v = hf_int(d, b, 0);
    if (v <= 0 && c)
        v = hf_int(d, c, 0);
    return v;
}

static const char *hf_str(const hf_doc *d, const char *k)
{
    json_t *v = hf_get(d, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static bool hf_true(const hf_doc *d, const char *k)
{
    return json_is_true(hf_get(d, k));
}

static bool hf_prefix(const char *s, const char *p)
{
    return s && strncmp(s, p, strlen(p)) == 0;
}

/* A lower-cased copy of s (at most n - 1 bytes). */
static void hf_lower(const char *s, char *out, size_t n)
{
    size_t i = 0;
    for (; s && s[i] && i + 1 < n; i++)
        out[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
    out[i] = '\0';
}

/* ---- attention kinds */

enum { HF_FULL = 0, HF_SLIDING = 1, HF_LINEAR = 2, HF_OTHER = 3 };

static int hf_kind(const char *t)
{
    if (!t)
        return HF_OTHER;
    if (strcmp(t, "full_attention") == 0)
        return HF_FULL;
    if (strcmp(t, "sliding_attention") == 0)
        return HF_SLIDING;
    return strcmp(t, "linear_attention") == 0 ? HF_LINEAR : HF_OTHER;
}

/* The interval k of layer_types (layer i full exactly when (i + 1) % k
 * == 0; 0: none full), or -1 when it has no such pattern; counts of each
 * kind in n[]. */
static int64_t hf_interval(json_t *types, int64_t layers, int64_t n[4])
{
    int64_t k = 0;
    size_t len = json_array_size(types);
    memset(n, 0, 4 * sizeof n[0]);
    for (size_t i = 0; i < len; i++) {
        int kind = hf_kind(json_string_value(json_array_get(types, i)));
        n[kind]++;
        if (kind == HF_FULL && k == 0)
            k = (int64_t)i + 1;
    }
    if ((int64_t)len != layers)
        return -2;
    for (size_t i = 0; k > 0 && i < len; i++) {
        bool full = hf_kind(json_string_value(json_array_get(types, i))) == HF_FULL;
        if (full != (((int64_t)i + 1) % k == 0))
            return -1;
    }
    return k;
}

/* Gated DeltaNet layers (linear_attention) beside full attention. */
static void hf_linear(hf_doc *d, model_t *m, int64_t k)
{
    model_detailed_t *x = &m->d;
    x->full_attention_interval = k;
    x->linear_key_heads = hf_need(d, "linear_num_key_heads");
    x->linear_value_heads = hf_need(d, "linear_num_value_heads");
    x->linear_key_head_dim = hf_need(d, "linear_key_head_dim");
    x->linear_value_head_dim = hf_need(d, "linear_value_head_dim");
    x->linear_conv_kernel = hf_int(d, "linear_conv_kernel_dim", 0);
    const char *dt = hf_str(d, "mamba_ssm_dtype");
    if (!dt || strcmp(dt, "float32") == 0)
        x->linear_state_bytes = 4;
    else if (strcmp(dt, "bfloat16") == 0 || strcmp(dt, "float16") == 0)
        x->linear_state_bytes = 2;
    else
        hf_fail(d, "mamba_ssm_dtype", "state dtype \"%s\" (float32, bfloat16, float16)", dt);
}

/* Sliding-window or linear-attention layers (hf_config.py _kinds). */
static void hf_kinds(hf_doc *d, model_t *m)
{
    json_t *types = hf_get(d, "layer_types");
    int64_t n[4], win = hf_int(d, "sliding_window", 0);
    if (types && !json_is_array(types)) {
        hf_fail(d, "layer_types", "not a list");
        return;
    }
    int64_t k = types ? hf_interval(types, m->layers, n) : 0;
    if (k == -2) {
        hf_fail(d, "layer_types", "%zu entries, num_hidden_layers %lld", json_array_size(types),
                (long long)m->layers);
        return;
    }
    if (types && (n[HF_OTHER] > 0 || (n[HF_SLIDING] > 0 && n[HF_LINEAR] > 0))) {
        hf_fail(d, "layer_types", "layer kinds other than full_attention with one of "
                "sliding_attention or linear_attention");
        return;
    }
    bool lin = types ? n[HF_LINEAR] > 0 : hf_int(d, "linear_num_value_heads", 0) > 0;
    if (lin || (types && n[HF_SLIDING] > 0)) {
        if (k < 0) {
            hf_fail(d, "layer_types", "%s and full_attention layers in no one-in-k pattern",
                    lin ? "linear_attention" : "sliding_attention");
            return;
        }
    }
    if (lin) {
        hf_linear(d, m, types ? k : hf_int(d, "full_attention_interval", 0));
        return;
    }
    if (win <= 0 || (types && n[HF_SLIDING] == 0))
        return;
    if (!types && hf_get(d, "use_sliding_window")) {
        /* Qwen2-style: when on, the layers from max_window_layers on slide */
        int64_t lo = hf_int(d, "max_window_layers", 0);
        if (!hf_true(d, "use_sliding_window") || lo >= m->layers)
            return;
        if (lo > 0) {
            hf_fail(d, "max_window_layers", "windows on layers %lld to %lld only", (long long)lo,
                    (long long)(m->layers - 1));
            return;
        }
    }
    m->d.sliding_window = win;
    m->d.full_attention_interval = types ? k : 0; /* Mistral-style: every layer */
}

/* Grouped-query or multi-head latent attention, sparse attention, the
 * output gate, sinks, q/k norms (hf_config.py _attention). */
static void hf_attention(hf_doc *d, model_t *m, const char *type)
{
    model_detailed_t *x = &m->d;
    m->kv_heads = hf_int(d, "num_key_value_heads", 0);
    if (m->kv_heads <= 0)
        m->kv_heads = m->heads;
    if (hf_int(d, "kv_lora_rank", 0) > 0) {
        x->kv_lora_rank = hf_int(d, "kv_lora_rank", 0);
        x->q_lora_rank = hf_int(d, "q_lora_rank", 0);
        x->qk_nope_head_dim = hf_need(d, "qk_nope_head_dim");
        x->qk_rope_head_dim = hf_need(d, "qk_rope_head_dim");
        x->v_head_dim = hf_need(d, "v_head_dim");
        x->arch = MODEL_ARCH_DEEPSEEK;
    } else {
        int64_t hd = hf_int(d, "head_dim", 0);
        if (hd <= 0)
            hd = m->hidden / m->heads;
        if (hd * m->heads != m->hidden)
            x->head_dim = hd;
    }
    x->qk_norm = hf_prefix(type, "qwen3"); /* transformers modeling_qwen3.py q_norm/k_norm */
    if (hf_int(d, "index_topk", 0) > 0 || hf_int(d, "index_n_heads", 0) > 0) {
        x->index_topk = hf_need(d, "index_topk");
        x->index_heads = hf_need(d, "index_n_heads");
        x->index_head_dim = hf_need(d, "index_head_dim");
    }
    x->attn_output_gate = hf_true(d, "attn_output_gate");
    x->attn_sinks = hf_prefix(type, "gpt_oss"); /* modeling_gpt_oss.py: self.sinks */
    hf_kinds(d, m);
}

/* Experts, shared experts, dense-first layers (hf_config.py _experts). */
static void hf_experts(hf_doc *d, model_t *m)
{
    model_detailed_t *x = &m->d;
    int64_t E = hf_first(d, "num_experts", "n_routed_experts", "num_local_experts");
    if (E <= 0)
        return;
    x->experts = E;
    x->top_k = hf_first(d, "num_experts_per_tok", "experts_per_token", NULL);
    int64_t fe = hf_first(d, "moe_intermediate_size", "intermediate_size", NULL);
    if (fe <= 0) {
        hf_fail(d, "moe_intermediate_size", "missing (and no intermediate_size)");
        return;
    }
    x->expert_ffn = fe;
    int64_t fs = hf_int(d, "shared_expert_intermediate_size", 0);
    if (hf_int(d, "n_shared_experts", 0) > 0)
        x->shared_experts = hf_int(d, "n_shared_experts", 0);
    else if (fs > 0 && fs % fe != 0)
        hf_fail(d, "shared_expert_intermediate_size", "%lld is not a whole number of experts "
                "of %lld", (long long)fs, (long long)fe);
    else if (fs > 0)
        x->shared_experts = fs / fe;
    int64_t dense = hf_int(d, "first_k_dense_replace", 0);
    json_t *only = hf_get(d, "mlp_only_layers");
    size_t no = json_is_array(only) ? json_array_size(only) : 0;
    for (size_t i = 0; i < no; i++) { /* a leading run of dense layers only */
        json_t *v = json_array_get(only, i);
        if (!json_is_integer(v) || json_integer_value(v) != (json_int_t)i) {
            hf_fail(d, "mlp_only_layers", "dense layers among the MoE ones");
            return;
        }
    }
    if ((int64_t)no > dense)
        dense = (int64_t)no;
    int64_t step = hf_first(d, "decoder_sparse_step", "moe_layer_freq", NULL);
    if (step > 1)
        hf_fail(d, step == hf_int(d, "decoder_sparse_step", 0) ? "decoder_sparse_step"
                                                                : "moe_layer_freq",
                "a MoE layer every %lld layers", (long long)step);
    x->dense_layers = dense;
    if (dense > 0 || x->shared_experts > 0)
        x->arch = MODEL_ARCH_DEEPSEEK;
    if (dense > 0 && dense < m->layers && hf_int(d, "intermediate_size", 0) <= 0)
        hf_fail(d, "intermediate_size", "dense layers without an FFN size");
}

/* The parts a quantized checkpoint keeps in BF16 (hf_config.py _quant):
 * a quantization of the weights whose skipped modules name the
 * attention leaves the attention in BF16. */
static void hf_quant(hf_doc *d, model_t *m)
{
    json_t *q = hf_get(d, "quantization_config");
    if (!json_is_object(q))
        return;
    const char *meth = json_string_value(json_object_get(q, "quant_method"));
    if (!meth)
        meth = json_string_value(json_object_get(q, "quant_algo"));
    char lm[32];
    hf_lower(meth, lm, sizeof lm);
    json_t *bits = json_object_get(q, "bits");
    bool quantized = strcmp(lm, "fp8") == 0 || strcmp(lm, "mxfp4") == 0 ||
                     strcmp(lm, "nvfp4") == 0 || strcmp(lm, "modelopt_fp4") == 0 ||
                     strcmp(lm, "modelopt") == 0 ||
                     ((hf_prefix(lm, "awq") || hf_prefix(lm, "gptq")) && json_is_integer(bits) &&
                      json_integer_value(bits) == 4);
    const char *keys[] = {"modules_to_not_convert", "ignore", "exclude_modules"};
    json_t *skip = NULL;
    for (size_t i = 0; i < 3 && !json_array_size(skip); i++)
        skip = json_object_get(q, keys[i]);
    bool attn = false; /* an entry naming self_attn, or a module path component attn */
    for (size_t i = 0; i < json_array_size(skip); i++) {
        const char *s = json_string_value(json_array_get(skip, i));
        for (const char *p = s; p && *p && !attn; p = strchr(p, '.') ? strchr(p, '.') + 1 : NULL)
            attn = strncmp(p, "attn", 4) == 0 && (p[4] == '.' || p[4] == '\0');
        attn = attn || (s && strstr(s, "self_attn"));
    }
    if (quantized && attn)
        m->d.attn_weight_precision = TASK_W_BF16;
}

/* The model's name: ORG--NAME of .../ORG--NAME_config.json. */
static void hf_name(const char *path, model_t *m)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strlen(b);
    const char *tails[] = {"_config.json", ".json"};
    for (size_t i = 0; i < 2; i++) {
        size_t t = strlen(tails[i]);
        if (n > t && strcmp(b + n - t, tails[i]) == 0) {
            n -= t;
            break;
        }
    }
    if (n >= sizeof m->name)
        n = sizeof m->name - 1;
    memcpy(m->name, b, n);
    m->name[n] = '\0';
}

static void hf_parse(hf_doc *d, model_t *m)
{
    model_detailed_t *x = &m->d;
    const char *type = hf_str(d, "model_type");
    m->kind = MODEL_LLM;
    m->causal = true;
    x->arch = MODEL_ARCH_LLAMA;
    x->dropout = 0;
    m->hidden = hf_need(d, "hidden_size");
    m->layers = hf_need(d, "num_hidden_layers");
    m->heads = hf_need(d, "num_attention_heads");
    m->vocab = hf_need(d, "vocab_size");
    if (d->failed)
        return;
    m->ffn = hf_first(d, "intermediate_size", "moe_intermediate_size", NULL);
    if (m->ffn <= 0)
        m->ffn = 4 * m->hidden;
    m->seq_len = hf_int(d, "max_position_embeddings", 0);
    /* SiLU-gated MLPs are the three-matrix SwiGLU, a plain GeLU MLP has
     * two; Gemma's GeGLU has three */
    char act[32];
    const char *a = hf_str(d, "hidden_act");
    hf_lower(a ? a : hf_str(d, "hidden_activation"), act, sizeof act);
    bool silu = !act[0] || strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0 ||
                strcmp(act, "swiglu") == 0;
    m->mlp = silu || (hf_prefix(act, "gelu") && hf_prefix(type, "gemma")) ? MODEL_MLP_SWIGLU
                                                                          : MODEL_MLP_GELU;
    x->position = hf_get(d, "rope_theta") || hf_get(d, "rope_parameters") ||
                          hf_get(d, "rope_scaling")
                      ? MODEL_POS_ROPE
                      : MODEL_POS_LEARNED;
    x->untied_embeddings = !hf_true(d, "tie_word_embeddings");
    hf_attention(d, m, type);
    hf_experts(d, m);
    x->mtp_layers = hf_first(d, "num_nextn_predict_layers", "mtp_num_hidden_layers", NULL);
    hf_quant(d, m);
}

int hf_config_read(const char *path, model_t *m, char *err, size_t errsize)
{
    memset(m, 0, sizeof *m);
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        if (je.line < 1)
            snprintf(err, errsize, "%s: cannot read the Hugging Face config (%s)", path, je.text);
        else
            snprintf(err, errsize, "%s:%d:%d: not JSON (%s)", path, je.line, je.column, je.text);
        return -1;
    }
    hf_doc d = {root, NULL, path, err, errsize, false};
    if (!json_is_object(root)) {
        snprintf(err, errsize, "%s: not a JSON object", path);
        json_decref(root);
        return -1;
    }
    json_t *tc = json_object_get(root, "text_config");
    d.text = json_is_object(tc) ? tc : NULL;
    hf_name(path, m);
    hf_parse(&d, m);
    json_decref(root);
    return d.failed ? -1 : 0;
}
