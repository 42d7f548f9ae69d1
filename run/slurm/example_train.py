#!/usr/bin/env python3
"""An example training script for a live sweep watched by hpt (run.mode = watch): a 2-layer MLP
(tanh) classifying synthetic 3-class data, trained by minibatch SGD with a cosine (or constant)
learning-rate schedule. Needs only numpy; 2000 steps take about a second on one CPU.

  python3 run/slurm/example_train.py --lr 0.1 --out FOLDER --run NAME [--steps N] [--seed S]
                                     [--schedule cosine|constant] [--sleep SECONDS]

Every step (1 to N, as in hpt's traces) goes to FOLDER/NAME.csv through run/log_curve.py, with the
validation loss after every 50th update and the last. When hpt writes FOLDER/NAME.stop, the script
stops before its next step and exits 0. --sleep pauses after every step, so that a demonstration
sweep lasts long enough for the watcher's polls. Exit status: 0 finished or stopped by hpt; 2 bad
arguments; 3 the loss became non-finite (diverged).
"""
import argparse
import math
import os
import sys
import time

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ inside the repository
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
from log_curve import CurveLog  # noqa: E402

CLASSES, FEATURES, HIDDEN, BATCH = 3, 10, 32, 32
VAL_EVERY = 50


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lr", type=float, required=True, help="peak learning rate")
    ap.add_argument("--steps", type=int, default=2000, help="SGD steps (default 2000)")
    ap.add_argument("--out", required=True, metavar="FOLDER", help="folder of the curve files (watch.folder)")
    ap.add_argument("--run", required=True, metavar="NAME", help="run id: the curve file is FOLDER/NAME.csv")
    ap.add_argument("--seed", type=int, default=1, help="seed of the weights and minibatches (default 1)")
    ap.add_argument("--schedule", choices=("cosine", "constant"), default="cosine")
    ap.add_argument("--sleep", type=float, default=0.0, metavar="SECONDS", help="pause after every step")
    a = ap.parse_args()
    if not (a.lr > 0 and math.isfinite(a.lr)):
        ap.error(f"--lr {a.lr}: expected a positive learning rate")
    if a.steps < 1 or a.sleep < 0:
        ap.error(f"--steps {a.steps} --sleep {a.sleep}: expected at least 1 step and a pause >= 0")
    return a


def make_data(n, seed):
    """n points of 3 overlapping Gaussian classes (the same classes for every seed); the same data
    for every run of a sweep."""
    centres = np.random.default_rng(1234).normal(0, 1.0, (CLASSES, FEATURES))
    rng = np.random.default_rng(seed)
    y = rng.integers(0, CLASSES, n)
    return centres[y] + rng.normal(0, 1.5, (n, FEATURES)), y


def loss_and_grads(w, x, y):
    """Mean cross-entropy of the MLP on (x, y) and its gradient per weight."""
    h = np.tanh(x @ w["w1"] + w["b1"])
    z = h @ w["w2"] + w["b2"]
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    loss = -np.mean(np.log(p[np.arange(len(y)), y] + 1e-12))
    dz = p
    dz[np.arange(len(y)), y] -= 1
    dz /= len(y)
    dh = (dz @ w["w2"].T) * (1 - h * h)
    return loss, {"w1": x.T @ dh, "b1": dh.sum(0), "w2": h.T @ dz, "b2": dz.sum(0)}


def rate(a, step):
    """The learning rate of update `step` (1 to a.steps)."""
    if a.schedule == "constant":
        return a.lr
    return 0.5 * a.lr * (1 + math.cos(math.pi * (step - 1) / a.steps))


def main():
    a = parse_args()
    x, y = make_data(4096, seed=1)
    xv, yv = make_data(1024, seed=2)
    rng = np.random.default_rng(a.seed)
    w = {"w1": rng.normal(0, FEATURES ** -0.5, (FEATURES, HIDDEN)), "b1": np.zeros(HIDDEN),
         "w2": rng.normal(0, HIDDEN ** -0.5, (HIDDEN, CLASSES)), "b2": np.zeros(CLASSES)}
    curve = CurveLog(a.out, a.run, final_step=a.steps, lr_plan=lambda s: rate(a, s))
    print(f"example_train {a.run}: lr {a.lr} ({a.schedule}), {a.steps} steps -> {curve.path}", flush=True)
    for step in range(1, a.steps + 1):  # step s: the s-th update, as in hpt's traces
        if curve.should_stop():
            print(f"example_train {a.run}: stopped by hpt after step {step - 1} ({curve.stop_path})",
                  flush=True)
            return 0
        lr = rate(a, step)
        batch = rng.integers(0, len(y), BATCH)
        loss, grads = loss_and_grads(w, x[batch], y[batch])
        if not math.isfinite(loss):
            curve.log(step, loss, lr=lr)  # the watcher reads the non-finite loss as the run's end
            print(f"example_train {a.run}: the loss is not finite at step {step}; diverged", file=sys.stderr)
            return 3
        for k in w:
            w[k] -= lr * grads[k]
        val = loss_and_grads(w, xv, yv)[0] if step % VAL_EVERY == 0 or step == a.steps else None
        curve.log(step, loss, lr=lr, val_loss=val)
        if a.sleep:
            time.sleep(a.sleep)
    print(f"example_train {a.run}: finished {a.steps} steps, validation loss {val:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
