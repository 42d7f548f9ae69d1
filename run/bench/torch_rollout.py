#!/usr/bin/env python3
"""PyTorch peer of hpt's rollout bench (docs/bench.md#peers): the same GRU shapes, timed the same
way.

Variants per size: nn.GRUCell in an eager Python loop, the same loop captured in one CUDA graph, the cell compiled
with torch.compile in the same loop and that loop captured in one CUDA graph (each skipped with the reason where it
fails), nn.GRU (cuDNN, teacher-forced: a whole input sequence, not an autoregressive rollout), and on the CPU
nn.GRUCell eager with the same thread count as hpt's OpenMP run. The E members x N scenarios are batched as
E*N rows of one cell (same FLOPs as E independent cells, but one weight set: 1/E of the bytes per step);
on a GPU also the E members with weights of their own (batched products, in a CUDA graph), as hpt's
ensemble. Prints one table (us per step, member-steps/s) and,
given hpt's bench CSV, the ratios.

  python3 run/bench/torch_rollout.py [--sizes small,batch] [--threads 16] [--hpt-csv out/bench-gpu.csv] [--csv F]
"""
import argparse
import csv
import statistics
import time

import torch

SIZES = {  # name: (E, N, H, I, S, Y) as in docs/bench.md#sizes
    "small": (5, 1, 256, 64, 32, 1000),
    "prototype": (3, 1, 256, 64, 32, 50),
    "wide": (5, 1, 1024, 64, 32, 200),
    "batch": (5, 1024, 256, 64, 32, 200),
    "sweep": (5, 16384, 128, 64, 32, 100),
}


def timed(fn, sync, warmup, repeat):
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


def write_csv(path, rows):
    """One row per dict, the first one's keys as the header."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


def skipped(name, variant, e):
    print(f"  {name} {variant}: skipped: {type(e).__name__}: {(str(e).splitlines() or [''])[0][:160]}", flush=True)


def compiled_variants(name, cell, x, h0, Y, sync, warmup, repeat):
    """The GRUCell compiled with torch.compile (Inductor fuses the gates' elementwise work) in the eager loop, and
    that loop captured in one CUDA graph; each skipped with the reason where it fails."""
    if not hasattr(torch, "compile"):
        print(f"  {name} GRUCell torch.compile: skipped: torch {torch.__version__} has no torch.compile")
        return []
    rows = []
    try:
        torch._dynamo.reset()  # static shapes for this size
        t0 = time.perf_counter()
        step = torch.compile(cell)

        @torch.no_grad()
        def compiled():
            h = h0
            for _ in range(Y):
                h = step(x, h)
            return h

        compiled()
        sync()
        print(f"  {name} GRUCell torch.compile: compiled in {time.perf_counter() - t0:.1f} s", flush=True)
        med, mn = timed(compiled, sync, warmup, repeat)
        rows.append(("GRUCell torch.compile", med, mn))
    except Exception as e:  # noqa: BLE001 (report any failure and go on)
        skipped(name, "GRUCell torch.compile", e)
        return rows
    try:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            compiled()
        med, mn = timed(graph.replay, sync, warmup, repeat)
        rows.append(("GRUCell torch.compile + CUDA graph", med, mn))
    except Exception as e:  # noqa: BLE001
        skipped(name, "GRUCell torch.compile + CUDA graph", e)
    return rows


def ensemble_variant(E, N, H, I, Y, device, sync, warmup, repeat, g):
    """E members with weights of their own, as hpt's ensemble (the GRUCell rows above share one
    cell: the same FLOPs, but 1/E of the weight bytes per step): each step's gate sums as two
    products batched over the members (torch.baddbmm), PyTorch's GRU cell on them, the loop
    captured in one CUDA graph."""
    scale = H ** -0.5
    w_ih = (torch.randn(E, 3 * H, I, generator=g) * scale).to(device).transpose(1, 2)
    w_hh = (torch.randn(E, 3 * H, H, generator=g) * scale).to(device).transpose(1, 2)
    b_ih = (torch.randn(E, 1, 3 * H, generator=g) * scale).to(device)
    b_hh = (torch.randn(E, 1, 3 * H, generator=g) * scale).to(device)
    x = torch.randn(E, N, I, generator=g).to(device)
    h0 = torch.randn(E, N, H, generator=g).to(device)

    def step(h):
        xr, xz, xn = torch.baddbmm(b_ih, x, w_ih).chunk(3, 2)
        hr, hz, hn = torch.baddbmm(b_hh, h, w_hh).chunk(3, 2)
        r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
        return (1 - z) * torch.tanh(xn + r * hn) + z * h

    with torch.no_grad():
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                step(h0)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            h = h0
            for _ in range(Y):
                h = step(h)
    med, mn = timed(graph.replay, sync, warmup, repeat)
    return [("ensemble, E weight sets (bmm), CUDA graph", med, mn)]


def bench_size(name, device, threads, warmup, repeat, cpu_steps):
    E, N, H, I, S, Y = SIZES[name]
    B = E * N
    if device == "cpu":
        Y = min(Y, cpu_steps)  # per-step cost; the CPU peer runs fewer steps of the same shape
    g = torch.Generator().manual_seed(1)
    cell = torch.nn.GRUCell(I, H).to(device)
    x = torch.randn(B, I, generator=g).to(device)
    h0 = torch.randn(B, H, generator=g).to(device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    rows = []

    @torch.no_grad()
    def eager():
        h = h0
        for _ in range(Y):
            h = cell(x, h)
        return h

    med, mn = timed(eager, sync, warmup, repeat)
    rows.append(("GRUCell eager" + (" (cpu, %d thr)" % threads if device == "cpu" else ""), med, mn))
    if device == "cuda":
        static_h = h0.clone()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s), torch.no_grad():
            for _ in range(2):
                eager()
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph), torch.no_grad():
            h = static_h
            for _ in range(Y):
                h = cell(x, h)
        med, mn = timed(graph.replay, sync, warmup, repeat)
        rows.append(("GRUCell CUDA graph", med, mn))
        rows += compiled_variants(name, cell, x, h0, Y, sync, warmup, repeat)
        try:
            rows += ensemble_variant(E, N, H, I, Y, device, sync, warmup, repeat, g)
        except Exception as e:  # noqa: BLE001 (report any failure and go on)
            skipped(name, "ensemble, E weight sets", e)
        # nn.GRU at 81920 rows hit an illegal memory access on the H200 (torch 2.x, cuDNN 9) and
        # poisons the CUDA context, so it is skipped above 65535 rows.
        if B <= 65535:
            gru = torch.nn.GRU(I, H).to(device)
            seq = torch.randn(Y, B, I, generator=g).to(device)

            @torch.no_grad()
            def cudnn():
                return gru(seq, h0.unsqueeze(0))

            med, mn = timed(cudnn, sync, warmup, repeat)
            rows.append(("nn.GRU cuDNN (teacher-forced)", med, mn))
    out = []
    for variant, med, mn in rows:
        us = med / Y * 1e6
        print(f"  {name} {variant}: {us:.2f} us/step", flush=True)  # kept in the log if a later size is cut off
        out.append(dict(size=name, variant=variant, E=E, N=N, H=H, I=I, Y=Y, us_per_step=us,
                        min_us_per_step=mn / Y * 1e6, member_steps_per_s=B * Y / med,
                        gflops=6.0 * H * (H + I) * B * Y / med / 1e9))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default=",".join(SIZES))
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--cpu-steps", type=int, default=20)
    ap.add_argument("--no-cpu", action="store_true")
    ap.add_argument("--csv", default="")
    ap.add_argument("--hpt-csv", default="", help="hpt bench CSV to compare with (rollout rows)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    devices = (["cuda"] if torch.cuda.is_available() else []) + ([] if a.no_cpu else ["cpu"])
    results = []
    for name in a.sizes.split(","):
        for dev in devices:
            results += bench_size(name, dev, a.threads, a.warmup, a.repeat, a.cpu_steps)
    hpt = {}
    if a.hpt_csv:
        with open(a.hpt_csv) as f:
            for r in csv.DictReader(f):
                if r.get("kernel", "").startswith("rollout"):
                    hpt[r["size"]] = float(r["us_per_step"])
    print(f"torch {torch.__version__}, device {torch.cuda.get_device_name() if torch.cuda.is_available() else 'cpu'}"
          f", cpu threads {a.threads}")
    hdr = f"{'size':<10} {'variant':<36} {'us/step':>10} {'member-steps/s':>15} {'GFLOP/s':>9}"
    hdr += f" {'hpt us/step':>12} {'hpt speedup':>12}" if hpt else ""
    print(hdr)
    print("-" * len(hdr))
    for r in results:
        line = (f"{r['size']:<10} {r['variant']:<36} {r['us_per_step']:>10.2f} {r['member_steps_per_s']:>15.4g}"
                f" {r['gflops']:>9.1f}")
        if r["size"] in hpt:
            line += f" {hpt[r['size']]:>12.2f} {r['us_per_step'] / hpt[r['size']]:>11.2f}x"
        print(line)
    if a.csv:
        write_csv(a.csv, results)


if __name__ == "__main__":
    main()
