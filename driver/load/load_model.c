/*
 * load_model.c - reading models: MAD-Max (models.cfg) and detailed
 * (detailed_models.cfg: LLM figures, architecture, MoE, MLA; or DLRM
 * tables and MLP widths).
 *
 * Each fidelity's keys are one table here; load_model()/load_model_detailed()
 * walk it (load_value.c's load_value_group) and then check what the table cannot:
 * positive sizes, heads dividing hidden, per-table lists of the right
 * length. Every failure names file, line and key.
 */
#include "load.h"
#include "load_key.h"

#include "../../cost/detailed.h"
#include "hf_config.h"
#include "range.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define MK(n, t, k, r, d, ...) LOAD_KEY(#n, t, offsetof(model_t, n), k, r, d, __VA_ARGS__)
static const load_key model_keys[] = {
    MK(name, LT_STRING, LK_ALL, LR_YES, "catalogue name", LOAD_NONUM),
    LOAD_KEY("type", LT_MODEL_KIND, offsetof(model_t, kind), LK_ALL, LR_YES,
        "\"dlrm\" or \"llm\"", LOAD_NONUM),
    MK(bytes_per_dense_param, LT_INT, LK_ALL, LR_YES,
       "bytes per dense parameter: 8/4/2/1 selects the FP64/FP32/FP16/INT8 peak",
       LOAD_INT(1, 8, "bytes/parameter")),
    MK(bytes_per_emb_param, LT_INT, LK_ALL, LR_YES, "bytes per embedding parameter",
       LOAD_INT(0, 8, "bytes/parameter")),
    MK(bot_mlp_layers, LT_INT, LK_DLRM, LR_YES, "bottom MLP layers",
       LOAD_INT(1, RANGE_P16, "layers")),
    MK(top_mlp_layers, LT_INT, LK_DLRM, LR_YES, "top MLP layers",
       LOAD_INT(1, RANGE_P16, "layers")),
    MK(mlp_dim, LT_INT, LK_DLRM, LR_YES, "MLP width (square layers)",
       LOAD_INT(1, RANGE_P24, "1")),
    MK(tables, LT_INT, LK_DLRM, LR_YES, "embedding tables",
       LOAD_INT(1, INT64_C(1) << 20, "tables")),
    MK(rows_per_table, LT_INT, LK_DLRM, LR_YES, "rows per embedding table",
       LOAD_INT(1, RANGE_P40, "rows")),
    MK(emb_dim, LT_INT, LK_DLRM, LR_YES, "embedding dimension", LOAD_INT(1, RANGE_P16, "1")),
    MK(pooling, LT_INT, LK_DLRM, LR_YES, "lookups pooled per table per sample",
       LOAD_INT(1, INT64_C(1) << 20, "lookups per table per sample")),
    MK(layers, LT_INT, LK_LLM, LR_YES, "transformer layers", LOAD_INT(1, RANGE_P16, "1")),
    MK(heads, LT_INT, LK_LLM, LR_YES, "attention heads", LOAD_INT(1, RANGE_P16, "1")),
    MK(kv_heads, LT_INT, LK_LLM, LR_NO, "key/value heads (default: heads)",
       LOAD_INT(0, RANGE_P16, "1")),
    MK(hidden, LT_INT, LK_LLM, LR_YES, "model (attention) dimension",
       LOAD_INT(1, RANGE_P24, "1")),
    MK(ffn, LT_INT, LK_LLM, LR_YES, "feed-forward dimension", LOAD_INT(1, RANGE_P24, "1")),
    MK(seq_len, LT_INT, LK_LLM, LR_YES, "tokens per sample", LOAD_INT(1, RANGE_P24, "tokens")),
    MK(vocab, LT_INT, LK_LLM, LR_YES, "word-embedding rows", LOAD_INT(0, RANGE_P24, "1")),
    LOAD_KEY("mlp", LT_MLP, offsetof(model_t, mlp), LK_LLM, LR_NO,
        "\"gelu\" (default) or \"swiglu\"", LOAD_NONUM),
    MK(causal, LT_BOOL, LK_LLM, LR_NO, "decoder (true, default) or encoder", LOAD_UNIT("bool")),
};

const load_table load_model_table = {model_keys, NKEYS(model_keys)};

/* Detailed fidelity: LLM figures + model.d, or DLRM figures. */
#define DK(n, t, r, d, ...) LOAD_KEY(#n, t, offsetof(model_t, n), LK_LLM, r, d, __VA_ARGS__)
#define DKD(n, t, doc, ...) \
    LOAD_KEY(#n, t, offsetof(model_t, d.n), LK_LLM, LR_NO, doc, __VA_ARGS__)
#define DKR(n, t, r, d, ...) LOAD_KEY(#n, t, offsetof(model_t, n), LK_DLRM, r, d, __VA_ARGS__)
static const load_key dmodel_keys[] = {
    LOAD_KEY("name", LT_STRING, offsetof(model_t, name), LK_ALL, LR_YES, "catalogue name",
             LOAD_NONUM),
    LOAD_KEY("type", LT_MODEL_KIND, offsetof(model_t, kind), LK_ALL, LR_YES, "\"llm\" or \"dlrm\"",
             LOAD_NONUM),
    DKR(tables, LT_INT, LR_YES, "embedding tables", LOAD_INT(1, INT64_C(1) << 20, "tables")),
    LOAD_KEY("rows_per_table", LT_ANY, 0, LK_DLRM, LR_YES,
        "rows per embedding table: one number, or a list with one per table",
        LOAD_INT(1, RANGE_P40, "rows")),
    DKR(emb_dim, LT_INT, LR_YES, "embedding dimension (= the bottom MLP's output)",
        LOAD_INT(1, RANGE_P16, "1")),
    LOAD_KEY("pooling", LT_ANY, 0, LK_DLRM, LR_YES,
        "lookups pooled per table per sample: one number, or a "
        "list with one per table (multi-hot)",
        LOAD_INT(1, RANGE_P24, "lookups per table per sample")),
    LOAD_KEY("interaction", LT_ANY, 0, LK_DLRM, LR_NO,
        "\"dot\" (default, pairwise dots) or \"dcnv2\" (low-rank cross layers)", LOAD_NONUM),
    LOAD_KEY("cross_layers", LT_INT, offsetof(model_t, d.cross_layers), LK_DLRM, LR_NO,
        "dcnv2: cross layers (default 3)", LOAD_INT(0, RANGE_P40, "layers")),
    LOAD_KEY("cross_rank", LT_INT, offsetof(model_t, d.cross_rank), LK_DLRM, LR_NO,
        "dcnv2: rank of each cross layer's projection (default 512)",
        LOAD_INT(0, RANGE_P40, "1")),
    DKR(bytes_per_emb_param, LT_INT, LR_NO, "bytes per embedding element (default 4, fp32)",
        LOAD_INT(0, 8, "bytes/parameter")),
    LOAD_KEY("bot_mlp", LT_ANY, 0, LK_DLRM, LR_YES,
        "bottom MLP widths, dense features first, emb_dim last: [13, 512, 256, 128]",
        LOAD_INT(1, RANGE_P24, "1")),
    LOAD_KEY("top_mlp", LT_ANY, 0, LK_DLRM, LR_YES,
        "top MLP output widths; input emb_dim + tables (tables "
        "+ 1) / 2: [1024, 1024, 512, 256, 1]", LOAD_INT(1, RANGE_P24, "1")),
    DKD(arch, LT_ARCH,
        "\"gpt\" (default), \"llama\", \"mpt\", \"bloom\", \"vit\", \"mixtral\", \"deepseek\"",
        LOAD_NONUM),
    DK(layers, LT_INT, LR_YES, "transformer layers", LOAD_INT(1, RANGE_P16, "1")),
    DK(hidden, LT_INT, LR_YES, "model dimension h", LOAD_INT(1, RANGE_P24, "1")),
    DK(ffn, LT_INT, LR_YES, "feed-forward dimension (dense layers)",
       LOAD_INT(1, RANGE_P24, "1")),
    DK(heads, LT_INT, LR_YES, "attention heads", LOAD_INT(1, RANGE_P16, "1")),
    DK(kv_heads, LT_INT, LR_NO, "key/value heads, grouped-query attention (default: heads)",
       LOAD_INT(0, RANGE_P16, "1")),
    DK(seq_len, LT_INT, LR_YES, "tokens per sample (ViT: patch tokens)",
       LOAD_INT(1, RANGE_P24, "tokens")),
    DK(vocab, LT_INT, LR_YES, "vocabulary (0 for ViT: no embedding table or head)",
       LOAD_INT(0, RANGE_P24, "1")),
    LOAD_KEY("mlp", LT_MLP, offsetof(model_t, mlp), LK_LLM, LR_NO,
        "\"gelu\" (default, 2 matrices) or \"swiglu\" (3 matrices)", LOAD_NONUM),
    DK(causal, LT_BOOL, LR_NO, "decoder (true, default) or encoder", LOAD_UNIT("bool")),
    DKD(position, LT_POSITION, "\"learned\" (default), \"rope\", \"alibi\", \"none\"",
        LOAD_NONUM),
    DKD(untied_embeddings, LT_BOOL, "output head separate from the word embedding (default false)",
        LOAD_UNIT("bool")),
    DKD(dropout, LT_TRI,
        "dropout layers whose masks are kept (default: gpt, bloom, vit yes; others no)",
        LOAD_UNIT("bool")),
    DKD(experts, LT_INT, "MoE: routed experts per layer (default 0: dense)",
        LOAD_INT(0, RANGE_P16, "1")),
    DKD(top_k, LT_INT, "MoE: experts per token (default 2)", LOAD_INT(0, RANGE_P16, "1")),
    DKD(shared_experts, LT_INT, "MoE: always-active experts (default 0)",
        LOAD_INT(0, RANGE_P16, "1")),
    DKD(expert_ffn, LT_INT, "MoE: FFN dimension of one expert (default ffn)",
        LOAD_INT(0, RANGE_P24, "1")),
    DKD(dense_layers, LT_INT, "MoE: leading dense layers (default 0)",
        LOAD_INT(0, RANGE_P16, "layers")),
    DKD(head_dim, LT_INT, "per-head dimension (default hidden / heads; Qwen3: 128)",
        LOAD_INT(0, RANGE_P16, "1")),
    DKD(qk_norm, LT_BOOL, "RMSNorm of each query and key head (Qwen3: true; default false)",
        LOAD_UNIT("bool")),
    DKD(q_lora_rank, LT_INT,
        "MLA: rank of the query down-projection (default 0: full query projection)",
        LOAD_INT(0, RANGE_P24, "1")),
    DKD(kv_lora_rank, LT_INT,
        "MLA: rank of the shared key/value latent (default 0: no MLA; DeepSeek-V3: 512)",
        LOAD_INT(0, RANGE_P24, "1")),
    DKD(qk_nope_head_dim, LT_INT, "MLA: per-head query/key dimensions without RoPE (V3: 128)",
        LOAD_INT(0, RANGE_P16, "1")),
    DKD(qk_rope_head_dim, LT_INT, "MLA: per-head RoPE query/key dimensions (V3: 64)",
        LOAD_INT(0, RANGE_P16, "1")),
    DKD(v_head_dim, LT_INT, "MLA: per-head value dimension (V3: 128)",
        LOAD_INT(0, RANGE_P16, "1")),
    DKD(mtp_layers, LT_INT,
        "multi-token prediction modules on the last stage (DeepSeek-V3: 1; default 0); in a "
        "served model's memory only when they draft (spec_tokens)",
        LOAD_INT(0, RANGE_P16, "modules")),
    DKD(sliding_window, LT_INT,
        "sliding-window attention: tokens a windowed layer attends (default 0: none; gpt-oss "
        "128)", LOAD_INT(0, RANGE_P24, "tokens")),
    DKD(full_attention_interval, LT_INT,
        "with a second attention kind (sliding_window or linear_*): layer i is full attention "
        "when (i + 1) % k == 0 (gpt-oss 2, Qwen3.5 4; default 0: none)",
        LOAD_INT(0, RANGE_P16, "layers")),
    DKD(attn_sinks, LT_BOOL, "a learned sink logit per head in the softmax (gpt-oss; default false)",
        LOAD_UNIT("bool")),
    DKD(attn_output_gate, LT_BOOL,
        "sigmoid gate on the attention output from the query projection (Qwen3.5; default "
        "false)", LOAD_UNIT("bool")),
    DKD(linear_key_heads, LT_INT, "Gated DeltaNet layers: query/key heads (Qwen3.5: 16)",
        LOAD_INT(0, RANGE_P16, "1")),
    DKD(linear_value_heads, LT_INT,
        "Gated DeltaNet layers: value heads, each with its own state (Qwen3.5: 64; default 0: "
        "no linear attention)", LOAD_INT(0, RANGE_P16, "1")),
    DKD(linear_key_head_dim, LT_INT, "Gated DeltaNet layers: key head dimension (Qwen3.5: 128)",
        LOAD_INT(0, RANGE_P16, "1")),
    DKD(linear_value_head_dim, LT_INT,
        "Gated DeltaNet layers: value head dimension (Qwen3.5: 128)",
        LOAD_INT(0, RANGE_P16, "1")),
    DKD(linear_conv_kernel, LT_INT, "Gated DeltaNet layers: causal conv width (Qwen3.5: 4)",
        LOAD_INT(0, 64, "tokens")),
    DKD(linear_state_bytes, LT_INT,
        "Gated DeltaNet layers: bytes per recurrent-state element (mamba_ssm_dtype: float32 "
        "4, bfloat16 2; default 4)", LOAD_INT(0, 8, "bytes")),
    DKD(index_topk, LT_INT,
        "DeepSeek sparse attention: keys each query attends, chosen by the indexer "
        "(DeepSeek-V3.2: 2048; default 0: dense attention)", LOAD_INT(0, RANGE_P24, "tokens")),
    DKD(index_heads, LT_INT, "DeepSeek sparse attention: indexer heads (V3.2: 64)",
        LOAD_INT(0, RANGE_P16, "1")),
    DKD(index_head_dim, LT_INT, "DeepSeek sparse attention: indexer head dimension (V3.2: 128)",
        LOAD_INT(0, RANGE_P16, "1")),
    DKD(attn_weight_precision, LT_WDTYPE,
        "stored precision of the attention projections when the checkpoint keeps them apart "
        "(gpt-oss: \"bf16\"; default: the task's weight_precision)", LOAD_NONUM),
    DKD(dense_weight_precision, LT_WDTYPE,
        "stored precision of the dense MLPs and shared experts (default: the task's)",
        LOAD_NONUM),
    DKD(expert_weight_precision, LT_WDTYPE,
        "stored precision of the routed experts (default: the task's)", LOAD_NONUM),
    LOAD_KEY("hf_config", LT_NOTE, 0, LK_LLM, LR_NO,
        "a Hugging Face config.json to read the model from (relative to this file's folder); "
        "the group's other keys override what it gives (scripts/hf_config.py reads the same)",
        LOAD_NONUM),
};

const load_table load_model_detailed_table = {dmodel_keys, NKEYS(dmodel_keys)};

int load_model(const config_setting_t *g, model_t *m, load_err *err)
{
    memset(m, 0, sizeof *m);
    m->causal = true;
    if (!config_setting_is_group(g)) {
        load_fail(err, g, "model: expected a group { ... } or a catalogue name");
        return -1;
    }
    const config_setting_t *ts = config_setting_get_member(g, "type");
    if (!ts) {
        load_fail(err, g, "missing key 'type' in model (\"dlrm\" or \"llm\")");
        return -1;
    }
    const load_key *tk = &model_keys[1];
    if (load_value(ts, tk, m, err) != 0)
        return -1;
    unsigned kinds = m->kind == MODEL_DLRM ? LK_DLRM : LK_LLM;
    char ns[96];
    snprintf(ns, sizeof ns, "model (type %s)", model_kind_name(m->kind));
    if (load_value_group(g, ns, model_keys, NKEYS(model_keys), kinds, false, m, err))
        return -1;
    const char *bad = NULL;
    if (model_derive(m, &bad) != STATUS_OK) {
        load_fail(err, load_value_member_or(g, bad ? bad : "type"),
                  "key '%s' in model '%s': must be a positive integer",
                  bad ? bad : "?", m->name);
        return -1;
    }
    return 0;
}

/* An array of 1..MODEL_MLP_MAX positive integers, each in the range of
 * its row (dmodel_keys). */
static int load_iarray(const config_setting_t *g, const char *key, int64_t *out,
                       int *n, load_err *err)
{
    const load_key *k = load_keys_find(&load_model_detailed_table, key);
    int len = 0;
    const config_setting_t *s =
        load_value_array(g, key, MODEL_MLP_MAX, "integers", &len, err);
    if (!s)
        return -1;
    for (int i = 0; i < len; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        int et = config_setting_type(e);
        if ((et != CONFIG_TYPE_INT && et != CONFIG_TYPE_INT64) ||
            (double)config_setting_get_int64(e) < k->lo ||
            (double)config_setting_get_int64(e) > k->hi) {
            load_fail(err, s, "key '%s': element %d must be a positive integer "
                      "of at most %lld", key, i, (long long)k->hi);
            return -1;
        }
        out[i] = (int64_t)config_setting_get_int64(e);
    }
    *n = len;
    return 0;
}

/* rows_per_table / pooling: one positive integer (every table), or a
 * list of exactly `tables` of them, each at most its row's bound (the
 * model then lists its tables one by one; *mean receives their mean,
 * rounded up). */
static int load_table_figure(const config_setting_t *g, const char *key, model_t *m,
                             int64_t *mean, bool rows, load_err *err)
{
    int64_t max = (int64_t)load_keys_find(&load_model_detailed_table, key)->hi;
    const config_setting_t *s = config_setting_get_member(g, key);
    int t = s ? config_setting_type(s) : CONFIG_TYPE_NONE;
    if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
        *mean = (int64_t)config_setting_get_int64(s);
        return 0;
    }
    if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) {
        load_fail(err, s, "key '%s' in model '%s': expected an integer or a list of "
                  "integers, one per table, got %s", key, m->name, load_value_type_name(t));
        return -1;
    }
    int len = config_setting_length(s);
    if (len != m->tables || len > MODEL_TABLES_MAX) {
        load_fail(err, s, "key '%s' in model '%s': the list has %d entries, tables is %lld "
                  "(at most %d tables listed)", key, m->name, len, (long long)m->tables,
                  MODEL_TABLES_MAX);
        return -1;
    }
    double sum = 0.0;
    for (int i = 0; i < len; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        int et = config_setting_type(e);
        long long v = (et == CONFIG_TYPE_INT || et == CONFIG_TYPE_INT64)
                          ? config_setting_get_int64(e) : 0;
        if (v < 1 || v > max) {
            load_fail(err, s, "key '%s' in model '%s': element %d must be a positive "
                      "integer of at most %lld", key, m->name, i, (long long)max);
            return -1;
        }
        if (rows)
            m->d.table_rows[i] = (int64_t)v;
        else
            m->d.table_pooling[i] = (int32_t)v;
        sum += (double)v;
    }
    m->d.n_tables = len;
    *mean = (int64_t)ceil(sum / len);
    return 0;
}

/* interaction and the cross layers' defaults (Wang et al. 2021; the
 * DCNv2 of MLPerf and of NVIDIA's TF2 code: 3 layers of rank 512). */
static int load_model_detailed_interaction(const config_setting_t *g, model_t *m, load_err *err)
{
    const config_setting_t *s = config_setting_get_member(g, "interaction");
    const char *text = s ? config_setting_get_string(s) : "dot";
    if (!text || (strcmp(text, "dot") != 0 && strcmp(text, "dcnv2") != 0)) {
        load_fail(err, s, "key 'interaction' in model '%s': expected \"dot\" or \"dcnv2\"",
                  m->name);
        return -1;
    }
    m->d.interaction = strcmp(text, "dcnv2") == 0 ? MODEL_INTERACTION_DCNV2
                                                   : MODEL_INTERACTION_DOT;
    if (m->d.interaction == MODEL_INTERACTION_DCNV2) {
        if (!config_setting_get_member(g, "cross_layers"))
            m->d.cross_layers = 3;
        if (!config_setting_get_member(g, "cross_rank"))
            m->d.cross_rank = 512;
    }
    if (m->d.cross_layers < 0 || m->d.cross_layers > MODEL_MLP_MAX ||
        m->d.cross_rank < 0 || m->d.cross_rank > RANGE_P24 ||
        (m->d.interaction == MODEL_INTERACTION_DCNV2 &&
         (m->d.cross_layers < 1 || m->d.cross_rank < 1))) {
        load_fail(err, load_value_member_or(g, "cross_layers"),
                  "model '%s': cross_layers must be 1 to %d and cross_rank positive "
                  "(dcnv2 only)", m->name, MODEL_MLP_MAX);
        return -1;
    }
    return 0;
}

static int load_model_detailed_dlrm(const config_setting_t *g, model_t *m, load_err *err)
{
    if (load_iarray(g, "bot_mlp", m->d.bot_mlp, &m->d.bot_n, err) ||
        load_iarray(g, "top_mlp", m->d.top_mlp, &m->d.top_n, err))
        return -1;
    if (m->tables > 0 &&
        (load_table_figure(g, "rows_per_table", m, &m->rows_per_table, true, err) ||
         load_table_figure(g, "pooling", m, &m->pooling, false, err) ||
         load_model_detailed_interaction(g, m, err)))
        return -1;
    /* one figure listed, the other not: the list takes the single value */
    for (int i = 0; i < m->d.n_tables; i++) {
        if (m->d.table_rows[i] == 0)
            m->d.table_rows[i] = m->rows_per_table;
        if (m->d.table_pooling[i] == 0)
            m->d.table_pooling[i] = (int32_t)(m->pooling < RANGE_P24 ? m->pooling : RANGE_P24);
    }
    static const char *const pos[] = {"tables", "rows_per_table", "emb_dim", "pooling"};
    const int64_t vals[] = {m->tables, m->rows_per_table, m->emb_dim, m->pooling};
    for (size_t i = 0; i < NKEYS(pos); i++)
        if (vals[i] <= 0) {
            load_fail(err, load_value_member_or(g, pos[i]),
                      "key '%s' in model '%s': must be a positive integer", pos[i],
                      m->name);
            return -1;
        }
    if (m->bytes_per_emb_param < 0) {
        load_fail(err, load_value_member_or(g, "bytes_per_emb_param"),
                  "key 'bytes_per_emb_param' in model '%s': must be positive", m->name);
        return -1;
    }
    if (m->d.bot_n < 2 || m->d.bot_mlp[m->d.bot_n - 1] != m->emb_dim) {
        load_fail(err, load_value_member_or(g, "bot_mlp"),
                  "key 'bot_mlp' in model '%s': at least an input and an output "
                  "width, the last equal to emb_dim (%lld) for the dot interaction",
                  m->name, (long long)m->emb_dim);
        return -1;
    }
    return 0;
}

/* A group's hf_config: the Hugging Face config.json it names (relative
 * to the folder of the file that names it), read into m
 * (load/hf_config.c). 1 when the group has none, 0 read, -1 failed. */
static int load_model_hf(const config_setting_t *g, model_t *m, load_err *err)
{
    const config_setting_t *s =
        config_setting_is_group(g) ? config_setting_get_member(g, "hf_config") : NULL;
    if (!s)
        return 1;
    const char *path = config_setting_get_string(s);
    if (!path || !path[0]) {
        load_fail(err, s, "key 'hf_config' in model: expected a path to a config.json");
        return -1;
    }
    char full[LOAD_PATH_MAX];
    const char *src = config_setting_source_file(s);
    const char *slash = src ? strrchr(src, '/') : NULL;
    if (path[0] != '/' && slash)
        snprintf(full, sizeof full, "%.*s/%s", (int)(slash - src), src, path);
    else
        snprintf(full, sizeof full, "%s", path);
    char why[768];
    if (hf_config_read(full, m, why, sizeof why) != 0) {
        load_fail(err, s, "key 'hf_config' in model: %s", why);
        return -1;
    }
    return 0;
}

/* The integers a config.json gave (hf_config) in the key table's ranges,
 * as they would be had the group stated them: the JSON reader checks only
 * that they are whole and positive. */
static int load_model_hf_ranges(const config_setting_t *g, const model_t *m, load_err *err)
{
    for (size_t i = 0; i < NKEYS(dmodel_keys); i++) {
        const load_key *k = &dmodel_keys[i];
        if (k->type != LT_INT || !(k->kinds & LK_LLM) || !(k->hi > k->lo))
            continue;
        int64_t v = *(const int64_t *)(const void *)((const char *)m + k->offset);
        if ((double)v < k->lo || (double)v > k->hi) {
            load_fail(err, load_value_member_or(g, "hf_config"),
                      "key '%s' in model '%s' (from hf_config): %lld is out of range "
                      "%.17g to %.17g%s%s", k->name, m->name, (long long)v, k->lo, k->hi,
                      k->unit && strcmp(k->unit, "1") ? " " : "",
                      k->unit && strcmp(k->unit, "1") ? k->unit : "");
            return -1;
        }
    }
    return 0;
}

/* What the key table cannot check of a transformer's attention kinds:
 * one second kind (a window or linear attention), a linear layer's
 * shape whole, sparse attention's three keys together. */
static int load_model_kinds(const config_setting_t *g, const model_t *m, load_err *err)
{
    const model_detailed_t *x = &m->d;
    const char *bad = NULL;
    if (x->linear_value_heads > 0 && x->sliding_window > 0)
        bad = "sliding_window";
    else if (x->linear_value_heads > 0 &&
             (x->linear_key_heads < 1 || x->linear_key_head_dim < 1 ||
              x->linear_value_head_dim < 1 || x->linear_value_heads % x->linear_key_heads != 0))
        bad = "linear_key_heads";
    else if ((x->index_topk > 0) != (x->index_heads > 0 && x->index_head_dim > 0))
        bad = "index_topk";
    if (!bad)
        return 0;
    load_fail(err, load_value_member_or(g, bad),
              "model '%s': one second attention kind (sliding_window or linear_*), a linear "
              "layer's key heads, key and value head dimensions all positive and dividing its "
              "value heads, index_topk with index_heads and index_head_dim", m->name);
    return -1;
}

int load_model_detailed(const config_setting_t *g, model_t *m, load_err *err)
{
    memset(m, 0, sizeof *m);
    m->causal = true;
    m->kind = MODEL_LLM;
    m->d.dropout = -1;
    int hf = load_model_hf(g, m, err);
    if (hf < 0)
        return -1;
    const config_setting_t *ts =
        config_setting_is_group(g) ? config_setting_get_member(g, "type") : NULL;
    if (ts && load_value(ts, &dmodel_keys[1], m, err) != 0)
        return -1;
    unsigned kinds = m->kind == MODEL_DLRM ? LK_DLRM : LK_LLM;
    if (load_value_group(g, m->kind == MODEL_DLRM ? "detailed model (type dlrm)"
                                            : "detailed model",
                         dmodel_keys, NKEYS(dmodel_keys), kinds, hf == 0 ? LG_FILLED : 0u, m,
                         err))
        return -1;
    if (m->kind == MODEL_DLRM)
        return load_model_detailed_dlrm(g, m, err);
    if ((hf == 0 && load_model_hf_ranges(g, m, err)) || load_model_kinds(g, m, err))
        return -1;
    static const char *const pos[] = {"layers", "hidden", "ffn", "heads", "seq_len"};
    const int64_t vals[] = {m->layers, m->hidden, m->ffn, m->heads, m->seq_len};
    for (size_t i = 0; i < NKEYS(pos); i++)
        if (vals[i] <= 0) {
            load_fail(err, load_value_member_or(g, pos[i]),
                      "key '%s' in model '%s': must be a positive integer", pos[i],
                      m->name);
            return -1;
        }
    if (m->d.head_dim <= 0 && m->hidden % m->heads != 0) {
        load_fail(err, load_value_member_or(g, "heads"),
                  "key 'heads' in model '%s': %lld heads do not divide hidden %lld (give "
                  "head_dim when they need not)", m->name, (long long)m->heads,
                  (long long)m->hidden);
        return -1;
    }
    if (m->kv_heads > 0 && m->heads % m->kv_heads != 0) {
        load_fail(err, load_value_member_or(g, "kv_heads"),
                  "key 'kv_heads' in model '%s': %lld KV heads do not divide %lld heads",
                  m->name, (long long)m->kv_heads, (long long)m->heads);
        return -1;
    }
    if (m->vocab < 0) {
        load_fail(err, load_value_member_or(g, "vocab"),
                  "key 'vocab' in model '%s': must be >= 0", m->name);
        return -1;
    }
    if (m->vocab == 0 && m->d.arch != MODEL_ARCH_VIT) {
        load_fail(err, load_value_member_or(g, "vocab"),
                  "key 'vocab' in model '%s': 0 only for arch \"vit\"", m->name);
        return -1;
    }
    return 0;
}
