#!/usr/bin/env python3
"""Generates tests/data/curves/torch-curves.h5: a held-out evaluation corpus of REAL PyTorch training
curves for hpt's loss-curve forecaster (run.mode = forecast).

Five problems (each a family of curves, attribute `problem` = `group`):
  mlp-teacher     MLP regression (MSE) on a fixed random teacher MLP's outputs, Gaussian inputs, dim 32
  mlp-spirals     MLP classification of 2-D interleaved spirals (5 arms, Gaussian noise)
  cnn-shapes      small CNN classifying generated 16x16 images of 6 shape classes (bars, square, ring,
                  diagonal, cross) at random places and sizes, plus noise
  gru-charlm      character-level GRU language model on the host Python's standard-library sources
  transformer-lm  3-layer decoder-only transformer (d=128) on the same text
and, with --problems, six more: cnn-autoenc (a convolutional autoencoder of the shapes, MSE),
mlp-noisy (spirals with 30 % wrong labels: it memorises), lstm-adding (Hochreiter's adding problem
for an LSTM: a plateau, then a drop once it finds the marked values) and cnn-bn-shapes (the shape
classifier with batch normalisation and dropout), and two of the eleventh corpus: vit-shapes (a
2-block vision transformer on 4x4 patches of the shapes) and mod-add (a + b mod 59 learned from 40 %
of the pairs by an embedding MLP, weight decay 1 under AdamW);
crossed with optimizers {sgd (momentum 0.9), adamw}, schedules {constant, cosine, wsd, step,
linear}, 2 peak learning rates (lr0 = a good one, lr1 = a 3-10x higher one) and 2 seeds; plus a few
runs whose batch size doubles half-way (id suffix `_bs2x`).

Every step logs the minibatch training loss (before the update of that step), the learning rate used
by that step's update and the global gradient L2 norm (before clipping; the LM problems clip at
1.0). Every 25 steps (and at the last step) the validation loss on a fixed held-out batch set is
evaluated after that step's update. A run whose loss or gradient norm becomes non-finite, or whose
loss exceeds 100x its first loss, stops there and is kept (diverged = 1) up to its last finite step.

Output (HDF5, gzip + shuffle): /runs/<id>/{step (int64, from 1), loss, lr, grad_norm (float32, the
length of step), val_step (int64), val_loss (float32)}, with the run attributes problem, optimizer,
schedule, lr_peak, batch_size, seed, diverged, group, split (and a few more), and the file attributes
generator and torch_version.

    python3 run/corpus/torch_curves.py --out DIR [--workers N] [--budget-s S] [--resume H5] [--smoke]
        [--seeds 0,1] [--no-batch-runs] [--split-all NAME] [--lr-scale 1]

Runs are spread over a pool of worker processes (one torch thread each); the MLPs and the CNN train
on the CPU, the two language models on the GPU when there is one. A failed run is recorded in
summary.json and skipped; runs not finished within --budget-s (default: no limit) are dropped
(seed-0 runs go first), and --resume FILE keeps an earlier output's runs and trains only the missing
ones (the split is drawn again over the whole set). tests/data/curves/README.md describes the corpus.
"""
import argparse
import glob
import json
import math
import multiprocessing as mp
import os
import socket
import sys
import sysconfig
import time
import traceback

import numpy as np

GENERATOR = "run/corpus/torch_curves.py"
SPLIT_SEED = 20250611
HELDOUT_FRACTION = 0.6
VAL_EVERY = 25
CHECK_EVERY = 100  # steps between divergence checks (device -> host copies)
EXPLODE_FACTOR = 100.0
OPTIMIZERS = ("sgd", "adamw")
SCHEDULES = ("constant", "cosine", "wsd", "step", "linear")
SEEDS = (0, 1)
TEXT_BYTES = 2_000_000

# Per problem: steps, batch size, device class, peak learning rates [lr0 (good), lr1 (high)] per
# optimizer, weight decay per optimizer, gradient clipping (None = no clipping).
PROBLEMS = {
    "mlp-teacher": dict(steps=3000, batch=128, gpu=False, clip=None,
                        lr={"sgd": (0.03, 0.3), "adamw": (1e-3, 1e-2)},
                        wd={"sgd": 0.0, "adamw": 0.01}, cost=1.0),
    "mlp-spirals": dict(steps=3000, batch=128, gpu=False, clip=None,
                        lr={"sgd": (0.1, 0.4), "adamw": (3e-3, 3e-2)},
                        wd={"sgd": 0.0, "adamw": 0.01}, cost=1.0),
    "cnn-shapes": dict(steps=2000, batch=64, gpu=False, clip=None,
                       lr={"sgd": (0.05, 0.3), "adamw": (2e-3, 2e-2)},
                       wd={"sgd": 0.0, "adamw": 0.01}, cost=4.0),
    "gru-charlm": dict(steps=2500, batch=32, gpu=True, clip=1.0,
                       lr={"sgd": (0.5, 3.0), "adamw": (3e-3, 2e-2)},
                       wd={"sgd": 0.0, "adamw": 0.1}, cost=3.0),
    "transformer-lm": dict(steps=2500, batch=32, gpu=True, clip=1.0,
                           lr={"sgd": (0.3, 2.0), "adamw": (1e-3, 1e-2)},
                           wd={"sgd": 0.0, "adamw": 0.1}, cost=5.0),
    # Added for the fourth corpus (--problems): a convolutional autoencoder of the shape images
    # (MSE reconstruction) and a small spirals set with 30 % wrong labels, which overfits.
    "cnn-autoenc": dict(steps=2000, batch=64, gpu=False, clip=None,
                        lr={"sgd": (0.02, 0.1), "adamw": (1e-3, 1e-2)},
                        wd={"sgd": 0.0, "adamw": 0.01}, cost=4.0),
    "mlp-noisy": dict(steps=3000, batch=64, gpu=False, clip=None,
                      lr={"sgd": (0.05, 0.3), "adamw": (2e-3, 2e-2)},
                      wd={"sgd": 0.0, "adamw": 0.0}, cost=1.0),
    # Added for the ninth corpus: Hochreiter's adding problem for an LSTM (a plateau at the
    # variance of the sum, 1/6, until the two marked values are found, then a drop), and the shape
    # classifier with batch normalisation and dropout (noise that training mode adds).
    "lstm-adding": dict(steps=2000, batch=64, gpu=True, clip=1.0,
                        lr={"sgd": (0.3, 1.0), "adamw": (2e-3, 1e-2)},
                        wd={"sgd": 0.0, "adamw": 0.01}, cost=3.0),
    "cnn-bn-shapes": dict(steps=2000, batch=64, gpu=False, clip=None,
                          lr={"sgd": (0.05, 0.3), "adamw": (2e-3, 2e-2)},
                          wd={"sgd": 0.0, "adamw": 0.01}, cost=4.0),
    # Added for the eleventh corpus: a small vision transformer classifying the shapes (4x4
    # patches, attention instead of convolution) and modular addition (a + b mod 59 from 40 % of
    # the pairs; with strong weight decay the memorised training loss sits near zero, then moves
    # as the decay reshapes the weights).
    "vit-shapes": dict(steps=2000, batch=64, gpu=True, clip=1.0,
                       lr={"sgd": (0.05, 0.3), "adamw": (1e-3, 1e-2)},
                       wd={"sgd": 0.0, "adamw": 0.05}, cost=3.0),
    "mod-add": dict(steps=3000, batch=128, gpu=False, clip=None,
                    lr={"sgd": (0.1, 0.5), "adamw": (1e-3, 5e-3)},
                    wd={"sgd": 1e-4, "adamw": 1.0}, cost=1.0),
}
ORDER = ("transformer-lm", "gru-charlm", "cnn-shapes", "mlp-teacher", "mlp-spirals")
NEW_PROBLEMS = ("cnn-autoenc", "mlp-noisy", "lstm-adding", "cnn-bn-shapes", "vit-shapes",
                "mod-add")
MOD_P = 59  # modulus of mod-add
NEW_SCHEDULES = ("sgdr", "invsqrt", "exp", "cyclic")
# Added for the twenty-second corpus (--optimizers): RMSprop at AdamW's rates without weight decay,
# and SGD without momentum at twice SGD's rates (momentum 0.9 would make them ten times larger).
NEW_OPTIMIZERS = ("rmsprop", "sgd-plain")


def run_id(problem, opt, sched, k, seed, suffix=""):
    return f"{problem}_{opt}_{sched}_lr{k}_s{seed}{suffix}"


def peak_rates(cfg, opt):
    """(good, high) peak rates of a problem's config for an optimizer (the new ones derived)."""
    if opt == "rmsprop":
        return cfg["lr"]["adamw"]
    if opt == "sgd-plain":
        return tuple(2.0 * x for x in cfg["lr"]["sgd"])
    return cfg["lr"][opt]


def weight_decay(cfg, opt):
    return 0.0 if opt in NEW_OPTIMIZERS else cfg["wd"][opt]


def plan(smoke=False, seeds=SEEDS, batch_runs=True, order=ORDER, schedules=SCHEDULES,
         optimizers=OPTIMIZERS):
    """The ordered list of run specs: seed 0 of every family, then seed 1, then the batch-size runs,
    each tier interleaved over the problems (other seeds with --seeds; no batch-size runs with
    --no-batch-runs)."""
    tiers = []
    for seed in seeds:
        tier = {p: [] for p in order}
        for p in order:
            for opt in optimizers:
                for sched in schedules:
                    for k in (0, 1):
                        tier[p].append(dict(problem=p, optimizer=opt, schedule=sched, lr_index=k,
                                            seed=seed, bs_change=False))
        tiers.append(tier)
    if batch_runs:
        tier = {p: [] for p in order}
        for p in order:
            for opt in optimizers:
                tier[p].append(dict(problem=p, optimizer=opt, schedule="constant", lr_index=0,
                                    seed=0, bs_change=True))
        tiers.append(tier)
    specs = []
    for tier in tiers:
        lists = [tier[p] for p in order]
        for i in range(max(len(l) for l in lists)):
            for l in lists:
                if i < len(l):
                    specs.append(l[i])
    for s in specs:
        cfg = PROBLEMS[s["problem"]]
        s["steps"] = cfg["steps"]
        s["lr_peak"] = peak_rates(cfg, s["optimizer"])[s["lr_index"]]
        s["lr_multiplier"] = s["lr_peak"] / peak_rates(cfg, s["optimizer"])[0]
        s["batch_size"] = cfg["batch"]
        s["id"] = run_id(s["problem"], s["optimizer"], s["schedule"], s["lr_index"], s["seed"],
                         "_bs2x" if s["bs_change"] else "")
    if smoke:
        short = []
        for p in order:
            s = next(x for x in specs if x["problem"] == p)
            short.append(dict(s, steps=60))
        # a forced divergence and a batch-size change, to exercise those paths
        d = next((x for x in specs if x["problem"] == "mlp-teacher" and x["optimizer"] == "sgd"
                  and x["lr_index"] == 1), None)
        if d is not None:
            d = dict(d, steps=200)
            d["lr_peak"] *= 100.0
            short.append(d)
        b = next((x for x in specs if x["bs_change"] and x["problem"] == "transformer-lm"), None)
        if b is not None:
            short.append(dict(b, steps=60))
        for sched in schedules:  # every schedule once, on the first problem
            if sched not in (s["schedule"] for s in short):
                short.append(dict(next(x for x in specs if x["schedule"] == sched), steps=60))
        specs = short
    return specs


def lr_at(schedule, peak, t, T):
    """Learning rate of the update at step t (1-based) of T."""
    W = max(1, int(round(0.03 * T)))  # short linear warmup (cosine, wsd)
    if schedule == "constant":
        return peak
    if schedule == "cosine":
        if t <= W:
            return peak * t / W
        q = (t - W) / max(1, T - W)
        return peak * 0.5 * (1.0 + math.cos(math.pi * q))
    if schedule == "wsd":
        if t <= W:
            return peak * t / W
        D = T - int(round(0.2 * T))  # decay over the last 20 %
        if t <= D:
            return peak
        return peak * (T - t) / max(1, T - D)
    if schedule == "step":
        if t > 0.75 * T:
            return peak * 0.01
        if t > 0.5 * T:
            return peak * 0.1
        return peak
    if schedule == "linear":
        return peak * (1.0 - (t - 1) / T)
    if schedule == "sgdr":  # cosine with warm restarts, periods T/7, 2T/7, 4T/7 (Loshchilov-Hutter)
        P0 = T / 7.0
        start, period = 0.0, P0
        while t - 1 >= start + period and period < T:
            start, period = start + period, 2 * period
        q = (t - 1 - start) / period
        return peak * (0.01 + 0.99 * 0.5 * (1.0 + math.cos(math.pi * min(q, 1.0))))
    if schedule == "invsqrt":  # linear warmup, then peak * sqrt(W / t)
        if t <= W:
            return peak * t / W
        return peak * math.sqrt(W / t)
    if schedule == "exp":  # linear warmup, then exponential decay to 1 % of the peak at T
        if t <= W:
            return peak * t / W
        return peak * 0.01 ** ((t - W) / max(1, T - W))
    if schedule == "cyclic":  # triangular cycles between 10 % of the peak and the peak, period T/4
        P = max(2.0, T / 4.0)
        q = ((t - 1) % P) / P
        return peak * (0.1 + 0.9 * (1.0 - abs(2.0 * q - 1.0)))
    raise ValueError(schedule)


# ----------------------------------------------------------------------------------------- data
_CACHE = {}


def text_bytes():
    """The host Python's standard-library sources, concatenated in sorted order, first 2 MB."""
    if "text" in _CACHE:
        return _CACHE["text"]
    lib = sysconfig.get_paths()["stdlib"]
    files = sorted(glob.glob(os.path.join(lib, "*.py")))
    if sum(os.path.getsize(f) for f in files) < TEXT_BYTES:  # a slim install: add its packages
        files += sorted(f for f in glob.glob(os.path.join(lib, "**", "*.py"), recursive=True)
                        if f not in set(files))
    chunks, n = [], 0
    for f in files:
        try:
            with open(f, "rb") as fh:
                b = fh.read()
        except OSError:
            continue
        chunks.append(b)
        n += len(b)
        if n >= TEXT_BYTES:
            break
    data = b"".join(chunks)[:TEXT_BYTES]
    if len(data) < 100_000:
        raise RuntimeError(f"only {len(data)} bytes of Python sources under {lib}")
    arr = np.frombuffer(data, dtype=np.uint8)
    vocab = np.unique(arr)
    lut = np.zeros(256, dtype=np.int64)
    lut[vocab] = np.arange(len(vocab))
    ids = lut[arr]
    _CACHE["text"] = (ids, len(vocab), lib, len(files))
    return _CACHE["text"]


def make_shapes(n, rng):
    """n 16x16 images of 6 classes (0 h-bar, 1 v-bar, 2 filled rectangle, 3 ring, 4 diagonal,
    5 cross) at random place, size and intensity, on Gaussian noise."""
    S = 16
    yy, xx = np.mgrid[0:S, 0:S].astype(np.float32)
    X = np.zeros((n, S, S), np.float32)
    y = rng.integers(0, 6, size=n)
    for i in range(n):
        c = y[i]
        m = np.zeros((S, S), np.float32)
        if c == 0 or c == 1:
            L = rng.integers(6, 15)
            w = rng.integers(1, 3)
            a = rng.integers(0, S - L + 1)
            b = rng.integers(0, S - w + 1)
            if c == 0:
                m[b:b + w, a:a + L] = 1
            else:
                m[a:a + L, b:b + w] = 1
        elif c == 2:
            h, w = rng.integers(4, 9), rng.integers(4, 9)
            a, b = rng.integers(0, S - h + 1), rng.integers(0, S - w + 1)
            m[a:a + h, b:b + w] = 1
        elif c == 3:
            r = rng.uniform(3.0, 6.0)
            cy, cx = rng.uniform(r, S - 1 - r), rng.uniform(r, S - 1 - r)
            d = np.sqrt((yy - cy) ** 2 + (xx - cx) ** 2)
            m[np.abs(d - r) < 0.8] = 1
        elif c == 4:
            L = rng.integers(7, 15)
            a, b = rng.integers(0, S - L + 1), rng.integers(0, S - L + 1)
            k = np.arange(L)
            if rng.random() < 0.5:
                m[a + k, b + k] = 1
            else:
                m[a + k, b + L - 1 - k] = 1
        else:
            L = rng.integers(5, 10) | 1
            a, b = rng.integers(0, S - L + 1), rng.integers(0, S - L + 1)
            m[a + L // 2, b:b + L] = 1
            m[a:a + L, b + L // 2] = 1
        X[i] = m * rng.uniform(0.6, 1.4)
    X += rng.normal(0.0, 0.35, size=X.shape).astype(np.float32)
    return X[:, None], y


def adding_problem(n, rng, length=40):
    """n sequences of (value, marker) pairs: values uniform in [0, 1], one marker in each half; the
    target is the sum of the two marked values."""
    X = np.zeros((n, length, 2), np.float32)
    X[:, :, 0] = rng.random((n, length))
    i = rng.integers(0, length // 2, n)
    j = rng.integers(length // 2, length, n)
    X[np.arange(n), i, 1] = 1.0
    X[np.arange(n), j, 1] = 1.0
    y = (X[np.arange(n), i, 0] + X[np.arange(n), j, 0])[:, None]
    return X, y.astype(np.float32)


def problem_data(problem):
    """Fixed data of a problem (the same for all its runs): numpy arrays (train, val)."""
    if problem in _CACHE:
        return _CACHE[problem]
    rng = np.random.default_rng(12345)
    if problem == "mlp-teacher":
        D, H = 32, 128
        W1 = rng.normal(0, 1.5 / math.sqrt(D), (D, H))
        W2 = rng.normal(0, 1.5 / math.sqrt(H), (H, H))
        W3 = rng.normal(0, 1.0 / math.sqrt(H), (H, 1))
        b1, b2 = rng.normal(0, 0.3, H), rng.normal(0, 0.3, H)

        def teach(X):
            return np.tanh(np.tanh(X @ W1 + b1) @ W2 + b2) @ W3

        Xtr, Xva = rng.normal(size=(20000, D)), rng.normal(size=(2048, D))
        ytr, yva = teach(Xtr), teach(Xva)
        mu, sd = ytr.mean(), ytr.std()
        ytr = (ytr - mu) / sd + rng.normal(0, 0.1, ytr.shape)
        yva = (yva - mu) / sd + rng.normal(0, 0.1, yva.shape)
        out = (Xtr.astype(np.float32), ytr.astype(np.float32), Xva.astype(np.float32),
               yva.astype(np.float32))
    elif problem == "mlp-spirals":
        K = 5

        def spirals(n):
            k = rng.integers(0, K, n)
            t = rng.uniform(0.05, 1.0, n)
            ang = 2 * math.pi * k / K + 3.0 * math.pi * t
            X = np.stack([t * np.cos(ang), t * np.sin(ang)], 1) + rng.normal(0, 0.04, (n, 2))
            return (X * 2.0).astype(np.float32), k.astype(np.int64)

        Xtr, ytr = spirals(10000)
        Xva, yva = spirals(2000)
        out = (Xtr, ytr, Xva, yva)
    elif problem == "mlp-noisy":  # 1500 spiral points, 30 % of the training labels wrong
        K = 5
        k = rng.integers(0, K, 3500)
        t = rng.uniform(0.05, 1.0, 3500)
        ang = 2 * math.pi * k / K + 3.0 * math.pi * t
        X = (2.0 * (np.stack([t * np.cos(ang), t * np.sin(ang)], 1)
                    + rng.normal(0, 0.04, (3500, 2)))).astype(np.float32)
        y = k.astype(np.int64)
        flip = rng.random(1500) < 0.3
        ytr = y[:1500].copy()
        ytr[flip] = rng.integers(0, K, int(flip.sum()))
        out = (X[:1500], ytr, X[1500:], y[1500:])
    elif problem == "cnn-autoenc":
        Xtr, _ = make_shapes(12000, rng)
        Xva, _ = make_shapes(1024, rng)
        out = (Xtr, Xtr, Xva, Xva)
    elif problem == "lstm-adding":
        out = adding_problem(20000, rng) + adding_problem(2048, rng)
    elif problem == "mod-add":  # every pair (a, b), 40 % of them to train on
        a, b = np.meshgrid(np.arange(MOD_P), np.arange(MOD_P), indexing="ij")
        X = np.stack([a.ravel(), b.ravel()], 1).astype(np.int64)
        y = ((X[:, 0] + X[:, 1]) % MOD_P).astype(np.int64)
        order = rng.permutation(len(X))
        cut = int(0.4 * len(X))
        out = (X[order[:cut]], y[order[:cut]], X[order[cut:]], y[order[cut:]])
    elif problem in ("cnn-shapes", "cnn-bn-shapes", "vit-shapes"):
        Xtr, ytr = make_shapes(12000, rng)
        Xva, yva = make_shapes(1024, rng)
        out = (Xtr, ytr.astype(np.int64), Xva, yva.astype(np.int64))
    else:
        ids, V, _, _ = text_bytes()
        out = (ids, V)
    _CACHE[problem] = out
    return out


# ---------------------------------------------------------------------------------------- models
def build_model(problem, torch, nn, V=None):
    F = torch.nn.functional
    if problem == "mlp-teacher":
        return nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                             nn.Linear(256, 1))
    if problem == "mlp-noisy":
        return nn.Sequential(nn.Linear(2, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                             nn.Linear(256, 5))
    if problem == "cnn-autoenc":
        return nn.Sequential(nn.Conv2d(1, 16, 3, stride=2, padding=1), nn.ReLU(),
                             nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
                             nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1), nn.ReLU(),
                             nn.ConvTranspose2d(16, 1, 4, stride=2, padding=1))
    if problem == "mlp-spirals":
        return nn.Sequential(nn.Linear(2, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                             nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 5))
    if problem == "lstm-adding":
        class AddingLSTM(nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = nn.LSTM(2, 64, batch_first=True)
                self.out = nn.Linear(64, 1)

            def forward(self, x):
                h, _ = self.rnn(x)
                return self.out(h[:, -1])
        return AddingLSTM()
    if problem == "cnn-bn-shapes":
        return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                             nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32),
                             nn.ReLU(), nn.Conv2d(32, 32, 3, stride=2, padding=1),
                             nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                             nn.Dropout(0.3), nn.Linear(32, 6))
    if problem == "mod-add":
        class ModAdd(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(MOD_P, 64)
                self.mlp = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, MOD_P))

            def forward(self, x):
                return self.mlp(self.emb(x).flatten(1))
        return ModAdd()
    if problem == "vit-shapes":
        class TinyViT(nn.Module):
            def __init__(self):
                super().__init__()
                d = 64
                self.patch = nn.Conv2d(1, d, 4, stride=4)
                self.pos = nn.Parameter(torch.zeros(1, 16, d))
                layer = nn.TransformerEncoderLayer(d, 4, 128, dropout=0.0, batch_first=True,
                                                   norm_first=True)
                self.blocks = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
                self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, 6)

            def forward(self, x):
                h = self.patch(x).flatten(2).transpose(1, 2) + self.pos
                return self.head(self.ln(self.blocks(h).mean(1)))
        return TinyViT()
    if problem == "cnn-shapes":
        return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
                             nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
                             nn.Conv2d(32, 32, 3, stride=2, padding=1), nn.ReLU(),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 6))
    if problem == "gru-charlm":
        class CharGRU(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(V, 64)
                self.rnn = nn.GRU(64, 256, batch_first=True)
                self.out = nn.Linear(256, V)

            def forward(self, x):
                h, _ = self.rnn(self.emb(x))
                return self.out(h)
        return CharGRU()
    if problem == "transformer-lm":
        d, nh, nl, T = 128, 4, 3, 128
        has_sdpa = hasattr(F, "scaled_dot_product_attention")

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
                self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
                self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

            def forward(self, x):
                B, L, _ = x.shape
                q, k, v = self.qkv(self.ln1(x)).view(B, L, 3, nh, d // nh).permute(2, 0, 3, 1, 4)
                if has_sdpa:
                    a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                else:
                    s = (q @ k.transpose(-1, -2)) / math.sqrt(d // nh)
                    mask = torch.ones(L, L, dtype=torch.bool, device=x.device).triu(1)
                    a = s.masked_fill(mask, float("-inf")).softmax(-1) @ v
                x = x + self.proj(a.transpose(1, 2).reshape(B, L, d))
                return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

        class TinyGPT(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb, self.pos = nn.Embedding(V, d), nn.Embedding(T, d)
                self.blocks = nn.ModuleList([Block() for _ in range(nl)])
                self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, V)
                for m in self.modules():
                    if isinstance(m, (nn.Linear, nn.Embedding)):
                        nn.init.normal_(m.weight, 0.0, 0.02)
                        if getattr(m, "bias", None) is not None:
                            nn.init.zeros_(m.bias)

            def forward(self, x):
                h = self.emb(x) + self.pos(torch.arange(x.shape[1], device=x.device))
                for b in self.blocks:
                    h = b(h)
                return self.head(self.ln(h))
        return TinyGPT()
    raise ValueError(problem)


def make_optimizer(torch, params, opt, lr, wd, lm, cuda):
    if opt == "rmsprop":
        return torch.optim.RMSprop(params, lr=lr, alpha=0.99, weight_decay=wd)
    if opt == "sgd-plain":
        return torch.optim.SGD(params, lr=lr, momentum=0.0, weight_decay=wd)
    if opt == "adamw":
        kw = dict(lr=lr, weight_decay=wd, betas=(0.9, 0.95) if lm else (0.9, 0.999))
        cls = torch.optim.AdamW
    else:
        kw = dict(lr=lr, momentum=0.9, weight_decay=wd)
        cls = torch.optim.SGD
    if cuda:
        try:
            return cls(params, fused=True, **kw)
        except (TypeError, RuntimeError, ValueError):
            pass
    return cls(params, **kw)


# -------------------------------------------------------------------------------------- training
def train_one(spec, deadline):
    import torch
    import torch.nn as nn
    F = nn.functional
    torch.set_num_threads(1)
    p = spec["problem"]
    cfg = PROBLEMS[p]
    cuda = cfg["gpu"] and torch.cuda.is_available()
    dev = torch.device("cuda" if cuda else "cpu")
    t0 = time.time()
    lm = p in ("gru-charlm", "transformer-lm")
    T = spec["steps"]
    B0 = spec["batch_size"]
    seed = spec["seed"]
    torch.manual_seed(1000 * seed + 17)
    gen = torch.Generator(device=dev)
    gen.manual_seed(7919 * seed + 1)

    if lm:
        ids, V = problem_data(p)
        seq = 64 if p == "gru-charlm" else 128
        cut = int(0.9 * len(ids))
        train_ids = torch.as_tensor(ids[:cut], device=dev)
        val_ids = torch.as_tensor(ids[cut:], device=dev)
        vr = np.random.default_rng(4242)
        voff = torch.as_tensor(vr.integers(0, len(val_ids) - seq - 1, 256), device=dev)
        ar = torch.arange(seq + 1, device=dev)
        vwin = val_ids[voff[:, None] + ar]
        val_x, val_y = vwin[:, :-1], vwin[:, 1:]
        ntrain = len(train_ids) - seq - 1

        def batch(B):
            off = torch.randint(0, ntrain, (B,), device=dev, generator=gen)
            w = train_ids[off[:, None] + ar]
            return w[:, :-1], w[:, 1:]

        def loss_fn(out, y):
            return F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        model = build_model(p, torch, nn, V)
    else:
        Xtr, ytr, Xva, yva = problem_data(p)
        Xtr, ytr = torch.as_tensor(Xtr, device=dev), torch.as_tensor(ytr, device=dev)
        val_x, val_y = torch.as_tensor(Xva, device=dev), torch.as_tensor(yva, device=dev)
        n = len(Xtr)

        def batch(B):
            i = torch.randint(0, n, (B,), device=dev, generator=gen)
            return Xtr[i], ytr[i]

        loss_fn = (F.mse_loss if p in ("mlp-teacher", "cnn-autoenc", "lstm-adding")
                   else F.cross_entropy)
        model = build_model(p, torch, nn)
    model = model.to(dev)
    params = [q for q in model.parameters()]
    optim = make_optimizer(torch, params, spec["optimizer"], spec["lr_peak"],
                           weight_decay(cfg, spec["optimizer"]), lm, cuda)
    clip = cfg["clip"]
    max_norm = clip if clip is not None else float("inf")

    loss_buf = torch.zeros(T, device=dev)
    gn_buf = torch.zeros(T, device=dev)
    val_steps = [s for s in range(VAL_EVERY, T + 1, VAL_EVERY)]
    if not val_steps or val_steps[-1] != T:
        val_steps.append(T)
    val_buf = torch.zeros(len(val_steps), device=dev)
    lrs = np.zeros(T, np.float64)
    bsizes = []
    vi = 0
    first_loss = None
    last_ok = T  # number of kept steps
    diverged, reason, done_checked = 0, "", 0
    bs_step = T // 2 + 1 if spec["bs_change"] else None

    def check(upto):
        """Looks at steps done_checked+1..upto; returns the number of good steps if it finds a bad
        one, else None."""
        nonlocal first_loss
        L = loss_buf[done_checked:upto].double().cpu().numpy()
        G = gn_buf[done_checked:upto].double().cpu().numpy()
        if first_loss is None and len(L):
            first_loss = float(L[0]) if np.isfinite(L[0]) else 1.0
        for j in range(len(L)):
            if not (np.isfinite(L[j]) and np.isfinite(G[j])):
                return done_checked + j, "non-finite"
            if L[j] > EXPLODE_FACTOR * max(first_loss, 1e-3):
                return done_checked + j + 1, "exploded"
        return None

    model.train()
    for t in range(1, T + 1):
        B = 2 * B0 if (bs_step is not None and t >= bs_step) else B0
        lr = lr_at(spec["schedule"], spec["lr_peak"], t, T)
        for g in optim.param_groups:
            g["lr"] = lr
        lrs[t - 1] = lr
        x, y = batch(B)
        out = model(x)
        loss = loss_fn(out, y)
        optim.zero_grad(set_to_none=True)
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(params, max_norm)
        loss_buf[t - 1] = loss.detach()
        gn_buf[t - 1] = gn.detach() if torch.is_tensor(gn) else gn
        optim.step()
        if vi < len(val_steps) and t == val_steps[vi]:
            model.eval()
            with torch.no_grad():
                val_buf[vi] = loss_fn(model(val_x), val_y)
            model.train()
            vi += 1
        if t % CHECK_EVERY == 0 or t == T:
            bad = check(t)
            done_checked = t
            if bad is not None:
                last_ok, reason = bad
                diverged = 1
                break
            if time.time() > deadline:
                raise TimeoutError(f"deadline passed at step {t}/{T}")
    if cuda:
        torch.cuda.synchronize()
    n = last_ok
    loss = loss_buf[:n].cpu().numpy().astype(np.float32)
    gnorm = gn_buf[:n].cpu().numpy().astype(np.float32)
    vsteps = np.asarray(val_steps[:vi], np.int64)
    vloss = val_buf[:vi].cpu().numpy().astype(np.float32)
    keep = (vsteps <= n) & np.isfinite(vloss)
    res = dict(spec)
    res.update(step=np.arange(1, n + 1, dtype=np.int64), loss=loss,
               lr=lrs[:n].astype(np.float32), grad_norm=gnorm, val_step=vsteps[keep],
               val_loss=vloss[keep], diverged=diverged, diverge_reason=reason,
               diverged_step=(n + 1 if reason == "non-finite" else n) if diverged else 0,
               batch_size_final=2 * B0 if spec["bs_change"] else B0,
               batch_change_step=bs_step or 0, clip_norm=clip or 0.0,
               weight_decay=weight_decay(cfg, spec["optimizer"]), device=str(dev),
               wall_s=time.time() - t0, n_params=sum(q.numel() for q in params))
    if n == 0:
        raise RuntimeError("diverged at step 1: no finite step to keep")
    return res


def worker_init():
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch
    torch.set_num_threads(1)


def worker(args):
    spec, deadline = args
    try:
        return train_one(spec, deadline)
    except TimeoutError as e:  # past --budget-s: dropped, not failed
        return dict(id=spec["id"], timeout=True, error=str(e))
    except BaseException as e:  # a failed run is recorded, never kills the pool
        return dict(id=spec["id"], error=f"{type(e).__name__}: {e}",
                    trace=traceback.format_exc()[-2000:])


# ---------------------------------------------------------------------------------------- output
def assign_split(runs):
    """Stratified by (problem, optimizer, schedule): per family of n runs, k = floor(0.6 n), plus one
    with probability frac(0.6 n), clamped to [1, n - 1] when n >= 2, are held out, chosen by a
    permutation of the family's sorted run ids; one numpy default_rng(SPLIT_SEED) drawn in sorted
    family order."""
    rng = np.random.default_rng(SPLIT_SEED)
    fams = {}
    for r in runs:
        fams.setdefault((r["problem"], r["optimizer"], r["schedule"]), []).append(r)
    for key in sorted(fams):
        members = sorted(fams[key], key=lambda r: r["id"])
        n = len(members)
        x = HELDOUT_FRACTION * n
        k = int(math.floor(x)) + (1 if rng.random() < x - math.floor(x) else 0)
        if n >= 2:
            k = min(max(k, 1), n - 1)
        perm = rng.permutation(n)
        held = set(perm[:k].tolist())
        for i, r in enumerate(members):
            r["split"] = "heldout" if i in held else "tune"


def write_h5(path, runs, meta):
    import h5py
    pack = dict(compression="gzip", compression_opts=9, shuffle=True)
    tmp = path + ".tmp"
    with h5py.File(tmp, "w") as f:
        for k, v in meta.items():
            f.attrs[k] = str(v) if isinstance(v, str) else v
        g = f.create_group("runs")
        for r in sorted(runs, key=lambda r: r["id"]):
            h = g.create_group(r["id"])
            for name in ("step", "loss", "lr", "grad_norm", "val_step", "val_loss"):
                a = r[name]
                if len(a):
                    h.create_dataset(name, data=a, **pack)
                else:
                    h.create_dataset(name, data=a)
            for k in ("problem", "optimizer", "schedule", "split", "diverge_reason", "device"):
                h.attrs[k] = str(r[k])
            h.attrs["group"] = r["problem"]
            for k in ("batch_size", "seed", "diverged", "lr_index", "batch_size_final",
                      "batch_change_step", "diverged_step", "n_params"):
                h.attrs[k] = np.int64(r[k])
            h.attrs["steps_planned"] = np.int64(r["steps"])
            for k in ("lr_peak", "lr_multiplier", "clip_norm", "weight_decay", "wall_s"):
                h.attrs[k] = float(r[k])
    os.replace(tmp, path)


def load_runs(path):
    """The runs of an earlier output file, as result dicts (for --resume)."""
    import h5py
    runs = []
    with h5py.File(path, "r") as f:
        prev_wall = float(f.attrs.get("wall_s", 0.0))
        for rid, g in f["runs"].items():
            r = dict(id=rid)
            for name in ("step", "loss", "lr", "grad_norm", "val_step", "val_loss"):
                r[name] = g[name][()]
            for k, v in g.attrs.items():
                r[k] = v.decode() if isinstance(v, bytes) else (str(v) if isinstance(v, str) else
                                                                 v.item() if hasattr(v, "item")
                                                                 else v)
            r["steps"] = int(r.pop("steps_planned"))
            r["bs_change"] = int(r["batch_change_step"]) > 0
            runs.append(r)
    return runs, prev_wall


def verify(path, split_all=""):
    """Re-reads the file and checks hpt's layout; returns a list of problems (empty = fine)."""
    import h5py
    bad = []
    with h5py.File(path, "r") as f:
        for rid, g in f["runs"].items():
            s = g["step"][()]
            n = len(s)
            if n == 0 or s[0] != 1 or np.any(np.diff(s) <= 0) or s.dtype != np.int64:
                bad.append(f"{rid}: bad step")
            for name in ("loss", "lr", "grad_norm"):
                a = g[name][()]
                if len(a) != n or not np.all(np.isfinite(a)) or np.any(a < 0):
                    bad.append(f"{rid}: bad {name}")
            vs, vl = g["val_step"][()], g["val_loss"][()]
            if len(vs) != len(vl) or not np.all(np.isfinite(vl)) or (len(vs) and vs[-1] > s[-1]):
                bad.append(f"{rid}: bad val")
            if g.attrs["split"] not in ("heldout", "tune") and not split_all:
                bad.append(f"{rid}: bad split")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output folder (torch-curves.h5, summary.json)")
    ap.add_argument("--workers", type=int, default=12)
    ap.add_argument("--budget-s", type=float, default=0.0,
                    help="wall-clock budget for the training (0 = none); later runs are dropped")
    ap.add_argument("--resume", default="",
                    help="an earlier torch-curves.h5: keep its runs and train only the missing ones")
    ap.add_argument("--smoke", action="store_true", help="a ~20 s check of the same code")
    ap.add_argument("--only", default="", help="comma-separated problems (testing)")
    ap.add_argument("--steps", type=int, default=0, help="override steps (testing)")
    ap.add_argument("--lr-scale", type=float, default=1.0,
                    help="multiply every peak learning rate by this (a corpus of rates the others lack)")
    ap.add_argument("--seeds", default="0,1",
                    help="comma-separated seeds (a fresh corpus: seeds the shipped one lacks)")
    ap.add_argument("--no-batch-runs", action="store_true", help="leave out the batch-size runs")
    ap.add_argument("--problems", default=",".join(ORDER),
                    help="comma-separated problems, in launch order; also " + ",".join(NEW_PROBLEMS))
    ap.add_argument("--schedules", default=",".join(SCHEDULES),
                    help="comma-separated schedules; also " + ",".join(NEW_SCHEDULES))
    ap.add_argument("--optimizers", default=",".join(OPTIMIZERS),
                    help="comma-separated optimizers; also " + ",".join(NEW_OPTIMIZERS))
    ap.add_argument("--split-all", default="",
                    help="give every run this split (e.g. heldout) instead of drawing the split")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    os.environ["OMP_NUM_THREADS"] = "1"
    order = tuple(args.problems.split(","))
    schedules = tuple(args.schedules.split(","))
    optimizers = tuple(args.optimizers.split(","))
    for name, have in ((order, PROBLEMS), (schedules, SCHEDULES + NEW_SCHEDULES),
                       (optimizers, OPTIMIZERS + NEW_OPTIMIZERS)):
        bad = [x for x in name if x not in have]
        if bad:
            ap.error(f"unknown {bad}; expected some of {', '.join(have)}")
    specs = plan(args.smoke, tuple(int(x) for x in args.seeds.split(",")), not args.no_batch_runs,
                 order, schedules, optimizers)
    if args.only:
        keep = set(args.only.split(","))
        specs = [s for s in specs if s["problem"] in keep]
    if args.steps:
        for s in specs:
            s["steps"] = args.steps
    for s in specs:
        s["lr_peak"] *= args.lr_scale
        s["lr_multiplier"] *= args.lr_scale
    n_planned = len(specs)
    results, prev_wall = [], 0.0
    if args.resume:
        results, prev_wall = load_runs(args.resume)
        have = {r["id"] for r in results}
        results = [r for r in results if r["id"] in {s["id"] for s in specs}]
        specs = [s for s in specs if s["id"] not in have]
        print(f"[corpus] resumed {len(results)} runs from {args.resume}", flush=True)
    t_start = time.time()
    deadline = t_start + (args.budget_s if args.budget_s > 0 else 1e9)
    print(f"[corpus] {len(specs)} runs, {args.workers} workers, budget {args.budget_s:.0f} s",
          flush=True)
    failures, timed_out = [], []
    n_resumed = len(results)
    ctx = mp.get_context("spawn")
    pool = ctx.Pool(args.workers, initializer=worker_init)
    try:
        it = pool.imap_unordered(worker, [(s, deadline) for s in specs], chunksize=1)
        for i in range(len(specs)):
            left = deadline + 15.0 - time.time()
            if left <= 0:
                raise mp.TimeoutError
            try:
                r = it.next(timeout=left)
            except StopIteration:
                break
            if r.get("timeout"):
                timed_out.append(r["id"])
                print(f"[drop] {r['id']}: {r['error']}", flush=True)
            elif "error" in r:
                failures.append(dict(id=r["id"], error=r["error"], trace=r.get("trace", "")))
                print(f"[fail] {r['id']}: {r['error']}", flush=True)
            else:
                results.append(r)
                print(f"[done {len(results) - n_resumed:3d}/{len(specs)} {time.time() - t_start:6.1f}s] "
                      f"{r['id']} {r['device']} steps={len(r['step'])} "
                      f"loss {r['loss'][0]:.3g}->{r['loss'][-1]:.3g} "
                      f"val {r['val_loss'][-1] if len(r['val_loss']) else float('nan'):.3g} "
                      f"div={r['diverged']} {r['wall_s']:.1f}s", flush=True)
    except mp.TimeoutError:
        print("[corpus] budget spent: remaining runs dropped", flush=True)
        pool.terminate()
    else:
        pool.close()
    pool.join()
    wall = time.time() - t_start + prev_wall
    done = {r["id"] for r in results}
    failed = {f["id"] for f in failures}
    dropped = [s["id"] for s in specs if s["id"] not in done and s["id"] not in failed]
    if not results:
        print("[corpus] no run finished", flush=True)
        json.dump(dict(failures=failures, dropped=dropped), open(os.path.join(args.out,
                  "summary.json"), "w"), indent=1)
        return 1
    if args.split_all:
        for r in results:
            r["split"] = args.split_all
    else:
        assign_split(results)
    import torch
    dev_name = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu only"
    meta = dict(generator=GENERATOR, torch_version=torch.__version__,
                numpy_version=np.__version__, python_version=sys.version.split()[0],
                cuda_device=dev_name, host=socket.gethostname(), wall_s=float(wall),
                created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                split_seed=np.int64(SPLIT_SEED), heldout_fraction=HELDOUT_FRACTION,
                val_every=np.int64(VAL_EVERY), text_source=text_bytes()[2],
                text_files=np.int64(text_bytes()[3]), text_vocab=np.int64(text_bytes()[1]),
                smoke=np.int64(1 if args.smoke else 0), runs_resumed=np.int64(n_resumed))
    path = os.path.join(args.out, "torch-curves.h5")
    write_h5(path, results, meta)
    problems = verify(path, args.split_all)
    fam = {}
    for r in results:
        key = f"{r['problem']}/{r['optimizer']}/{r['schedule']}"
        d = fam.setdefault(key, dict(runs=0, diverged=0, heldout=0, tune=0))
        d["runs"] += 1
        d["diverged"] += r["diverged"]
        d[r["split"]] = d.get(r["split"], 0) + 1
    per_problem = {}
    for r in results:
        d = per_problem.setdefault(r["problem"], dict(runs=0, diverged=0, heldout=0, tune=0,
                                                      steps=r["steps"], mean_run_s=0.0))
        d["runs"] += 1
        d["diverged"] += r["diverged"]
        d[r["split"]] = d.get(r["split"], 0) + 1
        d["mean_run_s"] += r["wall_s"]
    for d in per_problem.values():
        d["mean_run_s"] = round(d["mean_run_s"] / d["runs"], 2)
    summary = dict(runs=len(results), planned=n_planned, resumed=n_resumed, diverged=sum(r["diverged"] for r in results),
                   heldout=sum(r["split"] == "heldout" for r in results),
                   tune=sum(r["split"] == "tune" for r in results),
                   wall_s=round(wall, 1), device=dev_name, torch=torch.__version__,
                   file_bytes=os.path.getsize(path), verify_problems=problems,
                   per_problem=per_problem, per_family=fam,
                   diverged_runs=sorted(f"{r['id']} ({r['diverge_reason']} at {r['diverged_step']})"
                                        for r in results if r["diverged"]),
                   failures=failures, dropped=dropped,
                   final=dict(sorted((r["id"], [float(r["loss"][-50:].mean()),
                                                float(r["val_loss"][-1]) if len(r["val_loss"])
                                                else None]) for r in results)))
    with open(os.path.join(args.out, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=1)
    print(json.dumps({k: summary[k] for k in ("runs", "planned", "diverged", "heldout", "tune",
                                              "wall_s", "device", "torch", "file_bytes",
                                              "verify_problems", "per_problem", "dropped")},
                     indent=1), flush=True)
    print(f"[corpus] {len(failures)} failed, {len(dropped)} dropped", flush=True)
    if len(results) < n_planned and not args.smoke:
        print(f"[corpus] INCOMPLETE: {len(results)} of {n_planned} runs", flush=True)
    if problems:
        return 2
    return 3 if (args.smoke and (failures or dropped)) else 0


if __name__ == "__main__":
    sys.exit(main())
