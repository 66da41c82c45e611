/*
 * hf_config.h - a Hugging Face config.json read as a detailed LLM model:
 * a point's or a sweep spec's `model = { hf_config = "PATH"; }`.
 *
 * The fields read, and what the model cannot express, are those of
 * scripts/hf_config.py (its module docstring lists them), read the same
 * way: dense and MoE decoders, grouped-query and multi-head latent
 * attention, shared and dense-first layers, multi-token prediction, a
 * multimodal checkpoint's text_config, the attention kinds (sliding
 * windows, Gated DeltaNet layers one in every k full), output gates,
 * sinks, DeepSeek sparse attention, and the parts a quantized checkpoint
 * keeps in BF16. A field the model cannot express, a missing or
 * malformed one, or a file that is not JSON is an error naming the file
 * and the field (or the file's line and column).
 */
#ifndef MADSWEEP_HF_CONFIG_H
#define MADSWEEP_HF_CONFIG_H

#include <stddef.h>

#include "../cost/model.h"

/* Reads `path` into m (memset first; an LLM of the detailed fidelity,
 * named after the file: ORG--NAME of ORG--NAME_config.json; seq_len the
 * config's max_position_embeddings, 0 when it has none). Returns 0, or
 * -1 with "PATH: field F: why" (or "PATH:LINE:COL: not JSON (...)") in
 * err. */
int hf_config_read(const char *path, model_t *m, char *err, size_t errsize);

#endif
