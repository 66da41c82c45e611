#!/usr/bin/env python3
"""hf_parity.py DIR - the two readers of Hugging Face config.json files are
one model: for every DIR/ORG--NAME_config.json, a serving point whose model
group scripts/hf_config.py writes (what validate.py's AIConfigurator
mapping evaluates) and the same point with `model = { hf_config = PATH; }`
(the C loader, driver/load/hf_config.c) evaluate to the same figures, and
a config each cannot express fails in both. Exits 1 on any difference.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))
import hf_config  # noqa: E402
import msbatch  # noqa: E402

TASK = """stack = "vllm";
system = { name = "h200-8"; hardware = "h200"; devices = 8; };
task = { type = "inference"; tp = 8; pp = 1; dp = 1; precision = "fp8";
  prompt_tokens = 2048; decode_tokens = 512; concurrency = 32; };
"""


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__.split("\n\n")[0])
    d = argv[1]
    points, bad = [], 0
    for f in sorted(os.listdir(d)):
        if not f.endswith("_config.json"):
            continue
        path = os.path.abspath(os.path.join(d, f))
        name = f[:-len("_config.json")]
        m = hf_config.read(path)
        if m.unsupported:
            print(f"hf_parity: {f}: hf_config.py cannot express {m.unsupported}")
            bad += 1
            continue
        seq = json.load(open(path)).get("max_position_embeddings") or \
            json.load(open(path)).get("text_config", {}).get("max_position_embeddings")
        py = "\n".join(['fidelity = "detailed";'] + hf_config.model_group(m, name, seq)) + "\n"
        c = (f'fidelity = "detailed";\nmodel = {{ hf_config = "{path}"; name = "{name}"; '
             f'seq_len = {seq}; }};\n')
        points += [(name + "_py", py + TASK), (name + "_c", c + TASK)]
    with msbatch.Batch() as b:
        res = b.eval(points)
    for i in range(0, len(points), 2):
        a, c = dict(res[i]), dict(res[i + 1])
        name = points[i][0][:-3]
        a.pop("id", None)  # the point's id in the batch
        c.pop("id", None)
        if "error" in a or "error" in c or a != c:
            diff = sorted(k for k in set(a) | set(c) if a.get(k) != c.get(k))
            print(f"hf_parity: {name}: the readers differ in {diff[:8]}")
            bad += 1
        else:
            print(f"hf_parity: {name}: same ({a.get('status')})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
