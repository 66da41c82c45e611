#!/usr/bin/env python3
"""madmax2cfg.py - turn a MAD-Max config triple into a madsweep point.

usage: scripts/madmax2cfg.py MODEL.json SYSTEM.json TASK.json > point.cfg

The three inputs use the MAD-Max reference's JSON schema (its model_cfgs/,
system_cfgs/ and task_cfgs/ files). The output is a libconfig point that
`madsweep eval point.cfg` evaluates to the same figures as the reference.
Python 3 standard library only. The module's functions are also used to
generate the catalogues (configs/models.cfg, configs/systems.cfg) and the
parity tests.
"""
import json
import sys

# MAD-Max key -> madsweep key, per namespace. Order is output order.
MODEL_COMMON = [
    ("bytes_per_nonemb_param", "bytes_per_dense_param", int),
    ("bytes_per_emb_param", "bytes_per_emb_param", int),
]
MODEL_DLRM = [
    ("num_bot_mlp_layers", "bot_mlp_layers", int),
    ("num_top_mlp_layers", "top_mlp_layers", int),
    ("mlp_dim", "mlp_dim", int),
    ("num_tables", "tables", int),
    ("entries_per_table", "rows_per_table", int),
    ("emb_dim", "emb_dim", int),
    ("pooling_size", "pooling", int),
]
MODEL_LLM = [
    ("num_transformer_layers", "layers", int),
    ("num_transformer_heads", "heads", int),
    ("attention_dim", "hidden", int),
    ("transformer_fc_dim", "ffn", int),
    ("transformer_seq_len", "seq_len", int),
    ("entries_per_table", "vocab", int),
]
SYSTEM = [
    ("num_devices", "devices", int),
    ("num_nodes", "nodes", int),
    ("f64_flops", "peak_fp64_flops", float),
    ("f32_flops", "peak_fp32_flops", float),
    ("f16_flops", "peak_fp16_flops", float),
    ("i8_ops", "peak_int8_ops", float),
    ("flops_util", "flops_util", float),
    ("mem_cap", "mem_capacity_bytes", float),
    ("mem_bw", "mem_bw_bytes_per_s", float),
    ("mem_bw_util", "mem_bw_util", float),
    ("num_nvlinks", "nvlinks", int),
    ("bw_per_nvlink", "nvlink_bidir_bytes_per_s", float),
    ("nvlink_util", "nvlink_util", float),
    ("num_ibroce_ports", "nic_ports", int),
    ("ibroce_bw", "nic_bidir_bytes_per_s", float),
    ("ibroce_util", "nic_util", float),
    ("ar_perc_intra", "allreduce_intra_fraction", float),
]
TASK_DLRM_FINETUNE = [
    ("freeze_emb", "freeze_emb", bool),
    ("freeze_top_mlp", "freeze_top_mlp", bool),
    ("freeze_bot_mlp", "freeze_bot_mlp", bool),
]
TASK_LLM_FINETUNE = [
    ("freeze_emb", "freeze_emb", bool),
    ("freeze_transformer", "freeze_dense", bool),
    ("min_frozen_layer", "min_frozen_layer", int),
]
MODEL_TYPES = {"DLRM": "dlrm", "LLM": "llm"}


class ConvertError(Exception):
    """A MAD-Max config that madsweep cannot express."""


def value(v, kind, where):
    """Formats one value as libconfig text, checking its type."""
    if kind is bool:
        if not isinstance(v, bool):
            raise ConvertError("%s: expected true/false, got %r" % (where, v))
        return "true" if v else "false"
    if kind is int:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v):
            raise ConvertError("%s: expected an integer, got %r" % (where, v))
        v = int(v)
        return "%dL" % v if abs(v) > 2**31 - 1 else "%d" % v
    if kind is float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ConvertError("%s: expected a number, got %r" % (where, v))
        text = repr(float(v))
        return text
    if kind is str:
        return json.dumps(str(v))
    raise ConvertError("%s: unsupported type" % where)


def fields(src, table, where, indent="  "):
    lines = []
    for old, new, kind in table:
        if old not in src:
            raise ConvertError("%s: missing key '%s'" % (where, old))
        lines.append("%s%s = %s;" % (indent, new, value(src[old], kind, where + "." + old)))
    return lines


def model_lines(m, name=None, indent="  "):
    """Lines of a model group body (without braces)."""
    kind = MODEL_TYPES.get(m.get("type"))
    if kind is None:
        raise ConvertError("model type %r is not supported (DLRM, LLM)" % m.get("type"))
    lines = ["%sname = %s;" % (indent, json.dumps(name or m.get("name", "model"))),
             "%stype = \"%s\";" % (indent, kind)]
    lines += fields(m, MODEL_COMMON, "model", indent)
    lines += fields(m, MODEL_DLRM if kind == "dlrm" else MODEL_LLM, "model", indent)
    return lines


def system_lines(s, name=None, indent="  "):
    if s.get("type", "GPU") != "GPU":
        raise ConvertError("system type %r is not supported (GPU)" % s.get("type"))
    lines = ["%sname = %s;" % (indent, json.dumps(name or s.get("name", "system")))]
    lines += fields(s, SYSTEM, "system", indent)
    return lines


def plan(strats, degrees, where):
    if len(strats) != len(degrees):
        raise ConvertError("%s: %d strategies but %d degrees" % (where, len(strats), len(degrees)))
    return "[" + ", ".join('"%s:%s"' % (s, value(d, int, where).rstrip("L"))
                           for s, d in zip(strats, degrees)) + "]"


def task_lines(t, model_kind, indent="  "):
    ttype = t.get("type")
    if ttype not in ("pretrain", "finetune", "inference"):
        raise ConvertError("task type %r is not supported" % ttype)
    lines = ["%stype = \"%s\";" % (indent, ttype)]
    if model_kind == "dlrm":
        dense = plan(t["mlp_parallel"], t["mlp_parallel_degree"], "task.mlp_parallel")
        lbd = t["local_mlp_bs"]
    else:
        dense = plan(t["transformer_parallel"], t["transformer_parallel_degree"],
                     "task.transformer_parallel")
        lbd = t["local_transformer_bs"]
    lines.append("%sdense = %s;" % (indent, dense))
    lines.append("%sembedding = %s;" % (indent, plan(t["emb_parallel"], t["emb_parallel_degree"],
                                                    "task.emb_parallel")))
    lines.append("%slocal_batch_dense = %s;" % (indent, value(lbd, int, "task.local_batch")))
    lines.append("%slocal_batch_emb = %s;" % (indent, value(t["local_emb_bs"], int,
                                                            "task.local_emb_bs")))
    if ttype == "finetune":
        table = TASK_DLRM_FINETUNE if model_kind == "dlrm" else TASK_LLM_FINETUNE
        lines += fields(t, table, "task", indent)
    return lines


def point_text(model, system, task, sources=()):
    kind = MODEL_TYPES.get(model.get("type"))
    out = ["# madsweep point converted by scripts/madmax2cfg.py from the MAD-Max configs"]
    out += ["#   %s" % s for s in sources]
    out.append('fidelity = "madmax";')
    out.append("model = {")
    out += model_lines(model)
    out.append("};")
    out.append("system = {")
    out += system_lines(system)
    out.append("};")
    out.append("task = {")
    out += task_lines(task, kind)
    out.append("};")
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) != 4 or argv[1] in ("-h", "--help"):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    docs = []
    for path in argv[1:]:
        try:
            with open(path) as f:
                docs.append(json.load(f))
        except (OSError, ValueError) as e:
            sys.stderr.write("madmax2cfg: %s: %s\n" % (path, e))
            return 2
    try:
        text = point_text(docs[0], docs[1], docs[2], argv[1:])
    except (ConvertError, KeyError) as e:
        sys.stderr.write("madmax2cfg: %s\n" % e)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
