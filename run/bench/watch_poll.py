#!/usr/bin/python3
"""Bench of run.mode = watch: the cost of one poll of a large live sweep. Writes RUNS per-run CSV
files (synthetic power-law curves with noise, in GROUPS groups, each RUN at step START of
FINAL planned steps), starts the watcher on them, then appends ROWS rows to every file before each
of POLLS polls, and reports the watcher's own "poll took" times (the first poll reads every file
whole; the later ones read only what was appended, forecast every run and rewrite the status).

  run/bench/watch_poll.py [--hpt build/hpt] [--runs 1000] [--start 1000] [--final 2000]
                          [--rows 10] [--polls 5] [--groups 10] [--log-every 1]
                          [--work /tmp/hpt-watch-bench]
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


def write_rows(path, steps, loss, header=None):
    with open(path, "a") as f:
        if header:
            f.write(header)
        f.write("".join(f"{s},{l:.6g}\n" for s, l in zip(steps, loss)))


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
    ap.add_argument("--work", default="/tmp/hpt-watch-bench")
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    live = os.path.join(a.work, "live")
    os.makedirs(live)
    rng = np.random.default_rng(1)
    total = a.start + a.rows * (a.polls + 1)
    curves = [curve(rng, np.arange(1, total + 1, dtype=float)) for _ in range(a.runs)]
    paths = [os.path.join(live, f"run{i:05d}.csv") for i in range(a.runs)]
    for i, p in enumerate(paths):
        with open(p, "w") as f:
            f.write("step,loss,group\n" + "".join(
                f"{s},{curves[i][s - 1]:.6g},g{i % a.groups}\n" for s in range(1, a.start + 1)
                if s % a.log_every == 0))
    cmd = [a.hpt, "-i", os.path.join(ROOT, "inputs", "watch.ini"), "--set", f"watch.folder={live}",
           "--set", f"watch.final_step={a.final}", "--set", "watch.interval=1", "--set",
           f"watch.max_polls={a.polls + 1}", "--set", f"output.dir={a.work}"]
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
                f.write("".join(f"{s},{curves[i][s - 1]:.6g},g{i % a.groups}\n"
                                for s in range(step + 1, step + a.rows + 1) if s % a.log_every == 0))
        step += a.rows
    err = watcher.stderr.read()
    if watcher.wait() != 0:
        sys.exit(f"watch failed: {err[-2000:]}")
    out = "\n".join(lines)
    print(out)
    took = [float(m) for m in re.findall(r"poll took ([0-9.e+-]+) s", out)]
    print(f"{a.runs} runs, {a.start} steps each at the start, logged every {a.log_every}, {a.rows} "
          f"steps appended per run before each poll; "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    print(f"first poll (every file read whole): {took[0]:.3f} s")
    print("later polls: " + ", ".join(f"{t:.3f}" for t in took[1:]) + " s; "
          f"median {np.median(took[1:]):.3f} s")


if __name__ == "__main__":
    main()
