#!/usr/bin/env python3
"""Bench of data-parallel training over MPI (docs/mpi.md, docs/bench.md): strong and weak scaling of real steps
(full training, no hybrid) over processes of one host, a one-process OpenMP reference, and --compare on several
processes with the gradient allreduce that the hybrid arm's predicted steps saved; on CPU cores, or with --gpus on
the GPUs of one host, one GPU per process. Python 3 standard library only: every figure is read from hpt's console
summary, so the host needs neither h5py nor numpy.

  run/bench/mpi_scaling.py [--hpt build-mpi/hpt] [--mpirun mpirun] [--ranks 1,2,4,8,16] [--threads 1,2]
                           [--omp-threads 1,2,4,8,16] [--steps 50] [--global-batch 1024] [--per-rank-batch 512]
                           [--deck inputs/digits.ini] [--layers 64,512,512,10] [--compare-ranks 4]
                           [--compare-steps 300] [--compare-batch 128] [--compare-deck DECK] [--compare-layers L]
                           [--compare-seeds S] [--budget 200] [--timeout 60] [--out DIR] [--quick]
                           [--gpus N|auto]

--gpus N (a CUDA build with MPI, run/build --cuda --mpi; auto: the GPUs nvidia-smi lists) runs at most N processes,
each on its own GPU (hpt maps its rank on the host to a GPU and says which in its header; the JSON keeps every
rank's GPU and PCI address, and how the gradient reaches MPI: staged through host memory, or passed as GPU memory
to a CUDA-aware library). Its defaults, each replaced by an explicit option: --ranks 1,2,4 --threads 1
--omp-threads '' --steps 100 --deck inputs/teacher-large.ini --layers 256,2048,2048,10 --global-batch 8192
--per-rank-batch 4096 --compare-ranks 2 --compare-deck inputs/reference/teacher-large-sgd.ini (its own layers and
batch 512, seed 1) --timeout 120 --compare-timeout 240 --budget 360.

From an unpacked run/device/bundle-mpi (source its mpi-env.sh first) hpt, mpirun and the decks are the bundle's.
The digits deck, full training, run.threads = T per process, mpirun --bind-to none (--bind core binds each
process to T cores). Series (a series skips a process count whose processes x threads exceed the cores this
process may run on, unless --oversubscribed):
  omp     one process, --omp-threads threads, global batch --global-batch (what threads alone give);
  strong  --global-batch rows divided over 1..N processes, for each of --threads;
  weak    --per-rank-batch rows per process (global batch = processes x it), the first of --threads;
  compare hpt --compare (full, hybrid, budget, freeze) on --compare-ranks processes, short hybrid settings.
The series run in this order: strong (first of --threads), weak, compare, strong (other threads), omp; a run
measured in an earlier series is not repeated, and one whose estimate would pass --budget seconds is left out;
with --gpus, a process count above the GPUs is left out too.
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
# The options whose defaults depend on where the processes compute: CPU cores, or GPUs (--gpus); --quick shrinks
# either. A value given on the command line is kept.
PRESETS = {
    "cpu": dict(ranks="1,2,4,8,16", threads="1,2", omp_threads="1,2,4,8,16", steps=50, global_batch=1024,
                per_rank_batch=512, deck="inputs/digits.ini", layers="64,512,512,10", compare_ranks=4,
                compare_steps=300, compare_batch=128, compare_deck=None, compare_layers="64,512,512,10",
                compare_seeds="", timeout=60, compare_timeout=150, budget=200),
    "gpu": dict(ranks="1,2,4", threads="1", omp_threads="", steps=100, global_batch=8192, per_rank_batch=4096,
                deck="inputs/teacher-large.ini", layers="256,2048,2048,10", compare_ranks=2, compare_steps=300,
                compare_batch=512, compare_deck="inputs/reference/teacher-large-sgd.ini", compare_layers="",
                compare_seeds="1", timeout=120, compare_timeout=240, budget=360),
}
QUICK = {
    "cpu": dict(ranks="1,2", threads="1", omp_threads="1,2", steps=4, layers="64,64,10", global_batch=64,
                per_rank_batch=32, compare_ranks=2, compare_steps=120, compare_batch=32, compare_layers="64,128,10"),
    "gpu": dict(ranks="1,2", threads="1", omp_threads="", steps=4, layers="256,64,10", global_batch=64,
                per_rank_batch=32, compare_ranks=2, compare_steps=120, compare_batch=32,
                compare_deck="inputs/teacher-large.ini", compare_layers="256,128,10"),
}
# One process's GPU as hpt's header gives it: "rank 1: GPU 1 of 4 (PCI 0000:2a:00), local rank 1 on the host of
# rank 0[; shares its GPU with rank 3]".
DEVICE = re.compile(r"rank (\d+): GPU (-?\d+) of (\d+) \(PCI ([^)]*)\)(?:, local rank (\d+) on the host of rank "
                    r"(\d+))?(?:; shares its GPU with rank ([\d, ]+))?$", re.M)


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
    m = re.search(r"^\s*collectives of parameters and gradients\s+(.*?)\s*$", text, re.M)
    r["collectives"] = m.group(1) if m else None
    return r


def parse_devices(text):
    """Every process's GPU from hpt's header (none on a CPU backend)."""
    return [{"rank": int(m.group(1)), "gpu": int(m.group(2)), "visible": int(m.group(3)), "pci": m.group(4),
             "local_rank": int(m.group(5)) if m.group(5) else 0, "host_of_rank": int(m.group(6)) if m.group(6) else 0,
             "shares_with": m.group(7)} for m in DEVICE.finditer(text)]


def staging(collectives):
    """How the gradient reaches MPI, in a word, from the summary's row."""
    if not collectives:
        return None
    if "staged" in collectives:
        return "staged through host memory"
    if "CUDA-aware" in collectives:
        return "GPU memory (CUDA-aware MPI)"
    return "host memory (CPU backend)"


def gpu_list():
    """nvidia-smi -L's lines ([] where there is none)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return []
    p = subprocess.run([smi, "-L"], capture_output=True, text=True)
    return [l.strip() for l in p.stdout.splitlines() if l.startswith("GPU ")] if p.returncode == 0 else []


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

    def mpirun(self, ranks, threads, sets, name, timeout, deck=None):
        a = self.a
        cmd = [a.mpirun, "-np", str(ranks), "--oversubscribe"]
        if os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        if a.bind == "core":
            cmd += ["--map-by", f"slot:PE={threads}", "--bind-to", "core"]
        else:
            cmd += ["--bind-to", "none"]
        cmd += ["-x", "OMP_PROC_BIND"] + self.mca + [a.hpt, "-i", deck or a.deck]
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
                m = re.search(r"^\s*backend\s+(.*?)\s*$", out, re.M)
                self.results["backend"] = m.group(1) if m else None
                self.results["probe_devices"] = parse_devices(out)
                self.results["collectives"] = parse_summary(out)["collectives"]
                self.results["staging"] = staging(self.results["collectives"])
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
            est = (self.startup + a.steps * ref["real_step_ms"] / 1e3 * (batch / ranks) / a.global_batch
                   / (1 if a.gpus else threads))
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
            r["devices"] = parse_devices(out)
            r["staging"] = staging(r["collectives"])
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
                "train.val_every=50", "run.print_every=100000", "checkpoint.every=0"] + HYBRID
        sets += [f"model.layers={a.compare_layers}"] if a.compare_layers else []
        sets += [f"compare.seeds={a.compare_seeds}"] if a.compare_seeds else []
        rc, out, elapsed, cmd = self.mpirun(ranks, threads, sets, f"compare_n{ranks}", min(a.compare_timeout, left),
                                            deck=a.compare_deck)
        c = {"processes": ranks, "threads": threads, "steps": a.compare_steps, "global_batch": a.compare_batch,
             "deck": os.path.relpath(a.compare_deck, ROOT), "layers": a.compare_layers or "the deck's",
             "seeds": a.compare_seeds or "run.seed", "rc": rc, "elapsed_s": round(elapsed, 3),
             "devices": parse_devices(out), "arms": {}}
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


def gpus_used(r):
    """The distinct GPUs a run's processes used, as "0,1" (by the header's GPU numbers), else "–"."""
    d = r.get("devices") or []
    return ",".join(str(x["gpu"]) for x in d) if d else "–"


def scaling_table(runs, weak, gpu=False):
    used = "GPU of each process" if gpu else "cores used"
    lines = [f"| processes | threads per process | {used} | global batch | rows per process | real step ms "
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
        use = gpus_used(r) if gpu else r["processes"] * r["threads"]
        if not ms:
            lines.append(f"| {r['processes']} | {r['threads']} | {use} | "
                         f"{r['global_batch']} | {r['rows_per_process']} | failed (rc {r['rc']}) |||||||")
            continue
        rate = r["global_batch"] / (ms / 1e3)
        speed = rate / (base["global_batch"] / (base["real_step_ms"] / 1e3))
        # Strong: speed-up over the resources' ratio (cores on a CPU, GPUs: the processes).
        scale = r["processes"] / base["processes"] * (1 if gpu else r["threads"] / base["threads"])
        eff = base["real_step_ms"] / ms if weak else speed / scale
        g = r["communication"].get("gradient")
        gmb = g["bytes"] / 1e6 / r["steps"] if g and "bytes" in g else None
        coll = r["communication"].get("total")
        share = coll["seconds"] / r["wall_s"] if coll and r.get("wall_s") else None
        lines.append(f"| {r['processes']} | {r['threads']} | {use} | {r['global_batch']} | "
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
    p.add_argument("--hpt", default=os.path.join(bundle, "bin", "hpt") if bundle else None,
                   help="default: the bundle's, else build-mpi/hpt (with --gpus build-cuda-mpi/hpt)")
    p.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    p.add_argument("--gpus", default="0",
                   help="N or auto: at most N processes, one GPU each, with the GPU defaults (0: CPU cores)")
    p.add_argument("--deck", help="default: inputs/digits.ini (GPUs: inputs/teacher-large.ini)")
    p.add_argument("--ranks", help="process counts of the strong and weak series")
    p.add_argument("--threads", help="OpenMP threads per process: one strong series each")
    p.add_argument("--omp-threads", help="threads of the one-process reference ('' = none)")
    p.add_argument("--steps", type=int)
    p.add_argument("--global-batch", type=int)
    p.add_argument("--per-rank-batch", type=int)
    p.add_argument("--layers")
    p.add_argument("--compare-ranks", type=int, help="0: no comparison")
    p.add_argument("--compare-steps", type=int)
    p.add_argument("--compare-batch", type=int)
    p.add_argument("--compare-deck", help="default: --deck (GPUs: inputs/reference/teacher-large-sgd.ini)")
    p.add_argument("--compare-layers", help="'': the deck's own")
    p.add_argument("--compare-seeds", help="compare.seeds ('': the deck's)")
    p.add_argument("--bind", choices=["none", "core"], default="none")
    p.add_argument("--oversubscribed", action="store_true", help="also run process counts beyond the cores")
    p.add_argument("--timeout", type=int, help="seconds per scaling run before it is killed")
    p.add_argument("--compare-timeout", type=int)
    p.add_argument("--budget", type=int,
                   help="seconds for the whole bench: runs whose estimate would pass it are left out")
    p.add_argument("--quick", action="store_true", help="a smoke test: 1,2 processes, tiny sizes")
    p.add_argument("--out", default=os.environ.get("OUT"))
    p.add_argument("--work", default="/tmp/hpt-mpi-bench", help="the runs' traces and checkpoints")
    a = p.parse_args()
    gpus_found = gpu_list()
    if a.gpus == "auto":
        a.gpus = len(gpus_found)
        if not a.gpus:
            sys.exit("mpi_scaling: --gpus auto: nvidia-smi lists no GPU")
    elif not a.gpus.isdigit():
        sys.exit(f"mpi_scaling: --gpus {a.gpus}: expected a whole number or auto")
    a.gpus = int(a.gpus)
    kind = "gpu" if a.gpus else "cpu"
    preset = dict(PRESETS[kind], **(QUICK[kind] if a.quick else {}))
    for k, v in preset.items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    if a.quick:
        a.oversubscribed = True
    if a.hpt is None:
        a.hpt = os.path.join(ROOT, "build-cuda-mpi" if a.gpus else "build-mpi", "hpt")

    def deck_path(d):  # as given, else under the repository's (or bundle's) root, as the presets name them
        return os.path.abspath(d if os.path.isabs(d) or os.path.isfile(d) else os.path.join(ROOT, d))
    a.deck = deck_path(a.deck)
    a.compare_deck = deck_path(a.compare_deck or a.deck)
    a.out = a.out or a.work
    a.hpt, a.deck = os.path.abspath(a.hpt), os.path.abspath(a.deck)
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    os.makedirs(os.path.join(a.out, "logs"), exist_ok=True)
    version = subprocess.run([a.hpt, "--version"], capture_output=True, text=True).stdout
    if "MPI on" not in version:
        sys.exit(f"mpi_scaling: {a.hpt} was built without MPI (run/build --mpi)\n{version}")
    a.real_bytes = 8 if "precision double" in version else 4
    cuda = "default execution space Cuda" in version
    if a.gpus and not cuda:
        print(f"mpi_scaling: WARNING: --gpus {a.gpus} with {a.hpt}, which is not a CUDA build: the runs compute on "
              "the CPU (a test of the bench itself, not a GPU measurement)", flush=True)
    cores = usable_cores()
    mpi_version = subprocess.run([a.mpirun, "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    b = Bench(a)
    b.results["host"] = {"hpt": version.strip(), "mpirun": mpi_version, "cores_usable": cores,
                         "cpus_online": os.cpu_count(), "cpu": model, "node": platform.node(),
                         "load_before": os.getloadavg(), "deck": os.path.relpath(a.deck, ROOT), "gpus": gpus_found,
                         "gpus_used": a.gpus, "args": vars(a)}
    header = (f"{version.strip()}\n{mpi_version}; {cores} usable cores ({os.cpu_count()} online), {model}; load "
              f"average {os.getloadavg()[0]:.2f} before\n{os.path.relpath(a.deck, ROOT)}, full training, "
              f"model.layers = {a.layers}, {a.steps} steps per run, mpirun --bind-to "
              f"{'core' if a.bind == 'core' else 'none'}")
    if a.gpus:
        header += (f"\nGPUs: at most {a.gpus} processes, one GPU each; nvidia-smi -L: "
                   + ("; ".join(gpus_found) if gpus_found else "none"))
    print(header, flush=True)
    if cores < 4 and not a.gpus:
        print(f"mpi_scaling: only {cores} usable cores: the figures cannot show scaling", flush=True)
    t_start = time.time()
    b.probe()
    if b.results["mca"]:
        print(f"(Open MPI parameters of every run, found by the probe: {b.results['mca']})")
    if a.gpus:
        pd = b.results.get("probe_devices") or []
        line = (f"backend {b.results.get('backend')}; gradient collectives: {b.results.get('collectives')}; probe's "
                f"processes: " + (", ".join(f"rank {d['rank']} on GPU {d['gpu']} (PCI {d['pci']})" for d in pd)
                                  or "no GPU reported"))
        header += "\n" + line
        print(line, flush=True)

    def fits(n, t):
        if a.gpus and n > a.gpus:
            return False
        return a.oversubscribed or n * t <= cores

    ranks = [int(x) for x in a.ranks.split(",")]
    md = [header + "\n"]

    def emit(title, runs, weak=False):
        if runs:
            md.append(f"### {title}\n\n" + scaling_table(runs, weak, gpu=bool(a.gpus)) + "\n")
            print("\n" + md[-1], flush=True)

    # In the order of what issue 34 asks first, so that a bench cut short by --budget keeps it: strong and weak
    # scaling on 1 thread per process, the comparison, then more threads per process and OpenMP alone.
    t1 = [int(x) for x in a.threads.split(",")]
    if a.gpus:
        b.skipped += [f"{n} processes (more than the {a.gpus} GPUs)" for n in ranks if n > a.gpus]
    emit(f"strong scaling: global batch {a.global_batch}, {t1[0]} thread(s) per process",
         [b.run("strong", n, t1[0], a.global_batch) for n in ranks if fits(n, t1[0]) and a.global_batch % n == 0])
    emit(f"weak scaling: {a.per_rank_batch} rows per process, {t1[0]} thread(s) per process",
         [b.run("weak", n, t1[0], n * a.per_rank_batch) for n in ranks if fits(n, t1[0])], weak=True)
    if a.compare_ranks > 1 and a.gpus and a.compare_ranks > a.gpus:
        b.skipped.append(f"compare on {a.compare_ranks} processes (more than the {a.gpus} GPUs)")
    elif a.compare_ranks > 1:
        c = b.compare(a.compare_ranks, 1)
        if c:
            md.append(f"### --compare on {a.compare_ranks} processes (1 thread each): {c['deck']}, "
                      f"{a.compare_steps} steps, global batch {a.compare_batch}, model.layers = {c['layers']}, "
                      f"seeds {c['seeds']}, short hybrid settings\n\n" + compare_table(c) + "\n")
            print("\n" + md[-1], flush=True)
            b.save()
    for t in t1[1:]:
        emit(f"strong scaling: global batch {a.global_batch}, {t} thread(s) per process",
             [b.run("strong", n, t, a.global_batch) for n in ranks if fits(n, t) and a.global_batch % n == 0])
    emit(f"OpenMP alone: 1 process, global batch {a.global_batch}",
         [b.run("omp", 1, t, a.global_batch) for t in [int(x) for x in a.omp_threads.split(",") if x] if fits(1, t)])
    if b.skipped:
        why = (f"beyond the GPUs, or to stay within --budget {a.budget} s" if a.gpus
               else f"to stay within --budget {a.budget} s")
        md.append(f"Left out {why}: " + ", ".join(b.skipped) + "\n")
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
