/*
 * shape.c - what a DLRM holds: the MLPs' layer widths (the bottom MLP's,
 * then the top's, whose input is the bottom output and the pairwise dots
 * of the tables + 1 vectors, or DCNv2's cross network output), their
 * parameters, the cross network's, the embedding rows, the fp32 optimizer
 * values per row, and the shards each device holds under a fixed
 * sharding (table-, row- or column-wise; detailed.h's detailed_dlrm_*).
 * Invariant: depends on the model and the task's sharding only; the
 * reported parameter counts and the memory model read the same sums.
 */
#include "dlrm.h"

#include <math.h>
#include <string.h>

int64_t detailed_dlrm_column_shards(const model_t *m, const task_detailed_t *t,
                                    int64_t devices)
{
    if (t->emb_column_shards > 0)
        return t->emb_column_shards;
    for (int64_t c = 1; c < m->emb_dim; c++)
        if (m->emb_dim % c == 0 && m->tables * c >= devices)
            return c;
    return m->emb_dim;
}

/* none for SGD, one per element for Adagrad, two for Adam, one (row-wise
 * Adagrad) else */
double dlrm_shape_state_values(const task_detailed_t *t, double width)
{
    return t->emb_optimizer == TASK_EMB_OPT_SGD       ? 0.0
           : t->emb_optimizer == TASK_EMB_OPT_ADAGRAD ? width
           : t->emb_optimizer == TASK_EMB_OPT_ADAM    ? 2.0 * width
                                                      : 1.0;
}

void detailed_dlrm_shard(const model_t *m, const task_detailed_t *t, int64_t devices,
                         double batch, detailed_dlrm_emb *s)
{
    double T = (double)m->tables, R = (double)m->rows_per_table;
    double D = (double)m->emb_dim, L = (double)m->pooling, N = (double)devices;
    memset(s, 0, sizeof *s);
    s->id_copies = 1.0;
    switch (t->emb_sharding) {
    case TASK_EMB_ROW:
        s->shards = T;
        s->width = D;
        s->rows = ceil(R / N);
        s->lookups = T * batch * L / N;
        s->outputs = T * batch;
        break;
    case TASK_EMB_COLUMN: {
        double c = (double)detailed_dlrm_column_shards(m, t, devices);
        s->shards = ceil(T * c / N);
        s->width = D / c;
        s->rows = R;
        s->lookups = s->shards * batch * L;
        s->outputs = s->shards * batch;
        s->id_copies = c;
        break;
    }
    default:
        s->shards = ceil(T / N);
        s->width = D;
        s->rows = R;
        s->lookups = s->shards * batch * L;
        s->outputs = s->shards * batch;
        break;
    }
    s->state_values = dlrm_shape_state_values(t, s->width);
}

double dlrm_shape_emb_bytes(const model_t *m)
{
    return m->bytes_per_emb_param > 0 ? (double)m->bytes_per_emb_param : 4.0;
}

/* Width of the top MLP's input: the bottom output and the pairwise dots
 * of the tables + 1 vectors; DCNv2: the cross network's output, as wide
 * as its (tables + 1) x emb_dim input. */
static double dlrm_shape_top_in(const model_t *m)
{
    double T = (double)m->tables;
    if (m->d.interaction == MODEL_INTERACTION_DCNV2)
        return (T + 1.0) * (double)m->emb_dim;
    return (double)m->emb_dim + T * (T + 1.0) / 2.0;
}

/* Parameters of the DCNv2 cross network: per layer U and V (W x r) and
 * a bias of W. */
double dlrm_shape_cross_params(const model_t *m)
{
    if (m->d.interaction != MODEL_INTERACTION_DCNV2)
        return 0.0;
    double W = ((double)m->tables + 1.0) * (double)m->emb_dim;
    return (double)m->d.cross_layers * (2.0 * W * (double)m->d.cross_rank + W);
}

/* Embedding rows of all tables (listed one by one, or uniform). */
static double dlrm_shape_rows(const model_t *m)
{
    if (m->d.n_tables <= 0)
        return (double)m->tables * (double)m->rows_per_table;
    double s = 0.0;
    for (int i = 0; i < m->d.n_tables; i++)
        s += (double)m->d.table_rows[i];
    return s;
}

/* the top MLP's input from dlrm_shape_top_in */
int dlrm_shape_widths(const model_t *m, double *w_in, double *w_out, int *nb)
{
    int n = 0;
    for (int i = 0; i + 1 < m->d.bot_n; i++, n++) {
        w_in[n] = (double)m->d.bot_mlp[i];
        w_out[n] = (double)m->d.bot_mlp[i + 1];
    }
    *nb = n;
    double in = dlrm_shape_top_in(m);
    for (int j = 0; j < m->d.top_n; j++, n++) {
        w_in[n] = in;
        w_out[n] = in = (double)m->d.top_mlp[j];
    }
    return n;
}

void dlrm_shape_mlp_params(const double *w_in, const double *w_out, int n, int nb, double *bot,
                           double *top)
{
    double b = 0.0, t = 0.0;
    for (int k = 0; k < n; k++) {
        if (k < nb)
            b += dlrm_shape_layer_params(w_in[k], w_out[k]);
        else
            t += dlrm_shape_layer_params(w_in[k], w_out[k]);
    }
    *bot = b;
    *top = t;
}

void detailed_dlrm_params(const model_t *m, double *bot, double *top, double *emb)
{
    double w_in[DLRM_LAYERS], w_out[DLRM_LAYERS], t;
    int nb, n = dlrm_shape_widths(m, w_in, w_out, &nb);
    dlrm_shape_mlp_params(w_in, w_out, n, nb, bot, &t);
    *top = t + dlrm_shape_cross_params(m);
    *emb = dlrm_shape_rows(m) * (double)m->emb_dim;
}
