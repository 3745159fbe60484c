# SPDX-License-Identifier: Apache-2.0
"""Export a zoo of torchvision networks (classification CNNs and transformers, three segmentation
networks) to ONNX for the latency/conformance benchmark."""

# Usage (from the repository root; needs the Debian system python with python3-torch,
# python3-torchvision, python3-onnx -- a pyenv `python3` on PATH does not have torch):
#
#     /usr/bin/python3 scripts/bench/export_zoo.py                  # skip models already exported
#     /usr/bin/python3 scripts/bench/export_zoo.py --force          # re-export everything
#     /usr/bin/python3 scripts/bench/export_zoo.py --only resnet18,swin_t --out /tmp/zoo
#
# Outputs go to .cache/zoo-models/ (gitignored, never committed): <name>.onnx per model and a
# manifest.json with, per model, the export command, package versions, opset, input shapes the
# benchmark should use, parameter count, op histogram, size and sha256; models that fail to export are
# listed under "skipped" with the reason. Weights are random with per-model seeds (weights=None,
# nothing is downloaded); BatchNorm statistics are re-estimated on random inputs and zero-initialised
# heads get random weights, so that outputs are not degenerate. One input `input` (NCHW float32), one
# output `output`; batch is always dynamic, height and width where the network allows.

import hashlib
import json
import os
import sys
import time
import warnings
from collections import Counter

import onnx
import torch
import torch.nn as nn
import torchvision

from export_common import dims_of, parse_export_args, seed_everything, sha256

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_OUT_DIR = os.path.join(REPO_ROOT, ".cache", "zoo-models")
OPSET = 17  # newest opset torch 1.13 exports
COMMAND = "/usr/bin/python3 scripts/bench/export_zoo.py"
CALIBRATION = {"batches": 6, "batch_size": 4}  # BatchNorm re-estimation: 6 x [4, 3, S, S] randn
WIDE = (192, 320)  # the non-square benchmark size
MIN_STD = 1e-3
THREADS = 2  # fixed (results can depend on it); with 1 thread this torch build skips oneDNN for convs


def _no_download(url, *args, **kwargs):
    raise RuntimeError(f"refusing to download {url}: the zoo uses random weights")


# weights=None everywhere; this makes sure that no default (e.g. a segmentation backbone's) downloads.
torchvision.models._api.load_state_dict_from_url = torch.hub.load_state_dict_from_url = _no_download

# --- Model table: name -> torchvision constructor kwargs (besides weights=None), native size, family, task


def cls(family, size=224, notes="", **kwargs):
    return {"task": "classification", "family": family, "size": size, "kwargs": kwargs, "notes": notes}


def seg(family, notes="", **kwargs):
    # Native size of the benchmark, not of torchvision's weights (which resize to 520).
    return {"task": "segmentation", "family": family, "size": 224, "notes": notes,
            "kwargs": {"weights_backbone": None, **kwargs}}


INCEPTION_KW = {"aux_logits": False, "init_weights": True}
ZOO = {
    "resnet18": cls("resnet"), "resnet34": cls("resnet"), "resnet50": cls("resnet"),
    "resnet101": cls("resnet"), "resnet152": cls("resnet"),
    "resnext50_32x4d": cls("resnext", notes="grouped 3x3 convs (32 groups)"),
    "wide_resnet50_2": cls("wide_resnet"),
    "vgg11": cls("vgg"), "vgg16": cls("vgg"), "alexnet": cls("alexnet"),
    "squeezenet1_0": cls("squeezenet"), "squeezenet1_1": cls("squeezenet"),
    "densenet121": cls("densenet"), "densenet169": cls("densenet"),
    "googlenet": cls("googlenet", **INCEPTION_KW),
    "inception_v3": cls("inception", 299, **INCEPTION_KW),
    "mobilenet_v2": cls("mobilenet"), "mobilenet_v3_small": cls("mobilenet"),
    "mobilenet_v3_large": cls("mobilenet"),
    "mnasnet0_5": cls("mnasnet"), "mnasnet1_0": cls("mnasnet"),
    "shufflenet_v2_x0_5": cls("shufflenet"), "shufflenet_v2_x1_0": cls("shufflenet"),
    "efficientnet_b0": cls("efficientnet"), "efficientnet_b1": cls("efficientnet", 240),
    "efficientnet_b2": cls("efficientnet", 288), "efficientnet_b3": cls("efficientnet", 300),
    "efficientnet_v2_s": cls("efficientnet_v2", 384),
    "regnet_x_400mf": cls("regnet"), "regnet_x_800mf": cls("regnet"), "regnet_x_1_6gf": cls("regnet"),
    "regnet_y_400mf": cls("regnet"), "regnet_y_800mf": cls("regnet"), "regnet_y_1_6gf": cls("regnet"),
    "convnext_tiny": cls("convnext", notes="layer_scale (1e-6 in torchvision) set to random 0.1..0.5"),
    "vit_b_16": cls("vit", notes="classification head (zero in torchvision) set to random weights"),
    "swin_t": cls("swin"),
    "deeplabv3_mobilenet_v3_large": seg("deeplabv3", aux_loss=False),
    "lraspp_mobilenet_v3_large": seg("lraspp"),
    "fcn_resnet50": seg("fcn", aux_loss=False),
}


def package_of(spec):
    return torchvision.models.segmentation if spec["task"] == "segmentation" else torchvision.models


def seed_of(name):
    """Per-model seed from the name (stable when the table changes); seed+1..+4 are used too."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big") % 10**6 * 10


assert len({seed_of(n) for n in ZOO}) == len(ZOO)

# --- Building the torch model


class SegmentationOut(nn.Module):
    """A torchvision segmentation model that returns only its 'out' tensor."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def randomize_degenerate_init(model, seed):
    """Seeded random values where torchvision's init hides a computation: all-zero Linear/Conv weights
    (vit_b_16's head) and ConvNeXt's 1e-6 layer_scale. (BatchNorm gammas are never zero: the ResNets'
    zero_init_residual defaults to False.) Returns what was changed, for the manifest."""
    g = torch.Generator().manual_seed(seed)
    fixes = []
    with torch.no_grad():
        for name, m in model.named_modules():
            if isinstance(m, (nn.Linear, nn.Conv2d)) and not m.weight.any():
                m.weight.copy_(0.02 * torch.randn(m.weight.shape, generator=g))
                if m.bias is not None:
                    m.bias.copy_(0.02 * torch.randn(m.bias.shape, generator=g))
                fixes.append(f"{name}: all-zero weight and bias -> N(0, 0.02^2)")
        scales = [p for n, p in model.named_parameters() if n.endswith("layer_scale")]
        for p in scales:
            p.copy_(0.1 + 0.4 * torch.rand(p.shape, generator=g))
        if scales:
            fixes.append(f"{len(scales)} layer_scale tensors randomized to U(0.1, 0.5)")
    return fixes


def recalibrate_batchnorm(model, size, seed):
    """Re-estimate BatchNorm running statistics (cumulative average) on seeded random batches. Only the
    BatchNorm layers are in training mode: dropout and stochastic depth stay off."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    g = torch.Generator().manual_seed(seed)
    model.eval()
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None
        bn.train()
    with torch.no_grad():
        for _ in range(CALIBRATION["batches"] if bns else 0):
            model(torch.randn(CALIBRATION["batch_size"], 3, size, size, generator=g))
    return len(bns)


def build(name, spec, seed):
    seed_everything(seed)
    torch.set_num_threads(THREADS)
    ctor = getattr(package_of(spec), name)
    model = ctor(weights=None, **spec["kwargs"])
    if spec["task"] == "segmentation":
        model = SegmentationOut(model)
    fixes = randomize_degenerate_init(model, seed + 1)
    n_bn = recalibrate_batchnorm(model, spec["size"], seed + 2)
    return model.eval(), fixes, n_bn

# --- Checks in torch, export, manifest


def one_line(exc):
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


def probe_shapes(model, size, seed):
    """Run the eager model on each candidate benchmark shape, and a trace made at the native shape (as the
    ONNX exporter makes it) on the others: a shape is kept only if both run and agree, which catches
    Python control flow on sizes that tracing freezes (e.g. swin's window shift)."""
    g = torch.Generator().manual_seed(seed)
    native = [1, 3, size, size]
    candidates = [native, [4, 3, size, size], [1, 3, *WIDE]]
    accepted, rejected, out_shapes = [], {}, []
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(model, torch.randn(native, generator=g), check_trace=False)
        for shape in candidates:
            x = torch.randn(shape, generator=g)
            try:
                want = model(x)
            except Exception as e:  # noqa: BLE001 -- the reason goes to the manifest
                rejected[str(shape)] = "torch: " + one_line(e)
                continue
            got = traced(x)
            tol = 1e-4 * want.abs().max().item()
            if got.shape != want.shape or not torch.allclose(got, want, rtol=1e-3, atol=tol):
                rejected[str(shape)] = "trace made at the native shape disagrees with eager torch"
                continue
            accepted.append(shape)
            out_shapes.append(list(want.shape))
    if native not in accepted:
        raise RuntimeError(f"native shape {native} rejected: {rejected.get(str(native))}")
    return accepted, rejected, out_shapes[0]


def export_onnx(model, size, spatial, out_shape, tmp, name):
    axes = {0: "batch", 2: "height", 3: "width"} if spatial else {0: "batch"}
    out_axes = axes if len(out_shape) == 4 else {0: "batch"}
    x = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), tmp, input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": axes, "output": out_axes}, opset_version=OPSET,
                          do_constant_folding=True, export_params=True)
    m = onnx.load(tmp)
    for axis, dim in enumerate(m.graph.output[0].type.tensor_type.shape.dim):
        if axis not in out_axes:  # e.g. the 21 classes of a segmentation map, left symbolic by the exporter
            dim.dim_value = out_shape[axis]
    m.doc_string = f"flexpipe zoo model {name}; generated by {COMMAND} (random seeded weights)"
    onnx.save_model(m, tmp)
    onnx.checker.check_model(tmp)
    return onnx.shape_inference.infer_shapes(m, strict_mode=True)


def output_std(model, size, seed):
    x = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        y = model(x)
    std = y.std().item()
    if not std > MIN_STD or not torch.isfinite(y).all():
        raise AssertionError(f"degenerate output: std {std:.3g} (need > {MIN_STD}) or not finite")
    return std


def op_histogram(m):
    return dict(sorted(Counter(n.op_type for n in m.graph.node).items(), key=lambda kv: (-kv[1], kv[0])))


def spec_record(name, spec):
    """Everything that determines the exported file; a manifest entry with another one is re-exported."""
    return {"constructor": f"{package_of(spec).__name__}.{name}",
            "kwargs": {"weights": None, **spec["kwargs"]}, "native_size": spec["size"], "seed": seed_of(name),
            "calibration": CALIBRATION, "torch_threads": THREADS, "opset": OPSET, "export_command": COMMAND,
            "torch": torch.__version__, "torchvision": torchvision.__version__, "onnx": onnx.__version__}


def export_model(name, spec, path):
    seed = seed_of(name)
    t0 = time.time()
    model, fixes, n_bn = build(name, spec, seed)
    shapes, rejected, out_shape = probe_shapes(model, spec["size"], seed + 3)
    spatial = [1, 3, *WIDE] in shapes
    tmp = path + ".tmp"
    t1 = time.time()
    try:
        try:
            m = export_onnx(model, spec["size"], spatial, out_shape, tmp, name)
        except Exception as e:  # noqa: BLE001 -- e.g. adaptive pooling to 7x7 needs static H, W
            if not spatial:
                raise
            rejected[str([1, 3, *WIDE])] = "onnx export with dynamic height/width: " + one_line(e)
            shapes, spatial = [s for s in shapes if s != [1, 3, *WIDE]], False
            m = export_onnx(model, spec["size"], spatial, out_shape, tmp, name)
        export_seconds = time.time() - t1
        std = output_std(model, spec["size"], seed + 4)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    inits = {i.name for i in m.graph.initializer}
    return {
        "file": os.path.relpath(path, REPO_ROOT), "task": spec["task"], "family": spec["family"],
        "notes": spec["notes"], "native": [1, 3, spec["size"], spec["size"]], "shapes": shapes,
        "rejected_shapes": rejected, "dynamic_axes": ["batch", "height", "width"] if spatial else ["batch"],
        "params": sum(p.numel() for p in model.parameters()), "batchnorm_layers_recalibrated": n_bn,
        "init_fixes": fixes, "output_std": round(std, 6), "bytes": os.path.getsize(path),
        "sha256": sha256(path), "nodes": len(m.graph.node), "op_types": op_histogram(m),
        "inputs": {i.name: dims_of(i) for i in m.graph.input if i.name not in inits},
        "outputs": {o.name: dims_of(o) for o in m.graph.output},
        "export_seconds": round(export_seconds, 1), "total_seconds": round(time.time() - t0, 1),
        "spec": spec_record(name, spec),
    }


def up_to_date(entry, name, spec, path):
    return (entry is not None and os.path.exists(path) and entry["spec"] == spec_record(name, spec)
            and entry["bytes"] == os.path.getsize(path) and entry["sha256"] == sha256(path))


def save_manifest(path, manifest):
    manifest["models"] = dict(sorted(manifest["models"].items(), key=lambda kv: list(ZOO).index(kv[0])))
    with open(path + ".tmp", "w") as f:
        f.write(json.dumps(manifest, indent=2) + "\n")
    os.replace(path + ".tmp", path)


def main():
    args, names = parse_export_args(__doc__, ZOO, DEFAULT_OUT_DIR)
    manifest_path = os.path.join(args.out_dir, "manifest.json")
    manifest = {"models": {}, "skipped": {}}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest.update(json.load(f))
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, onnx {onnx.__version__}; "
          f"out: {args.out_dir}", flush=True)
    t_start = time.time()
    for name in names:
        spec, path = ZOO[name], os.path.join(args.out_dir, name + ".onnx")
        if not args.force and up_to_date(manifest["models"].get(name), name, spec, path):
            print(f"{name}: up to date, skipped (--force re-exports)", flush=True)
            continue
        try:
            entry = export_model(name, spec, path)
        except Exception as e:  # noqa: BLE001 -- recorded, and the zoo goes on
            manifest["models"].pop(name, None)
            if os.path.exists(path):
                os.remove(path)
            manifest["skipped"][name] = one_line(e)
            print(f"{name}: SKIPPED: {one_line(e)}", flush=True)
        else:
            manifest["models"][name] = entry
            manifest["skipped"].pop(name, None)
            print(f"{name}: {entry['bytes'] / 1e6:.1f} MB, {entry['params'] / 1e6:.2f} M params, "
                  f"{entry['nodes']} nodes, std {entry['output_std']:.3g}, shapes {entry['shapes']}, "
                  f"export {entry['export_seconds']} s, total {entry['total_seconds']} s", flush=True)
        save_manifest(manifest_path, manifest)
    print(f"done in {time.time() - t_start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
