# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the benchmark exporters (export_models.py, export_zoo.py)."""

import argparse
import hashlib
import os

import torch


def parse_export_args(description, known, default_out):
    """The exporters' command line: --out-dir (or --out), --force, --only a,b. Returns (args, names),
    args.out_dir created; exits with a usage error on an unknown name."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--out-dir", "--out", dest="out_dir", default=default_out)
    ap.add_argument("--force", action="store_true", help="re-export models that are up to date")
    ap.add_argument("--only", help="comma-separated subset of: " + ",".join(known))
    args = ap.parse_args()
    names = list(known) if not args.only else [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        ap.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(known)}")
    os.makedirs(args.out_dir, exist_ok=True)
    return args, names


def seed_everything(seed):
    torch.manual_seed(seed)
    torch.set_num_threads(1)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def dims_of(vi):
    return [d.dim_param if d.HasField("dim_param") else d.dim_value for d in vi.type.tensor_type.shape.dim]
