/*
 * status.c - names and explanations of the cost model's outcome codes.
 *
 * The strings are what users see in `madsweep eval` errors and in the
 * /axes/status table of sweep files, so they name the rule, not the code.
 */
#include "status.h"

#include <stddef.h>

typedef struct status_info {
    status_code code;
    const char *name;
    const char *text;
} status_info;

static const status_info status_table[] = {
    {STATUS_OK, "ok", "evaluated"},
    {STATUS_INFEASIBLE_MEMORY, "infeasible:memory",
     "the per-device memory need exceeds the device capacity"},
    {STATUS_INFEASIBLE_BATCH, "infeasible:batch",
     "the batch does not divide over the plan's micro-batches and replicas"},
    {STATUS_INFEASIBLE_SHAPE, "infeasible:shape",
     "a model dimension does not divide by its parallel degree"},
    {STATUS_INVALID_VALUE, "invalid:value",
     "a value is outside its domain (zero, negative or not finite)"},
    {STATUS_INVALID_LEVELS, "invalid:levels",
     "the plan has more hierarchy levels than the fidelity allows (2)"},
    {STATUS_INVALID_DEGREE_ONE, "invalid:degree-one",
     "a plan level has degree 1, which is redundant"},
    {STATUS_INVALID_REPEAT, "invalid:repeat",
     "a strategy appears on two levels of one plan"},
    {STATUS_INVALID_PRODUCT, "invalid:product",
     "the plan's degrees do not multiply to the number of devices"},
    {STATUS_INVALID_FIRST_DEGREE, "invalid:first-degree",
     "the first degree must equal the devices per node or all devices"},
    {STATUS_INVALID_FSDP_FIRST, "invalid:fsdp-first",
     "fsdp can only be the first level of a plan"},
    {STATUS_INVALID_STRATEGY, "invalid:strategy",
     "the strategy is not defined for this component"},
    {STATUS_INVALID_BATCH_MISMATCH, "invalid:batch-mismatch",
     "the dense and embedding plans give different global batches"},
    {STATUS_INVALID_DTYPE, "invalid:dtype",
     "the precision is not one the hardware has a peak in (MAD-Max: bytes per dense "
     "parameter must be 8, 4, 2 or 1, FP64/FP32/FP16/INT8)"},
    {STATUS_INVALID_TP_ODD_LAYERS, "invalid:tp-odd-layers",
     "tensor parallelism of DLRM MLPs needs an even number of layers in both stacks"},
    {STATUS_INVALID_SINGLE_NODE_BLEND, "invalid:single-node-blend",
     "a single-node system must use only intra-node networking "
     "(allreduce_intra_fraction = 1)"},
    {STATUS_INVALID_NOTHING_TRAINED, "invalid:nothing-trained",
     "fine-tuning must leave at least one component trainable"},
    {STATUS_INVALID_FIDELITY, "invalid:fidelity",
     "the model, task or strategy is not supported by this fidelity"},
    {STATUS_INVALID_NODES, "invalid:nodes",
     "the number of devices must be divisible by the number of nodes"},
    {STATUS_INVALID_BATCH_KIND, "invalid:batch-kind",
     "the sweep spec lists this global batch for another model kind "
     "(global_batch = { llm = [...]; dlrm = [...]; })"},
    {STATUS_INVALID_NONFINITE, "invalid:non-finite",
     "the evaluation gave a figure that is not finite (an input outside "
     "its physical range, e.g. a denormal or infinite bandwidth)"},
    {STATUS_INVALID_NEGATIVE, "invalid:negative",
     "the evaluation gave a negative time, rate or size (an input outside "
     "its physical range)"},
    {STATUS_INVALID_BATCH_UNUSED, "invalid:batch-unused",
     "the sweep's serving task sets its own requests in flight (concurrency), "
     "which no global batch changes: only its model kind's first global batch "
     "is evaluated"},
    {STATUS_NOMEM, "error:nomem", "out of memory"},
};

static const status_info *status_find(status_code code)
{
    size_t n = sizeof status_table / sizeof status_table[0];
    for (size_t i = 0; i < n; i++)
        if (status_table[i].code == code)
            return &status_table[i];
    return NULL;
}

const char *status_name(status_code code)
{
    const status_info *s = status_find(code);
    return s ? s->name : "unknown";
}

const char *status_text(status_code code)
{
    const status_info *s = status_find(code);
    return s ? s->text : "unknown status code";
}

int status_is_data(status_code code)
{
    return code == STATUS_OK ||
           (code >= STATUS_INFEASIBLE_MEMORY && code < STATUS_INVALID_VALUE);
}
