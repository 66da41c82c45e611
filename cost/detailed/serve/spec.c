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
    k->rows = g + 1.0;
    k->spec_e = a < 1.0 ? (1.0 - pow(a, g + 1.0)) / (1.0 - a) : g + 1.0;
    k->draft = g * (t->spec_draft_cost > 0.0 ? t->spec_draft_cost : SV_SPEC_DRAFT_COST);
}

double sv_spec_decode_token(const sv_model *k, double d, double cd)
{
    if (k->rows <= 1.0)
        return sv_step(k, 0, 0, 0, d, cd, NULL);
    sv_model plain = *k;
    plain.rows = 1.0;
    double verify = sv_step(k, 0, 0, 0, d, cd, NULL);
    double draft = k->draft * sv_step(&plain, 0, 0, 0, d, cd, NULL);
    return (verify + draft) / k->spec_e;
}
