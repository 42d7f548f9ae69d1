#!/usr/bin/python3
"""Bench of run.mode = watch: the cost of one poll of a large live sweep. Writes RUNS per-run CSV
files (synthetic power-law curves with noise, in GROUPS groups, each RUN at step START of
FINAL planned steps), starts the watcher on them, then appends ROWS rows to every file before each
of POLLS polls, and reports the watcher's own "poll took" times (the first poll reads every file
whole; the later ones read only what was appended, forecast every run and rewrite the status).

  run/bench/watch_poll.py [--hpt build/hpt] [--runs 1000] [--start 1000] [--final 2000]
                          [--rows 10] [--polls 5] [--groups 10] [--log-every 1]
                          [--val-every 0] [--stop-on train] [--work /tmp/hpt-watch-bench]

With --val-every K every file also has a val_loss column (a validation loss every K steps, empty
between), and --stop-on validation makes the watcher judge runs by it (forecast.stop_on).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def curve(rng, steps):
    a, b, c = rng.uniform(0.05, 0.5), rng.uniform(0.5, 3), rng.uniform(0.2, 0.8)
    return a + b * steps ** -c * np.exp(rng.normal(0, 0.05, steps.size))


def rows(steps, loss, group, val_every):
    """CSV rows step,loss[,val_loss],group; the validation loss 1.1 x the training loss every
    val_every steps (empty between), none with val_every 0."""
    def val(s):
        return "" if s % val_every else f"{1.1 * loss[s - 1]:.6g}"
    if val_every:
        return "".join(f"{s},{loss[s - 1]:.6g},{val(s)},{group}\n" for s in steps)
    return "".join(f"{s},{loss[s - 1]:.6g},{group}\n" for s in steps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hpt", default=os.path.join(ROOT, "build", "hpt"))
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--start", type=int, default=1000)
    ap.add_argument("--final", type=int, default=2000)
    ap.add_argument("--rows", type=int, default=10)
    ap.add_argument("--polls", type=int, default=5)
    ap.add_argument("--groups", type=int, default=10)
    ap.add_argument("--log-every", type=int, default=1,
                    help="write only the steps divisible by this (a sweep logged every few steps, "
                         "which the watcher reads step by step)")
    ap.add_argument("--val-every", type=int, default=0,
                    help="a val_loss column with a validation loss every this many steps (0: none)")
    ap.add_argument("--stop-on", choices=["train", "validation"], default="train",
                    help="forecast.stop_on of the watcher (validation needs --val-every)")
    ap.add_argument("--work", default="/tmp/hpt-watch-bench")
    a = ap.parse_args()
    if a.stop_on == "validation" and a.val_every <= 0:
        ap.error("--stop-on validation needs --val-every > 0")
    shutil.rmtree(a.work, ignore_errors=True)
    live = os.path.join(a.work, "live")
    os.makedirs(live)
    rng = np.random.default_rng(1)
    total = a.start + a.rows * (a.polls + 1)
    curves = [curve(rng, np.arange(1, total + 1, dtype=float)) for _ in range(a.runs)]
    paths = [os.path.join(live, f"run{i:05d}.csv") for i in range(a.runs)]
    for i, p in enumerate(paths):
        header = "step,loss,val_loss,group\n" if a.val_every else "step,loss,group\n"
        with open(p, "w") as f:
            f.write(header + rows([s for s in range(1, a.start + 1) if s % a.log_every == 0],
                                  curves[i], f"g{i % a.groups}", a.val_every))
    cmd = [a.hpt, "-i", os.path.join(ROOT, "inputs", "watch.ini"), "--set", f"watch.folder={live}",
           "--set", f"watch.final_step={a.final}", "--set", "watch.interval=1", "--set",
           f"watch.max_polls={a.polls + 1}", "--set", f"output.dir={a.work}",
           "--set", f"forecast.stop_on={a.stop_on}"]
    env = dict(os.environ, OMP_WAIT_POLICY="passive")  # no spinning thread beside the writer
    watcher = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    step, lines = a.start, []
    for line in watcher.stdout:  # right after each poll, the next rows (the watcher then sleeps 1 s)
        if "poll took" not in line:
            continue
        lines.append(line.rstrip())
        if len(lines) > a.polls:
            continue
        for i, p in enumerate(paths):
            with open(p, "a") as f:
                f.write(rows([s for s in range(step + 1, step + a.rows + 1) if s % a.log_every == 0],
                             curves[i], f"g{i % a.groups}", a.val_every))
        step += a.rows
    err = watcher.stderr.read()
    if watcher.wait() != 0:
        sys.exit(f"watch failed: {err[-2000:]}")
    out = "\n".join(lines)
    print(out)
    took = [float(m) for m in re.findall(r"poll took ([0-9.e+-]+) s", out)]
    print(f"{a.runs} runs, {a.start} steps each at the start, logged every {a.log_every}, {a.rows} "
          f"steps appended per run before each poll; validation every {a.val_every or '-'}, "
          f"stop_on {a.stop_on}; "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    print(f"first poll (every file read whole): {took[0]:.3f} s")
    print("later polls: " + ", ".join(f"{t:.3f}" for t in took[1:]) + " s; "
          f"median {np.median(took[1:]):.3f} s")


if __name__ == "__main__":
    main()
