/*
 * layers.c - the per-layer costs of a training step by type: a dense
 * and a MoE layer, trained, and their frozen variants in fine-tuning
 * (llm/layer.c's compute, llm/comm.c's communication).
 * Fine-tuning: the first frozen_layers layers (and with freeze_emb the
 * embedding, and a tied head's weight) get no gradients, gradient
 * collectives or optimizer states; a frozen layer with something trained
 * below it runs a backward of data gradients only, one with nothing
 * trained below runs none and keeps no activations.
 * Layers of the model's second attention kind (sliding window, Gated
 * DeltaNet) are types of their own (DT_ALT on), costed with their
 * attention.
 * Invariant: a type the model does not have is a copy of one it has, so
 * that sums over a stage's types need no test.
 */
#include "train.h"

void dt_layers_build(const dt_ctx *c, dt_layers *y)
{
    const model_t *m = c->m;
    bool ft = c->p->task.kind == TASK_FINETUNE;
    bool emb_train = m->vocab > 0 && !(ft && c->p->task.freeze_emb);
    y->frozen = ft ? c->t->frozen_layers : 0;
    y->fmode = emb_train || c->lora ? DT_DGRAD : DT_NOBWD;
    dt_layer_cost(c, 0, true, DT_TRAIN, &y->t[DT_DENSE]);
    dt_comm_layer(c, 0, true, DT_TRAIN, &y->t[DT_DENSE]);
    if (m->d.experts > 0) {
        dt_layer_cost(c, DT_L_MOE, true, DT_TRAIN, &y->t[DT_MOE]);
        dt_comm_layer(c, DT_L_MOE, true, DT_TRAIN, &y->t[DT_MOE]);
    } else {
        y->t[DT_MOE] = y->t[DT_DENSE];
    }
    y->t[DT_FDENSE] = y->t[DT_DENSE];
    y->t[DT_FMOE] = y->t[DT_MOE];
    if (y->frozen > 0) {
        dt_layer_cost(c, 0, true, y->fmode, &y->t[DT_FDENSE]);
        dt_comm_layer(c, 0, true, y->fmode, &y->t[DT_FDENSE]);
        if (m->d.experts > 0) {
            dt_layer_cost(c, DT_L_MOE, true, y->fmode, &y->t[DT_FMOE]);
            dt_comm_layer(c, DT_L_MOE, true, y->fmode, &y->t[DT_FMOE]);
        } else {
            y->t[DT_FMOE] = y->t[DT_FDENSE];
        }
    }
    /* the second attention kind: each type again with its attention
     * (types DT_ALT on are in use only when the model has it) */
    if (c->alt == DT_KIND_FULL)
        return;
    for (int t = 0; t < DT_ALT; t++) {
        dt_layer *L = &y->t[t + DT_ALT];
        bool moe = (t & 1) && m->d.experts > 0;
        bool fz = (t & 2) && y->frozen > 0;
        if (!(t & 1) || moe) {
            if (!(t & 2) || fz) {
                int mode = fz ? y->fmode : DT_TRAIN;
                dt_layer_cost(c, (moe ? DT_L_MOE : 0) | DT_L_ALT, true, mode, L);
                dt_comm_layer(c, (moe ? DT_L_MOE : 0) | DT_L_ALT, true, mode, L);
            } else {
                *L = y->t[t - 2 + DT_ALT]; /* no frozen layers: the trained one's */
            }
        } else {
            *L = y->t[t - 1 + DT_ALT]; /* a dense model: the dense layer's */
        }
    }
}
