"""Writes random CNN and ResNet verification instances for graph branch and bound benchmarks.

Each instance is an ONNX network (torch.onnx.export of a seeded random CNN or ResNet on a
[1, 3, 8, 8] input), and a VNN-LIB property over an L-inf box around a random point whose
unsafe region is y_0 <= t, with t below the smallest value of y_0 that a projected gradient
descent found (64 starts, 100 signed steps) by a `--gap` fraction of y_0's sampled range:
usually unsat, and too hard for CROWN alone, so that branch and bound decides it. Prints the instances as CSV lines
(onnx,vnnlib). Data for benchmarks only; nothing here is a reference verdict.

    /usr/bin/python3 bench/graph_bab_instances.py --out /tmp/gbab --count 6
"""

import argparse
import io
import pathlib

import torch


def network(kind, seed):
    g = torch.Generator().manual_seed(seed)
    conv = lambda cin, cout: torch.nn.Conv2d(cin, cout, 3, padding=1)
    if kind == "cnn":
        net = torch.nn.Sequential(conv(3, 8), torch.nn.ReLU(), conv(8, 8), torch.nn.ReLU(), torch.nn.Flatten(),
                                  torch.nn.Linear(8 * 64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    else:
        class Res(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.c0, self.c1, self.c2 = conv(3, 8), conv(8, 8), conv(8, 8)
                self.fc = torch.nn.Linear(8 * 64, 4)

            def forward(self, x):
                r0 = torch.relu(self.c0(x))
                return self.fc(torch.flatten(torch.relu(self.c2(torch.relu(self.c1(r0))) + r0), 1))
        net = Res()
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * (1.0 / max(1, p[0].numel()) ** 0.5))
    return net.double().eval()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--count", type=int, default=6)
    p.add_argument("--eps", type=float, default=0.05)
    p.add_argument("--gap", type=float, default=0.02)
    a = p.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for i in range(a.count):
        kind = "cnn" if i % 2 == 0 else "resnet"
        net = network(kind, 1000 + i)
        g = torch.Generator().manual_seed(2000 + i)
        x0 = torch.rand((1, 3, 8, 8), generator=g, dtype=torch.float64)
        lo, hi = (x0 - a.eps).clamp(0, 1), (x0 + a.eps).clamp(0, 1)
        with torch.no_grad():
            xs = lo + (hi - lo) * torch.rand((4000, 3, 8, 8), generator=g, dtype=torch.float64)
            spread = net(xs)[:, 0]
        x = (lo + (hi - lo) * torch.rand((64, 3, 8, 8), generator=g, dtype=torch.float64)).requires_grad_(True)
        for _ in range(100):  # x <- clamp(x - step sign(grad y_0), lo, hi)
            (grad,) = torch.autograd.grad(net(x)[:, 0].sum(), x)
            with torch.no_grad():
                x = torch.max(torch.min(x - 0.1 * a.eps * grad.sign(), hi), lo).requires_grad_(True)
        with torch.no_grad():
            found = min(float(net(x)[:, 0].min()), float(spread.min()))
        t = found - a.gap * float(spread.max() - spread.min())
        name = f"{kind}_{i}"
        buf = io.BytesIO()
        torch.onnx.export(net, x0, buf, input_names=["x"], output_names=["y"], opset_version=13)
        (out / f"{name}.onnx").write_bytes(buf.getvalue())
        lines = [f"(declare-const X_{k} Real)" for k in range(lo.numel())]
        lines += [f"(declare-const Y_{k} Real)" for k in range(4)]
        for k, (l, u) in enumerate(zip(lo.flatten().tolist(), hi.flatten().tolist())):
            lines += [f"(assert (>= X_{k} {l!r}))", f"(assert (<= X_{k} {u!r}))"]
        lines.append(f"(assert (<= Y_0 {t!r}))")
        (out / f"{name}.vnnlib").write_text("\n".join(lines) + "\n")
        print(f"{out / name}.onnx,{out / name}.vnnlib")


if __name__ == "__main__":
    main()
