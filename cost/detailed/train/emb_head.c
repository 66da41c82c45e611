/*
 * emb_head.c - the ends of a transformer's step per micro-batch: the
 * word embedding (a memory-bound lookup, with sequence parallelism's or
 * TP's all-reduce), the output head's GEMM and the loss's memory-bound
 * kernels (the stack's bytes per logit), and multi-token prediction's
 * modules. Their GEMMs are placed once per micro-batch in the
 * evaluation's memo (llm.h dt_memo: head, mtp) and timed per scenario.
 * Invariant: the GEMMs are re-placed only when the micro-batch changes
 * (the memo's ends_mb), and timed under the scenario's facts.
 */
#include "train.h"

#include <string.h>

void dt_emb_head_cost(const dt_ctx *c, const dt_layers *y, dt_emb_head *x)
{
    const model_t *m = c->m;
    memset(x, 0, sizeof *x);
    if (m->vocab <= 0)
        return;
    bool ft = c->p->task.kind == TASK_FINETUNE;
    bool emb_train = !(ft && c->p->task.freeze_emb);
    bool head_train = m->d.untied_embeddings || emb_train;
    bool below_train = emb_train || y->frozen < m->layers || c->lora; /* head needs dgrad */
    double h = (double)m->hidden, vocab_t = (double)m->vocab / (double)c->d.tp;
    x->emb_f = x->emb_comp = dt_membound_time(c, 2.0 * c->tok * h * c->ab, 1.0);
    if (c->d.tp > 1)
        x->emb_f += dt_group_coll(c, TOPO_ALLREDUCE, DT_G_TP, c->tok * h * c->ab);
    x->emb_b = emb_train ? x->emb_f : 0.0;
    /* cross entropy: the stack's HBM bytes per logit (a fused kernel
     * reads the 16-bit logits for the max and for the sum of exponentials
     * and writes the fp32 softmax, 2 + 2 + 4 bytes, backward reads it and
     * writes the gradient, 4 + 2: 14; an unfused fp32 implementation
     * moves about four times that), 4/7 forward. The head GEMM stays
     * BF16. */
    double logits = c->tok * vocab_t;
    dt_memo *mo = c->memo;
    if (mo->ends_mb != c->d.mb) { /* the GEMMs' shapes, once per micro-batch */
        dt_gemm_place(c, c->tok, vocab_t, h, 1, false, false, &mo->head);
        if (m->d.mtp_layers > 0)
            dt_gemm_place(c, c->tok, h / (double)c->d.tp, 2.0 * h, 1, true, false, &mo->mtp);
        mo->ends_mb = c->d.mb;
    }
    double g = dt_gemm_at(c, &mo->head, NULL);
    double lb = c->f.loss_bytes * logits;
    x->head_mf = hw_mem_time(c->hw, lb * 4.0 / 7.0) / c->f.mem + 3.0 * c->hw->kernel_overhead_s;
    x->head_f = g + x->head_mf;
    double hg = (head_train ? 1.0 : 0.0) + (below_train ? 1.0 : 0.0);
    x->head_mb = hg > 0.0 ? hw_mem_time(c->hw, lb * 3.0 / 7.0) / c->f.mem +
                                2.0 * c->hw->kernel_overhead_s
                          : 0.0;
    x->head_b = hg > 0.0 ? hg * g + x->head_mb : 0.0;
    if (m->d.mtp_layers > 0) {
        /* each module: its projection, a layer of the last kind, the
         * shared head and loss again (Megatron-Core multi_token_prediction.py) */
        const dt_layer *L = &y->t[m->d.experts > 0 && m->d.dense_layers < m->layers ? DT_MOE
                                                                                     : DT_DENSE];
        double pj = dt_gemm_at(c, &mo->mtp, NULL);
        double k = (double)m->d.mtp_layers;
        double hf = x->head_f, hb = x->head_b;
        x->head_f += k * (pj + L->fwd + hf);
        x->head_b += k * (2.0 * pj + L->bwd + hb);
    }
}
