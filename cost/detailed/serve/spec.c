/*
 * spec.c - speculative decoding (docs/serving.md,
 * "Speculative decoding"): a draft proposes gamma tokens per sequence, the target
 * verifies them in one step of gamma + 1 rows per sequence (its GEMMs
 * see d (gamma + 1) rows; attention reads each sequence's KV once), and
 * accepts on average E = (1 - alpha^(gamma + 1)) / (1 - alpha) tokens
 * (acceptance rate alpha). A decode step with speculation costs the
 * verify step plus gamma draft steps, each `spec_draft_cost` of a plain
 * target decode step at the same batch, and yields E tokens per
 * sequence: per token (t_verify + gamma t_draft) / E. At light load the
 * verify step costs about a plain one (weights streamed once) and the
 * gain approaches E / (1 + gamma draft_cost); as the batch grows the
 * steps turn compute bound, the verify step costs up to gamma + 1 plain
 * ones and the gain falls below 1.
 * Multi-token prediction: a model with MTP modules (model.d.mtp_layers,
 * DeepSeek-V3, Qwen3.5) drafts with its own module when the task gives no
 * spec_draft_cost (SGLang's and TensorRT-LLM's MTP/EAGLE drafting, the
 * module reused for each of the gamma tokens): a draft token costs one
 * pass of the module, a full-attention layer of the last layer's MLP
 * (MoE or dense) with its 2h x h projection and the shared LM head, at
 * the batch's decode rows and context, without a step's host time.
 * Invariant: without speculation (spec_tokens 0) a decode token costs
 * exactly a plain decode step.
 */
#include "serve.h"

#include <math.h>

void sv_spec_init(const dt_ctx *c, sv_model *k)
{
    const task_detailed_t *t = c->t;
    k->rows = 1.0;
    k->spec_e = 1.0;
    k->draft = 0.0;
    if (t->spec_tokens <= 0)
        return;
    double g = (double)t->spec_tokens, a = t->spec_acceptance;
    const model_t *m = c->m;
    k->rows = g + 1.0;
    k->spec_e = a < 1.0 ? (1.0 - pow(a, g + 1.0)) / (1.0 - a) : g + 1.0;
    k->draft = g * (t->spec_draft_cost > 0.0 ? t->spec_draft_cost : SV_SPEC_DRAFT_COST);
    k->mtp = m->d.mtp_layers > 0 && t->spec_draft_cost <= 0.0;
    k->gamma = g;
    k->mtp_moe = m->d.experts > 0 && m->d.dense_layers < m->layers ? 1.0 : 0.0;
    k->mtp_layers = (double)m->d.mtp_layers;
}

/* One pass of the model's MTP modules at d decoding sequences: its
 * layers (full attention, the last layer's MLP) and the LM head as
 * sv_step costs them, the 2h x h projection beside as one more output
 * projection's weights; no host time (the draft runs inside the step). */
static double sv_spec_mtp_pass(const sv_model *k, double d, double cd, double layers)
{
    sv_model one = *k;
    one.rows = 1.0;
    one.nm = layers * k->mtp_moe;
    one.nd = layers - one.nm;
    one.na = 0.0;
    one.host_step = one.host_seq = 0.0;
    return sv_step(&one, 0, 0, 0, d, cd, NULL);
}

double sv_spec_decode_token(const sv_model *k, double d, double cd)
{
    if (k->rows <= 1.0)
        return sv_step(k, 0, 0, 0, d, cd, NULL);
    double verify = sv_step(k, 0, 0, 0, d, cd, NULL);
    double draft;
    if (k->mtp) {
        draft = k->gamma * sv_spec_mtp_pass(k, d, cd, k->mtp_layers);
    } else {
        sv_model plain = *k;
        plain.rows = 1.0;
        draft = k->draft * sv_step(&plain, 0, 0, 0, d, cd, NULL);
    }
    return (verify + draft) / k->spec_e;
}
