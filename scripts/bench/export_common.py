# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the benchmark exporters (export_models.py, export_zoo.py)."""

import hashlib

import torch


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
