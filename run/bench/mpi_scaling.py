#!/usr/bin/env python3
"""Bench of data-parallel training over MPI (docs/mpi.md, docs/bench.md): strong and weak scaling of real steps
(full training, no hybrid) over processes of one host, a one-process OpenMP reference, and --compare on several
processes with the gradient allreduce that the hybrid arm's predicted steps saved. Python 3 standard library only:
every figure is read from hpt's console summary, so the host needs neither h5py nor numpy.

  run/bench/mpi_scaling.py [--hpt build-mpi/hpt] [--mpirun mpirun] [--ranks 1,2,4,8,16] [--threads 1,2]
                           [--omp-threads 1,2,4,8,16] [--steps 50] [--global-batch 1024] [--per-rank-batch 512]
                           [--layers 64,512,512,10] [--compare-ranks 4] [--compare-steps 300]
                           [--compare-batch 128] [--budget 200] [--timeout 60] [--out DIR] [--quick]

From an unpacked run/device/bundle-mpi (source its mpi-env.sh first) hpt, mpirun and the decks are the bundle's.
The digits deck, full training, run.threads = T per process, mpirun --bind-to none (--bind core binds each
process to T cores). Series (a series skips a process count whose processes x threads exceed the cores this
process may run on, unless --oversubscribed):
  omp     one process, --omp-threads threads, global batch --global-batch (what threads alone give);
  strong  --global-batch rows divided over 1..N processes, for each of --threads;
  weak    --per-rank-batch rows per process (global batch = processes x it), the first of --threads;
  compare hpt --compare (full, hybrid, budget, freeze) on --compare-ranks processes, short hybrid settings.
The series run in this order: strong (first of --threads), weak, compare, strong (other threads), omp; a run
measured in an earlier series is not repeated, and one whose estimate would pass --budget seconds is left out.
Per run: the summary's real step (forward, backward, gradient allreduce, update; hpt's own fenced timer), and
each kind of communication (MB, calls, rank 0's seconds, which include waiting for the slowest process). Prints
markdown tables and writes DIR/mpi-scaling.json (rewritten after every run, so a cut-off bench keeps what it
measured), DIR/mpi-scaling.md and every run's console log under DIR/logs/. DIR: --out, else $OUT, else --work.
"""
import argparse
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The repository (run/bench/) or an unpacked bundle (bench/): the directory that holds inputs/.
ROOT = next((d for d in (os.path.dirname(os.path.dirname(HERE)), os.path.dirname(HERE))
             if os.path.isfile(os.path.join(d, "inputs", "digits.ini"))), os.path.dirname(HERE))
NUM = r"([-+0-9.eE]+|nan|inf)"
# The short hybrid settings of tests/integration/test_mpi.py: every decision may try a block, the probe decides.
HYBRID = ["hybrid.warmup=60", "predict.confidence=1e6", "predict.min_coverage=0", "predict.min_scored=0",
          "forecast.every=10", "dynamics.bptt=8"]


def summary_value(text, label, unit=""):
    m = re.search(r"^\s*" + re.escape(label) + r"\s+" + NUM + (r"\s*" + re.escape(unit) if unit else "") + r"\s*$",
                  text, re.M)
    return float(m.group(1)) if m else None


def parse_summary(text):
    """The figures of one training run's console summary (one arm's section in a comparison)."""
    r = {"real_step_ms": summary_value(text, "real step (forward, backward, update)", "ms/step"),
         "steps_per_s": summary_value(text, "steps/s"), "wall_s": summary_value(text, "wall time", "s")}
    m = re.search(r"^model\s.*?, (\d+) parameters$", text, re.M)
    r["parameters"] = int(m.group(1)) if m else None
    m = re.search(r"^\s*steps\s+(\d+) -> (\d+)\s*$", text, re.M)
    r["steps"] = int(m.group(2)) - int(m.group(1)) if m else None
    m = re.search(r"^\s*backward passes\s+(\d+) of (\d+) steps\s*$", text, re.M)
    r["backward_passes"] = int(m.group(1)) if m else None
    r["processes"] = int(summary_value(text, "processes (data-parallel)") or 1)
    comm = {}
    for m in re.finditer(r"^\s*communication: (\w+)\s+" + NUM + r" MB in (\d+) calls, " + NUM + r" s\s*$", text,
                         re.M):
        comm[m.group(1)] = {"mb": float(m.group(2)), "calls": int(m.group(3)), "seconds": float(m.group(4))}
    r["communication"] = comm
    return r


def usable_cores():
    """The CPUs this process may run on, fewer where a cgroup (v2 cpu.max, v1 cfs quota) caps its CPU time."""
    n = len(os.sched_getaffinity(0))
    for path in ("/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"):
        try:
            with open(path) as f:
                v = f.read().split()
            if path.endswith("cpu.max"):
                quota, period = v[0], v[1]
            else:
                with open("/sys/fs/cgroup/cpu/cpu.cfs_period_us") as f:
                    quota, period = v[0], f.read().split()[0]
            if quota not in ("max", "-1") and int(period) > 0:
                n = min(n, max(1, int(int(quota) // int(period))))
            break
        except (OSError, IndexError, ValueError):
            continue
    return n


def exact_bytes(r, real_bytes):
    """The summary rounds MB to 4 digits: the gradient's bytes are exact as calls x parameters x sizeof(real), and
    the total's are those plus the other kinds' (a few bytes each per step)."""
    comm = r["communication"]
    g = comm.get("gradient")
    if g and r["parameters"]:
        g["bytes"] = g["calls"] * r["parameters"] * real_bytes
        if "total" in comm:
            comm["total"]["bytes"] = g["bytes"] + sum(round(c["mb"] * 1e6) for k, c in comm.items()
                                                      if k not in ("gradient", "total"))
    return r


class Bench:
    def __init__(self, a):
        self.a = a
        self.results = {"runs": [], "compare": None}
        self.env = dict(os.environ, OMP_PROC_BIND="false")
        self.mca = []  # extra "--mca k v" pairs found necessary by the probe
        self.n_run = 0
        self.done = {}  # (processes, threads, global batch) -> the run's figures
        self.skipped = []
        self.results["skipped"] = self.skipped
        self.t0 = time.time()
        self.startup = 2.0  # seconds of a run besides its steps; the probe measures it

    def save(self):
        with open(os.path.join(self.a.out, "mpi-scaling.json"), "w") as f:
            json.dump(self.results, f, indent=1)

    def mpirun(self, ranks, threads, sets, name, timeout):
        a = self.a
        cmd = [a.mpirun, "-np", str(ranks), "--oversubscribe"]
        if os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        if a.bind == "core":
            cmd += ["--map-by", f"slot:PE={threads}", "--bind-to", "core"]
        else:
            cmd += ["--bind-to", "none"]
        cmd += ["-x", "OMP_PROC_BIND"] + self.mca + [a.hpt, "-i", a.deck]
        for s in [f"run.threads={threads}", f"output.dir={a.work}/{name}", f"output.name={name}"] + sets:
            cmd += ["--set", s]
        t0 = time.time()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=self.env,
                             start_new_session=True)
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGTERM)  # mpirun and the processes it started: their own session
            try:
                out, _ = p.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                out, _ = p.communicate()
            out = (out or "") + f"\nmpi_scaling: killed after {timeout} s\n"
            p.returncode = 124
        self.n_run += 1
        with open(os.path.join(a.out, "logs", f"{self.n_run:02d}_{name}.log"), "w") as f:
            f.write(" ".join(cmd) + "\n\n" + out)
        return p.returncode, out, time.time() - t0, cmd

    def probe(self):
        """A 2-process run of 3 steps. Where shared memory's single-copy path (CMA: process_vm_readv) is not
        allowed, as in many containers, Open MPI's vader fails on the first large message: retry without it."""
        # (The parameters found are passed to every later run and recorded as "mca" in the JSON.)
        sets = ["train.hybrid=off", "train.steps=3", "train.batch_size=64", "train.val_every=3", "checkpoint.every=0"]
        vader = ["--mca", "btl_vader_single_copy_mechanism", "none"]
        tmp = ["--mca", "btl_vader_backing_directory", "/tmp"]
        # Shared memory's files go to /dev/shm, a few MB per process: a container's /dev/shm may be too small
        # (Docker's default is 64 MB) for the largest process count, which the 2-process probe would not see.
        try:
            st = os.statvfs("/dev/shm")
            small = st.f_bavail * st.f_frsize < 512 << 20
        except OSError:
            small = True
        base = tmp if small else []
        # Then also the backing files in /tmp (where /dev/shm is missing or read-only), then loopback TCP alone.
        for mca in (base, base + vader, vader + tmp, ["--mca", "btl", "self,tcp"]):
            self.mca = mca
            rc, out, elapsed, cmd = self.mpirun(2, 1, sets, "probe", 60)
            if rc == 0 and "identical, checksum" in out:
                self.results["mca"] = " ".join(mca)
                self.startup = elapsed
                return
            print(f"mpi_scaling: probe failed (rc {rc}) with '{' '.join(mca)}':\n{out[-1500:]}", flush=True)
        sys.exit("mpi_scaling: mpirun cannot run 2 processes of hpt here; see the probe logs under "
                 f"{self.a.out}/logs/")

    def run(self, series, ranks, threads, batch):
        """One run of real steps; a configuration measured before (in another series) is not run again, and one
        whose estimated time would pass the --budget is left out (its estimate: the 1 x 1 run's step time per row,
        divided by the threads, plus the probe's start-up time)."""
        a = self.a
        key = (ranks, threads, batch)
        if key in self.done:
            return dict(self.done[key], series=series, repeated_from=self.done[key]["series"])
        ref = self.done.get((1, 1, a.global_batch))
        if ref and ref.get("real_step_ms"):
            est = self.startup + a.steps * ref["real_step_ms"] / 1e3 * (batch / ranks) / a.global_batch / threads
            if time.time() - self.t0 + est > a.budget:
                self.skipped.append(f"{series} {ranks}x{threads} (about {est:.0f} s)")
                return {"series": series, "processes": ranks, "threads": threads, "global_batch": batch,
                        "rows_per_process": batch // ranks, "rc": None, "skipped_estimate_s": round(est, 1)}
        r = self.real_steps(series, ranks, threads, batch)
        self.done[key] = r
        return r

    def real_steps(self, series, ranks, threads, batch):
        a = self.a
        sets = ["train.hybrid=off", "train.forecaster=false", f"train.steps={a.steps}", f"train.batch_size={batch}",
                f"train.val_every={a.steps}", "checkpoint.every=0", f"model.layers={a.layers}",
                "run.print_every=100000"]
        rc, out, elapsed, cmd = self.mpirun(ranks, threads, sets, f"{series}_n{ranks}_t{threads}", a.timeout)
        r = {"series": series, "processes": ranks, "threads": threads, "global_batch": batch,
             "rows_per_process": batch // ranks, "rc": rc, "elapsed_s": round(elapsed, 3)}
        if rc == 0:
            r.update(parse_summary(out))
            r["processes"] = ranks
            exact_bytes(r, a.real_bytes)
        else:
            print(f"mpi_scaling: {series} on {ranks} x {threads} failed (rc {rc}):\n{out[-1500:]}", flush=True)
        self.results["runs"].append(r)
        self.save()
        return r

    def compare(self, ranks, threads):
        a = self.a
        left = a.budget - (time.time() - self.t0)
        if left < 30:
            self.skipped.append(f"compare on {ranks} processes ({left:.0f} s left)")
            return None
        sets = ["run.mode=compare", f"train.steps={a.compare_steps}", f"train.batch_size={a.compare_batch}",
                "train.val_every=50", f"model.layers={a.compare_layers}", "run.print_every=100000",
                "checkpoint.every=0"] + HYBRID
        rc, out, elapsed, cmd = self.mpirun(ranks, threads, sets, f"compare_n{ranks}", min(a.compare_timeout, left))
        c = {"processes": ranks, "threads": threads, "steps": a.compare_steps, "global_batch": a.compare_batch,
             "layers": a.compare_layers, "rc": rc, "elapsed_s": round(elapsed, 3), "arms": {}}
        if rc != 0:
            print(f"mpi_scaling: compare failed (rc {rc}):\n{out[-1500:]}", flush=True)
        sections = re.split(r"^=== compare: seed \d+, arm (\w+) ===$", out, flags=re.M)
        for arm, text in zip(sections[1::2], sections[2::2]):
            c["arms"][arm] = exact_bytes(parse_summary(text), a.real_bytes)
        m = re.search(r"^compare \(.*?\n(.*?)^seed", out, re.M | re.S)
        c["table"] = m.group(1).rstrip() if m else None
        self.results["compare"] = c
        self.save()
        return c


def fmt(x, spec):
    return "–" if x is None else format(x, spec)


def comm_ms(r, kind):
    c = r.get("communication", {}).get(kind)
    return 1e3 * c["seconds"] / r["steps"] if c and r.get("steps") else None


def scaling_table(runs, weak):
    lines = ["| processes | threads per process | cores used | global batch | rows per process | real step ms "
             f"| rows/s | speed-up | {'efficiency (t1/tN)' if weak else 'efficiency (speed-up/N)'} "
             "| gradient MB per step | gradient allreduce ms/step | all collectives ms/step "
             "| communication % of wall time |",
             "|" + "---|" * 13]
    base = next((r for r in runs if r.get("real_step_ms")), None)
    if base is None:
        return "(no run of this series finished)"
    for r in runs:
        ms = r.get("real_step_ms")
        if r["rc"] is None:
            continue
        if not ms:
            lines.append(f"| {r['processes']} | {r['threads']} | {r['processes'] * r['threads']} | "
                         f"{r['global_batch']} | {r['rows_per_process']} | failed (rc {r['rc']}) |||||||")
            continue
        rate = r["global_batch"] / (ms / 1e3)
        speed = rate / (base["global_batch"] / (base["real_step_ms"] / 1e3))
        eff = base["real_step_ms"] / ms if weak else speed / (r["processes"] * r["threads"] / base["threads"]
                                                             / base["processes"])
        g = r["communication"].get("gradient")
        gmb = g["bytes"] / 1e6 / r["steps"] if g and "bytes" in g else None
        coll = r["communication"].get("total")
        share = coll["seconds"] / r["wall_s"] if coll and r.get("wall_s") else None
        lines.append(f"| {r['processes']} | {r['threads']} | {r['processes'] * r['threads']} | {r['global_batch']} | "
                     f"{r['rows_per_process']} | {ms:.2f} | {rate:.0f} | {speed:.2f} | {eff:.2f} | {fmt(gmb, '.3f')} "
                     f"| {fmt(comm_ms(r, 'gradient'), '.3f')} | {fmt(comm_ms(r, 'total'), '.3f')} | "
                     f"{fmt(share and 100 * share, '.1f')} |")
    return "\n".join(lines)


def compare_table(c):
    lines = ["| arm | steps | backward passes | wall time s | gradient allreduces | gradient MB | gradient s "
             "| all collectives MB | all collectives s |", "|" + "---|" * 9]
    for arm, s in c["arms"].items():
        g = s["communication"].get("gradient", {})
        t = s["communication"].get("total", {})
        lines.append(f"| {arm} | {s['steps']} | {s['backward_passes']} | {fmt(s['wall_s'], '.3f')} | "
                     f"{g.get('calls', '–')} | {fmt(g.get('bytes', 0) / 1e6, '.3f')} | "
                     f"{fmt(g.get('seconds'), '.4f')} | "
                     f"{fmt(t.get('bytes', 0) / 1e6, '.3f')} | {fmt(t.get('seconds'), '.4f')} |")
    full, hyb = c["arms"].get("full"), c["arms"].get("hybrid")
    if full and hyb and "gradient" in full["communication"] and "gradient" in hyb["communication"]:
        fg, hg = full["communication"]["gradient"], hyb["communication"]["gradient"]
        predicted = hyb["steps"] - hyb["backward_passes"]
        saved_b = fg.get("bytes", 0) - hg.get("bytes", 0)
        saved_s = fg["seconds"] - hg["seconds"]
        c["saved"] = {"predicted_steps": predicted, "gradient_bytes": saved_b,
                      "gradient_bytes_fraction": saved_b / fg["bytes"] if fg.get("bytes") else None,
                      "gradient_seconds": saved_s, "gradient_seconds_fraction": saved_s / fg["seconds"]
                      if fg["seconds"] else None,
                      "total_seconds": full["communication"]["total"]["seconds"] -
                      hyb["communication"]["total"]["seconds"]}
        sb, sf = c["saved"]["gradient_bytes_fraction"], c["saved"]["gradient_seconds_fraction"]
        lines.append(f"\nThe hybrid arm's {predicted} predicted steps made no gradient allreduce: it communicated "
                     f"{saved_b / 1e6:.3f} MB of gradient less ({fmt(sb and 100 * sb, '.1f')} % of full's), and "
                     f"its gradient allreduces took {hg['seconds']:.4f} s against full's "
                     f"{fg['seconds']:.4f} s ({saved_s:+.4f} s saved, {fmt(sf and 100 * sf, '+.1f')} % of full's); "
                     f"all collectives {c['saved']['total_seconds']:+.4f} s saved.")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    bundle = os.environ.get("HPT_BUNDLE")
    p.add_argument("--hpt", default=os.path.join(bundle, "bin", "hpt") if bundle else
                   os.path.join(ROOT, "build-mpi", "hpt"))
    p.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    p.add_argument("--deck", default=os.path.join(ROOT, "inputs", "digits.ini"))
    p.add_argument("--ranks", default="1,2,4,8,16", help="process counts of the strong and weak series")
    p.add_argument("--threads", default="1,2", help="OpenMP threads per process: one strong series each")
    p.add_argument("--omp-threads", default="1,2,4,8,16", help="threads of the one-process reference ('' = none)")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--global-batch", type=int, default=1024)
    p.add_argument("--per-rank-batch", type=int, default=512)
    p.add_argument("--layers", default="64,512,512,10")
    p.add_argument("--compare-ranks", type=int, default=4, help="0: no comparison")
    p.add_argument("--compare-steps", type=int, default=300)
    p.add_argument("--compare-batch", type=int, default=128)
    p.add_argument("--compare-layers", default="64,512,512,10")
    p.add_argument("--bind", choices=["none", "core"], default="none")
    p.add_argument("--oversubscribed", action="store_true", help="also run process counts beyond the cores")
    p.add_argument("--timeout", type=int, default=60, help="seconds per scaling run before it is killed")
    p.add_argument("--compare-timeout", type=int, default=150)
    p.add_argument("--budget", type=int, default=200,
                   help="seconds for the whole bench: runs whose estimate would pass it are left out")
    p.add_argument("--quick", action="store_true", help="a smoke test: 1,2 processes, tiny sizes")
    p.add_argument("--out", default=os.environ.get("OUT"))
    p.add_argument("--work", default="/tmp/hpt-mpi-bench", help="the runs' traces and checkpoints")
    a = p.parse_args()
    if a.quick:
        a.ranks, a.threads, a.omp_threads, a.steps, a.layers = "1,2", "1", "1,2", 4, "64,64,10"
        a.global_batch, a.per_rank_batch, a.compare_ranks, a.compare_steps, a.compare_batch = 64, 32, 2, 120, 32
        a.compare_layers, a.oversubscribed = "64,128,10", True
    a.out = a.out or a.work
    a.hpt, a.deck = os.path.abspath(a.hpt), os.path.abspath(a.deck)
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    os.makedirs(os.path.join(a.out, "logs"), exist_ok=True)
    version = subprocess.run([a.hpt, "--version"], capture_output=True, text=True).stdout
    if "MPI on" not in version:
        sys.exit(f"mpi_scaling: {a.hpt} was built without MPI (run/build --mpi)\n{version}")
    a.real_bytes = 8 if "precision double" in version else 4
    cores = usable_cores()
    mpi_version = subprocess.run([a.mpirun, "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    b = Bench(a)
    b.results["host"] = {"hpt": version.strip(), "mpirun": mpi_version, "cores_usable": cores,
                         "cpus_online": os.cpu_count(), "cpu": model, "node": platform.node(),
                         "load_before": os.getloadavg(), "deck": os.path.relpath(a.deck, ROOT), "args": vars(a)}
    header = (f"{version.strip()}\n{mpi_version}; {cores} usable cores ({os.cpu_count()} online), {model}; load "
              f"average {os.getloadavg()[0]:.2f} before\n{os.path.relpath(a.deck, ROOT)}, full training, "
              f"model.layers = {a.layers}, {a.steps} steps per run, mpirun --bind-to "
              f"{'core' if a.bind == 'core' else 'none'}")
    print(header, flush=True)
    if cores < 4:
        print(f"mpi_scaling: only {cores} usable cores: the figures cannot show scaling", flush=True)
    t_start = time.time()
    b.probe()
    if b.results["mca"]:
        print(f"(Open MPI parameters of every run, found by the probe: {b.results['mca']})")

    def fits(n, t):
        return a.oversubscribed or n * t <= cores

    ranks = [int(x) for x in a.ranks.split(",")]
    md = [header + "\n"]

    def emit(title, runs, weak=False):
        if runs:
            md.append(f"### {title}\n\n" + scaling_table(runs, weak) + "\n")
            print("\n" + md[-1], flush=True)

    # In the order of what issue 34 asks first, so that a bench cut short by --budget keeps it: strong and weak
    # scaling on 1 thread per process, the comparison, then more threads per process and OpenMP alone.
    t1 = [int(x) for x in a.threads.split(",")]
    emit(f"strong scaling: global batch {a.global_batch}, {t1[0]} thread(s) per process",
         [b.run("strong", n, t1[0], a.global_batch) for n in ranks if fits(n, t1[0]) and a.global_batch % n == 0])
    emit(f"weak scaling: {a.per_rank_batch} rows per process, {t1[0]} thread(s) per process",
         [b.run("weak", n, t1[0], n * a.per_rank_batch) for n in ranks if fits(n, t1[0])], weak=True)
    if a.compare_ranks > 1:
        c = b.compare(a.compare_ranks, 1)
        if c:
            md.append(f"### --compare on {a.compare_ranks} processes (1 thread each): {a.compare_steps} steps, "
                      f"global batch {a.compare_batch}, model.layers = {a.compare_layers}, short hybrid settings\n\n"
                      + compare_table(c) + "\n")
            print("\n" + md[-1], flush=True)
            b.save()
    for t in t1[1:]:
        emit(f"strong scaling: global batch {a.global_batch}, {t} thread(s) per process",
             [b.run("strong", n, t, a.global_batch) for n in ranks if fits(n, t) and a.global_batch % n == 0])
    emit(f"OpenMP alone: 1 process, global batch {a.global_batch}",
         [b.run("omp", 1, t, a.global_batch) for t in [int(x) for x in a.omp_threads.split(",") if x] if fits(1, t)])
    if b.skipped:
        md.append("Left out to stay within --budget " + str(a.budget) + " s: " + ", ".join(b.skipped) + "\n")
        print(md[-1])
    b.results["bench_seconds"] = round(time.time() - t_start, 1)
    b.save()
    md.append(f"bench: {b.results['bench_seconds']} s; json {os.path.join(a.out, 'mpi-scaling.json')}")
    print(md[-1])
    with open(os.path.join(a.out, "mpi-scaling.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    failed = [r for r in b.results["runs"] if r["rc"] not in (0, None)]
    if failed or (b.results["compare"] and b.results["compare"]["rc"] != 0):
        sys.exit(f"mpi_scaling: {len(failed)} run(s) failed; see {a.out}/logs/")


if __name__ == "__main__":
    main()
