#!/usr/bin/env python3
"""PyTorch peer of hpt's training-step bench rows (`train_step`, docs/bench.md#peers): one online training step of
the RSSM ensemble, with the same shapes and the same work, timed the same way.

The step: E members, each a GRU (reset after, PyTorch's convention) over a window of K samples from h0, a Gaussian
prior (mu = A h + a, sigma = softplus(B h + b) + 1e-4, s = mu + sigma eps) and a loss head (mu_d, l) = C [h; s] + d
with l clamped to +-20; member m's loss sum_t w_mt (NLL_t + beta KL_t) / K, NLL = (l + (y - mu_d)^2 e^-l) / 2, KL of
N(mu, sigma^2) against N(0, I); backward through the whole window (truncated BPTT), the global gradient norm clipped to
5, one Adam step (lr 1e-3, betas 0.9, 0.999, eps 1e-8). hpt's defaults (dynamics.*); the members' weights are stacked
and multiplied with batched products, the input products of the K samples in one product before the recurrence (x_t
does not depend on h).

Variants per size: eager; the whole step (forward, backward, clipping, Adam with capturable=True) captured in one CUDA
graph; the loss compiled with torch.compile (its backward too), the clipping and Adam eager. A variant that fails
prints "skipped: reason". Prints one table (ms per step, GFLOP/s of the model's count, docs/bench.md#flop-counts)
and, given hpt's bench CSV, hpt's time and the ratio.

  python3 run/bench/torch_training.py [--sizes forecast,default] [--device cuda] [--hpt-csv out/bench-gpu.csv]
"""
import argparse
import csv
import math
import time

import torch

from torch_rollout import timed, write_csv  # the rollout peer's timer (the same fences), CSV

SIZES = {  # name: (E, H, S, I, K) as in docs/bench.md#sizes (bench.training_sizes)
    "forecast": (4, 32, 8, 64, 16),
    "default": (5, 256, 32, 64, 16),
    "h1024": (5, 1024, 32, 64, 16),
    "e64": (64, 256, 32, 64, 16),
}
BETA, LR, CLIP = 1e-3, 1e-3, 5.0
LOG_VAR_LIMIT, SCALE_FLOOR, INITIAL_LOG_VAR = 20.0, 1e-4, math.log(1e-4)


def flops(E, H, S, I, K):
    """The model's count (rssm_bptt_flops): three forwards of 6 H (H + I) + 4 S H + 4 (H + S) per member-sample."""
    return 3.0 * (6.0 * H * (H + I) + 4.0 * S * H + 4.0 * (H + S)) * E * K


def make_params(E, H, S, I, device, g):
    """hpt's initialisation (initialize_rssm_params): GRU U(+-1/sqrt(H)), prior Glorot, loss head 0.01 x Glorot."""
    def u(shape, limit):
        return ((torch.rand(*shape, generator=g, dtype=torch.float64) * 2 - 1) * limit).float().to(device)

    gl, pl, hl = 1 / math.sqrt(H), math.sqrt(6 / (H + S)), 0.01 * math.sqrt(6 / (H + S + 2))
    p = dict(w_ih=u((E, 3 * H, I), gl), w_hh=u((E, 3 * H, H), gl), b_ih=u((E, 3 * H), gl), b_hh=u((E, 3 * H), gl),
             A=u((E, S, H), pl), a=torch.zeros(E, S, device=device), B=u((E, S, H), pl),
             b=torch.zeros(E, S, device=device), C=u((E, 2, H + S), hl), d=torch.zeros(E, 2, device=device))
    p["d"][:, 1] = INITIAL_LOG_VAR
    return {k: v.requires_grad_() for k, v in p.items()}


def make_window(E, H, S, I, K, device, g):
    """x (K, I), y (K), h0 (E, H), bagging weights w (E, K) drawn Poisson(1), prior noise eps (E, K, S)."""
    x = torch.rand(K, I, generator=g) * 2 - 1
    y = torch.randn(K, generator=g) * 0.02
    h0 = torch.rand(E, H, generator=g) - 0.5
    w = torch.poisson(torch.ones(E, K), generator=g)
    eps = torch.randn(E, K, S, generator=g)
    return [t.to(device) for t in (x, y, h0, w, eps)]


def window_loss(p, x, y, h0, w, eps):
    """Sum over the members of their window losses (each member's gradient is its own loss's)."""
    K, H = x.shape[0], h0.shape[1]
    gi = torch.einsum("ki,egi->ekg", x, p["w_ih"]) + p["b_ih"][:, None, :]  # (E, K, 3H)
    h, hs = h0, []
    for t in range(K):
        gh = torch.baddbmm(p["b_hh"][:, :, None], p["w_hh"], h[:, :, None])[:, :, 0]  # (E, 3H)
        r = torch.sigmoid(gi[:, t, :H] + gh[:, :H])
        z = torch.sigmoid(gi[:, t, H:2 * H] + gh[:, H:2 * H])
        n = torch.tanh(gi[:, t, 2 * H:] + r * gh[:, 2 * H:])
        h = (1 - z) * n + z * h
        hs.append(h)
    hs = torch.stack(hs, 1)  # (E, K, H)
    mu = torch.einsum("ekh,esh->eks", hs, p["A"]) + p["a"][:, None, :]
    sigma = torch.nn.functional.softplus(torch.einsum("ekh,esh->eks", hs, p["B"]) + p["b"][:, None, :]) + SCALE_FLOOR
    s = mu + sigma * eps
    head = torch.einsum("ekc,eoc->eko", torch.cat([hs, s], 2), p["C"]) + p["d"][:, None, :]
    l = torch.clamp(head[..., 1], -LOG_VAR_LIMIT, LOG_VAR_LIMIT)
    nll = 0.5 * (l + (y[None, :] - head[..., 0]) ** 2 * torch.exp(-l))
    kl = (0.5 * (sigma * sigma + mu * mu - 1) - torch.log(sigma)).sum(2)
    return (w * (nll + BETA * kl)).sum() / K


def reason(e):
    """The exception's type and the first line of its message."""
    return f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:160]}"


class Step:
    """One training step of a fresh copy of the parameters: forward, backward, clipping, Adam."""

    def __init__(self, size, device, loss_fn=window_loss, capturable=False):
        E, H, S, I, K = SIZES[size]
        g = torch.Generator().manual_seed(1)
        self.p = make_params(E, H, S, I, device, g)
        self.window = make_window(E, H, S, I, K, device, g)
        self.params = list(self.p.values())
        self.opt = torch.optim.Adam(self.params, lr=LR, betas=(0.9, 0.999), eps=1e-8,
                                    **({"capturable": True} if capturable else {}))
        self.loss_fn = loss_fn

    def __call__(self):
        self.opt.zero_grad(set_to_none=False)
        loss = self.loss_fn(self.p, *self.window)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, CLIP)
        self.opt.step()
        return loss


def graphed(size, device):
    """The whole step captured in one CUDA graph (PyTorch's whole-network capture recipe)."""
    step = Step(size, device, capturable=True)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    step.opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        loss = step.loss_fn(step.p, *step.window)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(step.params, CLIP)
        step.opt.step()
    return graph.replay


def variants(size, device, compile_it):
    """(name, callable or None, note) per variant; the callable runs one step."""
    yield "eager", Step(size, device), ""
    if device == "cuda":
        try:
            yield "CUDA graph (whole step)", graphed(size, device), ""
        except Exception as e:  # noqa: BLE001 (report any failure and go on)
            yield "CUDA graph (whole step)", None, reason(e)
    if not compile_it:
        yield "torch.compile (loss)", None, "not asked for at this size (--compile-sizes)"
        return
    if not hasattr(torch, "compile"):
        yield "torch.compile (loss)", None, f"torch {torch.__version__} has no torch.compile"
        return
    try:
        torch._dynamo.reset()  # static shapes for this size
        t0 = time.perf_counter()
        step = Step(size, device, loss_fn=torch.compile(window_loss))
        step()  # compiles the forward and its backward
        yield "torch.compile (loss)", step, f"compiled in {time.perf_counter() - t0:.1f} s"
    except Exception as e:  # noqa: BLE001
        yield "torch.compile (loss)", None, reason(e)


def bench_size(size, device, warmup, repeat, compile_it):
    E, H, S, I, K = SIZES[size]
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    rows = []
    for name, fn, note in variants(size, device, compile_it):
        if fn is None:
            print(f"  {size} {name}: skipped: {note}", flush=True)
            continue
        med, mn = timed(fn, sync, warmup, repeat)
        print(f"  {size} {name}: {med * 1e3:.4f} ms (min {mn * 1e3:.4f}){', ' + note if note else ''}", flush=True)
        rows.append(dict(size=size, variant=name + (" (cpu)" if device == "cpu" else ""), E=E, H=H, S=S, I=I, K=K,
                         median_ms=med * 1e3, min_ms=mn * 1e3, gflops=flops(E, H, S, I, K) / med / 1e9))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default=",".join(SIZES))
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--compile-sizes", default=",".join(SIZES), help="sizes with the torch.compile variant "
                    "(its compilation takes tens of seconds per size)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--peak-gflops", type=float, default=0.0, help="FP32 peak for the %%peak column (0: none)")
    ap.add_argument("--csv", default="")
    ap.add_argument("--hpt-csv", default="", help="hpt bench CSV to compare with (train_step rows)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    results = []
    for size in a.sizes.split(","):
        results += bench_size(size, a.device, a.warmup, a.repeat, size in a.compile_sizes.split(","))
    hpt = {}
    if a.hpt_csv:
        with open(a.hpt_csv) as f:
            hpt = {r["size"]: float(r["median_s"]) * 1e3 for r in csv.DictReader(f) if r["kernel"] == "train_step"}
    name = torch.cuda.get_device_name() if a.device == "cuda" else f"cpu, {a.threads} threads"
    print(f"torch {torch.__version__}, {name}")
    hdr = f"{'size':<9} {'variant':<26} {'ms/step':>9} {'min ms':>9} {'GFLOP/s':>9}"
    hdr += f" {'%peak':>6}" if a.peak_gflops > 0 else ""
    hdr += f" {'hpt ms':>9} {'torch/hpt':>9}" if hpt else ""
    print(hdr)
    print("-" * len(hdr))
    for r in results:
        line = f"{r['size']:<9} {r['variant']:<26} {r['median_ms']:>9.4f} {r['min_ms']:>9.4f} {r['gflops']:>9.2f}"
        line += f" {100 * r['gflops'] / a.peak_gflops:>6.2f}" if a.peak_gflops > 0 else ""
        if r["size"] in hpt:  # above 1: hpt is faster
            line += f" {hpt[r['size']]:>9.4f} {r['median_ms'] / hpt[r['size']]:>8.2f}x"
        print(line)
    if a.csv and results:
        write_csv(a.csv, results)


if __name__ == "__main__":
    main()
