#!/usr/bin/python3
"""Writes a random Vision Transformer (ONNX, from torch.onnx.export) and a VNN-LIB box on its
input, for bound and sharding runs; tests/lirpa/vit_export_check.py builds its small one here.

Usage: vit_instance.py OUT_DIR [--image 8] [--channels 1] [--patch 4] [--dim 16] [--heads 2]
           [--depth 2] [--mlp 32] [--classes 3] [--eps 0.002] [--seed 0]
The network: patch embedding (Conv, stride = patch), a class token concatenated in front,
position embeddings, `depth` pre-norm blocks (LayerNorm, softmax attention with `heads` heads
from one fused QKV Linear, LayerNorm, Linear-GELU-Linear MLP, residual adds), a final
LayerNorm and a Linear head on the class token. The box is a random point of [0, 1]^n +- eps.
Prints the ONNX and VNN-LIB paths and the parameter count.
"""
import argparse
import os

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim, heads, mlp):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.fc1, self.act, self.fc2 = nn.Linear(dim, mlp), nn.GELU(), nn.Linear(mlp, dim)

    def forward(self, x):
        b, n, d = x.shape
        h = self.heads
        # q, k, v: [b, h, n, d / h] (torch.onnx.export writes the unbind as Split + Squeeze)
        q, k, v = self.qkv(self.ln1(x)).reshape(b, n, 3, h, d // h).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ k.transpose(-2, -1) * (d // h) ** -0.5, dim=-1)  # true softmax
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, n, d))
        return x + self.fc2(self.act(self.fc1(self.ln2(x))))


class ViT(nn.Module):
    def __init__(self, image=8, channels=1, patch=4, dim=16, heads=2, depth=2, mlp=32, classes=3):
        super().__init__()
        tokens = (image // patch) ** 2
        self.embed = nn.Conv2d(channels, dim, patch, stride=patch)
        self.cls = nn.Parameter(0.5 * torch.randn(1, 1, dim))
        self.pos = nn.Parameter(0.1 * torch.randn(1, tokens + 1, dim))
        self.blocks = nn.Sequential(*[Block(dim, heads, mlp) for _ in range(depth)])
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)
        for m in self.modules():  # LayerNorm affine parameters off their defaults
            if isinstance(m, nn.LayerNorm):
                nn.init.uniform_(m.weight, 0.5, 1.5)
                nn.init.uniform_(m.bias, -0.1, 0.1)

    def forward(self, x):
        x = self.embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        return self.head(self.ln(self.blocks(x))[:, 0])


def box_vnnlib(path, lower, upper, outputs):
    """A VNN-LIB file whose input box is [lower, upper] (flat) and a trivial output clause."""
    lines = [f"(declare-const X_{i} Real)" for i in range(lower.numel())]
    lines += [f"(declare-const Y_{i} Real)" for i in range(outputs)]
    for i, (lo, up) in enumerate(zip(lower.tolist(), upper.tolist())):
        lines += [f"(assert (>= X_{i} {lo!r}))", f"(assert (<= X_{i} {up!r}))"]
    lines.append("(assert (>= Y_0 1000000))")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def write_instance(out, image=8, channels=1, patch=4, dim=16, heads=2, depth=2, mlp=32, classes=3, eps=0.002,
                   seed=0):
    """Exports the ViT (float32) and its box; returns (model in float64, onnx path, vnnlib
    path, lower, upper) with lower/upper of shape [channels, image, image]."""
    torch.manual_seed(seed)
    net = ViT(image, channels, patch, dim, heads, depth, mlp, classes).eval()
    shape = (channels, image, image)
    name = f"vit_{image}x{image}_p{patch}_d{dim}_h{heads}_b{depth}_m{mlp}"
    os.makedirs(out, exist_ok=True)
    onnx_path, vnnlib_path = os.path.join(out, name + ".onnx"), os.path.join(out, name + ".vnnlib")
    torch.onnx.export(net, (torch.zeros((1,) + shape),), onnx_path, opset_version=13, input_names=["input"],
                      output_names=["output"])
    x0 = torch.rand(shape, dtype=torch.float64)
    lower, upper = (x0 - eps).clamp(0, 1), (x0 + eps).clamp(0, 1)
    box_vnnlib(vnnlib_path, lower.flatten(), upper.flatten(), classes)
    return net.double(), onnx_path, vnnlib_path, lower, upper


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    for key, default in (("image", 8), ("channels", 1), ("patch", 4), ("dim", 16), ("heads", 2), ("depth", 2),
                         ("mlp", 32), ("classes", 3), ("seed", 0)):
        ap.add_argument("--" + key, type=int, default=default)
    ap.add_argument("--eps", type=float, default=0.002)
    a = ap.parse_args()
    net, onnx_path, vnnlib_path, _, _ = write_instance(a.out, a.image, a.channels, a.patch, a.dim, a.heads, a.depth,
                                                       a.mlp, a.classes, a.eps, a.seed)
    print(onnx_path)
    print(vnnlib_path)
    print(f"{sum(p.numel() for p in net.parameters())} parameters")


if __name__ == "__main__":
    with torch.no_grad():
        main()
