# SPDX-License-Identifier: Apache-2.0
"""ResNet-152 from bench:zoo against a float64 truth: how far flexpipe and onnxruntime-node each are
from torchvision's ResNet-152 run in double precision with the exported graph's (BatchNorm-folded)
weights, on bench:zoo's input for resnet152@1x3x224x224 (docs/benchmarks/zoo.md, "Conformance").

    npm run build:ts && /usr/bin/python3 scripts/bench/resnet152_float64.py

Needs .cache/zoo-models/resnet152.onnx (scripts/bench/export_zoo.py) and the Debian system python
(python3-torch, python3-torchvision, python3-onnx). Each engine runs in its own process
(dist/bench/zoo/zoo-child.js, job 'outputs', 2 threads)."""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.numpy_helper as nh
import torch
import torch.nn as nn
import torchvision

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODEL = os.path.join(REPO_ROOT, ".cache", "zoo-models", "resnet152.onnx")
KEY = "resnet152@1x3x224x224"  # bench:zoo seeds each case's input from its key


def fnv1a(key):
    h = 2166136261
    for ch in key:
        h = ((h ^ ord(ch)) * 16777619) & 0xFFFFFFFF
    return h


def engine_output(engine, out_dir):
    job = {"job": "outputs", "engine": engine, "model": MODEL, "threads": 2, "outDir": out_dir,
           "inputs": [{"name": "input", "dims": [1, 3, 224, 224], "fill": "uniform", "seed": fnv1a(KEY)}]}
    child = os.path.join(REPO_ROOT, "dist", "bench", "zoo", "zoo-child.js")
    r = json.loads(subprocess.run(["node", child, json.dumps(job)], check=True, capture_output=True, text=True).stdout.strip().split("\n")[-1])
    if not r["ok"]:
        sys.exit(f"{engine}: {r['error']}")
    return np.fromfile(r["outputs"][0]["file"], dtype=np.float32)


def seeded_input():
    """The child's mulberry32 uniform [-1, 1) input, recomputed here."""
    a = fnv1a(KEY)
    out = np.empty(3 * 224 * 224, dtype=np.float32)
    for i in range(out.size):
        a = (a + 0x6D2B79F5) & 0xFFFFFFFF
        t = ((a ^ (a >> 15)) * (a | 1)) & 0xFFFFFFFF
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF
        out[i] = np.float32(((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296.0 * 2 - 1)
    return out.reshape(1, 3, 224, 224)


def float64_truth(x):
    """torchvision's ResNet-152 in float64 with the ONNX graph's conv and fc weights; BatchNorm as identity
    (the export folded it into the convs)."""
    m = onnx.load(MODEL)
    inits = {i.name: nh.to_array(i) for i in m.graph.initializer}
    net = torchvision.models.resnet152(weights=None).eval()
    convs = [n for n in m.graph.node if n.op_type == "Conv"]
    mods = [mod for mod in net.modules() if isinstance(mod, nn.Conv2d)]
    assert len(convs) == len(mods), (len(convs), len(mods))
    for n, mod in zip(convs, mods):
        mod.weight = nn.Parameter(torch.from_numpy(inits[n.input[1]].astype(np.float64)))
        mod.bias = nn.Parameter(torch.from_numpy(inits[n.input[2]].astype(np.float64))) if len(n.input) > 2 else None
    for mod in net.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.reset_parameters()
            mod.running_mean.zero_()
            mod.running_var.fill_(1 - mod.eps)
    gemm = next(n for n in m.graph.node if n.op_type == "Gemm")
    net.fc.weight = nn.Parameter(torch.from_numpy(inits[gemm.input[1]].astype(np.float64)))
    net.fc.bias = nn.Parameter(torch.from_numpy(inits[gemm.input[2]].astype(np.float64)))
    with torch.no_grad():
        return net.double()(torch.from_numpy(x.astype(np.float64))).numpy().ravel()


def main():
    with tempfile.TemporaryDirectory() as d:
        fp, ort = engine_output("flexpipe", d), engine_output("ort", d)
    truth = float64_truth(seeded_input())
    print(f"max |truth| {np.abs(truth).max():.4f}")
    print(f"flexpipe vs truth {np.abs(fp - truth).max():.3e}")
    print(f"onnxruntime vs truth {np.abs(ort - truth).max():.3e}")
    print(f"flexpipe vs onnxruntime {np.abs(fp - ort).max():.3e}")


if __name__ == "__main__":
    main()
