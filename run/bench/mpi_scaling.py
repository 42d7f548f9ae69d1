#!/usr/bin/python3
"""Bench of data-parallel training over MPI (docs/mpi.md, docs/bench.md): strong and weak scaling of real steps
(full training, no hybrid) on 1..N processes, and a comparison (--compare) on N processes with each arm's
communication. Each process gets --threads OpenMP threads; on one machine give the processes disjoint cores.

  run/bench/mpi_scaling.py [--hpt build-mpi/hpt] [--ranks 1,2] [--threads 1] [--steps 200]
                           [--global-batch 1024] [--per-rank-batch 512] [--layers 64,512,512,10]
                           [--compare-steps 300] [--work /tmp/hpt-mpi-bench]

Strong scaling keeps the global batch (--global-batch) and divides it over the processes; weak scaling gives every
process --per-rank-batch rows (global batch = ranks x it). Per run it prints the real step's time (forward, backward,
gradient allreduce, update; the summary's own fenced timer), steps per second, and the gradient allreduce's bytes
and seconds from the trace's /data_parallel group. Prints markdown tables.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

import h5py

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def mpirun(a, ranks, sets, out, name):
    cmd = ["mpirun", "-np", str(ranks), "--oversubscribe", "--bind-to", "none", "-x", "OMP_PROC_BIND=false",
           "-x", "OMP_WAIT_POLICY=passive", a.hpt, "-i", os.path.join(ROOT, "inputs", "digits.ini")]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    for s in [f"run.threads={a.threads}", f"output.dir={out}", f"output.name={name}"] + sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"mpi_scaling: {' '.join(cmd)} failed (rc {r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return r.stdout


def real_step(a, ranks, batch, out, name):
    sets = ["train.hybrid=off", "train.forecaster=false", f"train.steps={a.steps}", f"train.batch_size={batch}",
            f"train.val_every={a.steps}", "checkpoint.every=0", f"model.layers={a.layers}", "run.print_every=100000"]
    stdout = mpirun(a, ranks, sets, out, name)
    ms = float(re.search(r"^\s*real step \(forward, backward, update\)\s+([0-9.eE+-]+) ms/step$", stdout,
                         re.M).group(1))
    rate = float(re.search(r"^\s*steps/s\s+([0-9.eE+-]+)$", stdout, re.M).group(1))
    with h5py.File(os.path.join(out, f"{name}_trace.h5"), "r") as f:
        g = f["data_parallel"].attrs
        return ms, rate, int(g["gradient_bytes"]), float(g["gradient_seconds"]), float(g["seconds"])


def scaling(a, ranks_list, batch_of, title):
    print(f"\n{title}\n")
    print("| processes | global batch | rows per process | real step ms | steps/s | speed-up | efficiency "
          "| gradient allreduce MB/step | gradient allreduce ms/step | all collectives ms/step |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    base = None
    for n in ranks_list:
        batch = batch_of(n)
        ms, rate, gbytes, gsec, csec = real_step(a, n, batch, a.work, f"{title.split()[0]}_{n}")
        base = base or rate
        speed = rate / base
        print(f"| {n} | {batch} | {batch // n} | {ms:.3f} | {rate:.1f} | {speed:.2f} | {speed / n:.2f} | "
              f"{gbytes / a.steps / 1e6:.4f} | {1e3 * gsec / a.steps:.3f} | {1e3 * csec / a.steps:.3f} |", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--hpt", default=os.path.join(ROOT, "build-mpi", "hpt"))
    p.add_argument("--ranks", default="1,2")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--global-batch", type=int, default=1024)
    p.add_argument("--per-rank-batch", type=int, default=512)
    p.add_argument("--layers", default="64,512,512,10")
    p.add_argument("--compare-steps", type=int, default=300)
    p.add_argument("--work", default="/tmp/hpt-mpi-bench")
    a = p.parse_args()
    ranks_list = [int(x) for x in a.ranks.split(",")]
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    version = subprocess.run([a.hpt, "--version"], capture_output=True, text=True).stdout
    if "MPI on" not in version:
        sys.exit(f"mpi_scaling: {a.hpt} was built without MPI (run/build --mpi)")
    print(version.strip())
    print(f"digits deck, model.layers = {a.layers}, {a.steps} steps, {a.threads} OpenMP thread(s) per process, "
          f"{os.cpu_count()} cores")
    scaling(a, ranks_list, lambda n: a.global_batch, f"strong scaling (global batch {a.global_batch})")
    scaling(a, ranks_list, lambda n: n * a.per_rank_batch, f"weak scaling ({a.per_rank_batch} rows per process)")

    n = ranks_list[-1]
    print(f"\n--compare on {n} processes (digits deck, {a.compare_steps} steps, short hybrid settings)\n")
    sets = ["run.mode=compare", f"train.steps={a.compare_steps}", "train.val_every=50", "hybrid.warmup=60",
            "predict.confidence=1e6", "predict.min_coverage=0", "predict.min_scored=0", "forecast.every=10",
            "dynamics.bptt=8", "run.print_every=100000"]
    stdout = mpirun(a, n, sets, a.work, "compare")
    print(stdout[stdout.index("\ncompare ("):])


if __name__ == "__main__":
    main()
