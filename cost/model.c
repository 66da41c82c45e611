/*
 * model.c - derived figures of DLRM and LLM models.
 *
 * The counts follow the MAD-Max reference (models/dlrm.py, models/llm.py)
 * exactly, including its choices: LLM attention has 4 h^2 parameters
 * whatever the head layout, the FC block has 2 h f, and a DLRM MLP layer
 * is square. Arithmetic is in double, as in the reference.
 */
#include "model.h"

#include <string.h>

typedef struct model_req {
    const char *key;
    int64_t value;
} model_req;

static status_code model_check(const model_req *req, int n, const char **bad)
{
    for (int i = 0; i < n; i++) {
        if (req[i].value <= 0) {
            if (bad)
                *bad = req[i].key;
            return STATUS_INVALID_VALUE;
        }
    }
    return STATUS_OK;
}

static status_code model_derive_dlrm(model_t *m, const char **bad)
{
    const model_req req[] = {
        {"bytes_per_dense_param", m->bytes_per_dense_param},
        {"bytes_per_emb_param", m->bytes_per_emb_param},
        {"bot_mlp_layers", m->bot_mlp_layers},
        {"top_mlp_layers", m->top_mlp_layers},
        {"mlp_dim", m->mlp_dim},
        {"tables", m->tables},
        {"rows_per_table", m->rows_per_table},
        {"emb_dim", m->emb_dim},
        {"pooling", m->pooling},
    };
    status_code rc = model_check(req, (int)(sizeof req / sizeof req[0]), bad);
    if (rc != STATUS_OK)
        return rc;
    double nlayers = (double)(m->bot_mlp_layers + m->top_mlp_layers);
    m->layer_params = (double)m->mlp_dim * (double)m->mlp_dim;
    m->dense_params = nlayers * m->layer_params;
    m->emb_params =
        (double)m->tables * (double)m->rows_per_table * (double)m->emb_dim;
    m->total_params = m->dense_params + m->emb_params;
    m->layer_flops = 2.0 * m->layer_params;
    m->total_flops = m->layer_flops * nlayers;
    m->lookup_bytes = (double)m->tables * (double)m->pooling *
                      (double)m->emb_dim * (double)m->bytes_per_emb_param;
    return STATUS_OK;
}

static status_code model_derive_llm(model_t *m, const char **bad)
{
    const model_req req[] = {
        {"bytes_per_dense_param", m->bytes_per_dense_param},
        {"bytes_per_emb_param", m->bytes_per_emb_param},
        {"layers", m->layers},
        {"heads", m->heads},
        {"hidden", m->hidden},
        {"ffn", m->ffn},
        {"seq_len", m->seq_len},
        {"vocab", m->vocab},
    };
    status_code rc = model_check(req, (int)(sizeof req / sizeof req[0]), bad);
    if (rc != STATUS_OK)
        return rc;
    if (m->kv_heads <= 0)
        m->kv_heads = m->heads;
    double h = (double)m->hidden, s = (double)m->seq_len;
    m->attn_layer_params = 4.0 * h * h;
    m->fc_layer_params = 2.0 * h * (double)m->ffn;
    m->dense_params =
        (double)m->layers * (m->attn_layer_params + m->fc_layer_params);
    m->emb_params = (double)m->vocab * h + s * h;
    m->total_params = m->dense_params + m->emb_params;
    m->attn_layer_flops = 2.0 * m->attn_layer_params * s;
    m->fc_layer_flops = 2.0 * m->fc_layer_params * s;
    m->total_flops =
        (m->attn_layer_flops + m->fc_layer_flops) * (double)m->layers;
    m->lookup_bytes = 2.0 * s * h * (double)m->bytes_per_emb_param;
    return STATUS_OK;
}

status_code model_derive(model_t *m, const char **bad)
{
    switch (m->kind) {
    case MODEL_DLRM:
        return model_derive_dlrm(m, bad);
    case MODEL_LLM:
        return model_derive_llm(m, bad);
    }
    if (bad)
        *bad = "type";
    return STATUS_INVALID_VALUE;
}

const char *model_kind_name(model_kind k)
{
    return k == MODEL_DLRM ? "dlrm" : k == MODEL_LLM ? "llm" : "unknown";
}

int model_kind_parse(const char *s)
{
    if (strcmp(s, "dlrm") == 0)
        return MODEL_DLRM;
    if (strcmp(s, "llm") == 0)
        return MODEL_LLM;
    return -1;
}
