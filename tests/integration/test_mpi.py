"""Data-parallel training over MPI (docs/mpi.md), on 2 processes of the xor deck: the parameters are identical on
every process; the run equals, within float rounding, one process training the same global batch (and a run on other
data does not); a restart on 2 processes continues bit for bit; a checkpoint of 2 processes is refused on 3, and so
are a global batch that does not split evenly and the modes that do not run data-parallel (exit 2, before any work).
A short hybrid run on the digits deck makes the same decisions on 2 processes as on 1. The Slurm job
run/slurm/mpi.sbatch (stand-in srun and scontrol) stops on SIGUSR1 with a checkpoint, requeues, and continues.
Needs a binary built with HPT_ENABLE_MPI; against any other it exits 77, which ctest reports as skipped."""
import os
import shutil
import signal
import subprocess
import sys

import numpy as np

import hptest

a = hptest.args()
version = subprocess.run([a.hpt, "--version"], capture_output=True, text=True, timeout=120)
if "MPI on" not in version.stdout:
    print("skipped: this hpt was built without MPI (configure with -DHPT_ENABLE_MPI=ON; run/build --mpi)\n"
          + version.stdout + version.stderr)
    sys.exit(77)
hptest.check(shutil.which("mpirun") is not None, "mpirun is on PATH (Debian's openmpi-bin)")
if hptest.FAILURES:
    hptest.finish()
h5py = hptest.h5()
deck = hptest.deck_path(a.root, "xor.ini")
N = 30
# A batch of 60 rows splits over 1, 2 and 3 processes; one OpenMP thread each (the ranks share the cores).
base = ["train.batch_size=60", "train.val_every=10", "run.print_every=10", "dataset.samples=600", "run.threads=1",
        "checkpoint.keep=10"]


def mpirun(n, *sets, name, steps, out):
    cmd = ["mpirun", "-np", str(n), "--oversubscribe", "--allow-run-as-root", "-x", "OMP_PROC_BIND=false",
           "-x", "OMP_WAIT_POLICY=passive", a.hpt, "-i", deck]
    for s in base + [f"output.dir={out}", f"output.name={name}", f"train.steps={steps}"] + list(sets):
        cmd += ["--set", s]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def params(out, name, step):
    with h5py.File(os.path.join(out, f"{name}_ckpt_{step:010d}.h5"), "r") as f:
        return f["model/parameters"][()], {k: f["optimizer"][k][()] for k in f["optimizer"].keys()}


def trace(out, name):
    with h5py.File(os.path.join(out, f"{name}_trace.h5"), "r") as f:
        return {k: f["steps"][k][()] for k in f["steps"].keys() if k != "wall_time"}


def ok(r, what):
    hptest.check(r.returncode == 0, what, f"rc {r.returncode}\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}")
    return r.returncode == 0


out = os.path.join(a.work, "runs")
r2 = mpirun(2, name="two", steps=2 * N, out=out)
r1 = mpirun(1, name="one", steps=2 * N, out=out)
rd = mpirun(1, "dataset.seed=2", name="other_data", steps=2 * N, out=out)
if ok(r2, "2 processes train the xor deck") and ok(r1, "1 process trains it") and ok(rd, "1 process, other data"):
    hptest.check(r2.stdout.count("\nsummary\n") == 1, "only rank 0 prints (one summary)", r2.stdout[-800:])
    hptest.check("processes (data-parallel)" in r2.stdout and "identical, checksum" in r2.stdout,
                 "the summary reports 2 processes whose parameters are identical", r2.stdout[-1500:])
    p2, _ = params(out, "two", 2 * N)
    p1, _ = params(out, "one", 2 * N)
    pd, _ = params(out, "other_data", 2 * N)
    tol = dict(rtol=1e-4, atol=1e-5)
    hptest.check(np.allclose(p2, p1, **tol), "2 processes end where 1 process training the same global batch ends",
                 f"max |diff| {np.max(np.abs(p2 - p1)):.3g}")
    hptest.check(not np.allclose(pd, p1, **tol), "... and the tolerance separates a run on other data",
                 f"max |diff| {np.max(np.abs(pd - p1)):.3g}")
    t2, t1 = trace(out, "two"), trace(out, "one")
    hptest.check(np.allclose(t2["loss"], t1["loss"], rtol=1e-4, atol=1e-6),
                 "the minibatch loss of every step is the global batch's (equal to 1 process)",
                 f"max |diff| {np.max(np.abs(t2['loss'] - t1['loss'])):.3g}")
    hptest.check(np.allclose(t2["val_loss"], t1["val_loss"], rtol=1e-4, atol=1e-6, equal_nan=True),
                 "the validation loss equals 1 process's")

    # Restart on 2 processes: N steps, then continue to 2N; bit-identical to the straight run.
    rs = mpirun(2, name="split", steps=N, out=out)
    rr = mpirun(2, "run.restart=auto", name="split", steps=2 * N, out=out)
    if ok(rs, "2 processes: the first half") and ok(rr, "2 processes: restart = auto to the end"):
        hptest.check(f"at step {N}" in rr.stdout, f"the restart continues from step {N}", rr.stdout[-800:])
        pr, optr = params(out, "split", 2 * N)
        p2s, opt2 = params(out, "two", 2 * N)
        hptest.check(np.array_equal(pr, p2s) and all(np.array_equal(optr[k], opt2[k]) for k in opt2),
                     "parameters and optimizer state after the restart equal the straight run's, bit for bit")
        ts, tr = trace(out, "two"), trace(out, "split")
        diff = [k for k in ts if not np.array_equal(ts[k], tr[k], equal_nan=True)]
        hptest.check(not diff, "the restarted trace equals the straight one (all columns but wall time)", str(diff))

        # The same checkpoint on 3 processes: refused, naming both counts.
        r3 = mpirun(3, f"run.restart={os.path.join(out, f'split_ckpt_{N:010d}.h5')}", name="three", steps=2 * N,
                    out=out)
        hptest.check(r3.returncode == 2 and "2 process" in r3.stderr and "this run has 3" in r3.stderr,
                     "a 2-process checkpoint is refused on 3 processes (exit 2)",
                     f"rc {r3.returncode}\n{r3.stderr[-1000:]}")
        hptest.check(r3.stderr.count("input error") == 1, "... with one message (rank 0's)", r3.stderr[-1000:])

# Hybrid training on 2 processes (the digits deck, entering a predict block at every decision it can): every
# checkpoint checks that the processes hold identical parameters, so their decisions were the same; and they are the
# decisions one process makes on the same global batches (phases, backward passes, verdicts), with the same losses
# within float rounding.
hybrid = ["run.print_every=1000", "train.steps=300", "train.val_every=50", "hybrid.warmup=60", "predict.confidence=1e6",
          "predict.min_coverage=0", "predict.min_scored=0", "forecast.every=10", "dynamics.bptt=8", "run.threads=1",
          "checkpoint.every=25", "checkpoint.keep=20"]


def mpirun_digits(n, out):
    cmd = ["mpirun", "-np", str(n), "--oversubscribe", "--allow-run-as-root", a.hpt, "-i",
           hptest.deck_path(a.root, "digits.ini")]
    for s in hybrid + [f"output.dir={out}"]:
        cmd += ["--set", s]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


h2 = mpirun_digits(2, os.path.join(a.work, "hybrid2"))
h1 = mpirun_digits(1, os.path.join(a.work, "hybrid1"))
if ok(h2, "hybrid training on 2 processes") and ok(h1, "hybrid training on 1 process"):
    hptest.check("identical, checksum" in h2.stdout, "hybrid, 2 processes: identical parameters at every checkpoint",
                 h2.stdout[-1500:])
    u2, u1 = trace(os.path.join(a.work, "hybrid2"), "digits"), trace(os.path.join(a.work, "hybrid1"), "digits")
    hptest.check(int((u1["phase"] == 2).sum()) > 20 and int((u1["verdict"] != 0).sum()) > 0,
                 "the hybrid run makes predicted steps and verdicts", str(np.unique(u1["phase"])))
    same = [k for k in ("phase", "backward", "verdict", "block_horizon") if np.array_equal(u2[k], u1[k])]
    hptest.check(len(same) == 4, "hybrid: 2 processes decide as 1 process (phase, backward, verdict, horizon)",
                 str(same))
    hptest.check(np.allclose(u2["loss"], u1["loss"], rtol=1e-4, atol=1e-6, equal_nan=True),
                 "hybrid: the losses equal 1 process's within float rounding")

# The Slurm job for several nodes (run/slurm/mpi.sbatch) without Slurm: a stand-in srun starts 2 processes with mpirun,
# a stand-in scontrol records the requeue. SIGUSR1 to the batch shell reaches every process, which checkpoint at the
# same step and exit 0; the job requeues itself, and the requeued job continues on 2 processes from the checkpoint.
bin_dir = os.path.join(a.work, "bin")
os.makedirs(bin_dir)
with open(os.path.join(bin_dir, "srun"), "w") as f:
    f.write('#!/bin/sh\nshift\nexec mpirun -np 2 --oversubscribe --allow-run-as-root "$@"\n')  # drops --kill-on-bad-exit
scontrol_log = os.path.join(a.work, "scontrol.log")
with open(os.path.join(bin_dir, "scontrol"), "w") as f:
    f.write(f'#!/bin/sh\necho "$@" >> "{scontrol_log}"\n')
for name in ("srun", "scontrol"):
    os.chmod(os.path.join(bin_dir, name), 0o755)
job_env = dict(os.environ, HPT_BIN=os.path.abspath(a.hpt), SLURM_CPUS_PER_TASK="1", SLURM_JOB_ID="5151",
               PATH=bin_dir + ":" + os.environ["PATH"])
job_out = os.path.join(a.work, "slurm")
job = ["bash", os.path.join(os.path.abspath(a.root), "run", "slurm", "mpi.sbatch"), os.path.abspath(deck), "--set", f"output.dir={job_out}",
       "--set", "train.batch_size=60", "--set", "train.val_every=1000", "--set", "checkpoint.keep=10"]
p = subprocess.Popen(job + ["--set", "train.steps=10000000", "--set", "run.print_every=50"], cwd=a.work, env=job_env,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
line = p.stdout.readline()
while line and not line.startswith("step "):
    line = p.stdout.readline()
hptest.check(bool(line), "mpi.sbatch: the job's training is under way")
p.send_signal(signal.SIGUSR1)  # to the batch shell only, as --signal=B: does
try:
    stdout, stderr = p.communicate(timeout=120)
except subprocess.TimeoutExpired:
    p.kill()
    stdout, stderr = p.communicate()
stopped = [x for x in os.listdir(job_out) if "_ckpt_" in x] if os.path.isdir(job_out) else []
hptest.check(p.returncode == 0 and "stopped by signal" in stdout and stopped,
             "mpi.sbatch: SIGUSR1 stops both processes with a checkpoint, exit 0", f"rc {p.returncode}\n{stderr[-800:]}")
requeued = open(scontrol_log).read().split() if os.path.exists(scontrol_log) else []
hptest.check(requeued == ["requeue", "5151"], "mpi.sbatch: the job requeues itself", str(requeued))
if stopped:
    step = max(int(x.split("_ckpt_")[1].split(".")[0]) for x in os.listdir(job_out) if "_ckpt_" in x)
    r = subprocess.run(job + ["--set", f"train.steps={step + 20}"], cwd=a.work, env=job_env, capture_output=True,
                       text=True, timeout=300)
    hptest.check(r.returncode == 0 and f"at step {step}" in r.stdout and "processes (data-parallel)" in r.stdout,
                 "mpi.sbatch: the requeued job continues on 2 processes from the checkpoint",
                 r.stdout[-800:] + r.stderr[-800:])

# Refused before any work (no output folder): a batch that does not split, a mode that does not run data-parallel.
for what, sets, key in [("a global batch of 61 rows on 2 processes", ["train.batch_size=61"], "train.batch_size"),
                        ("run.mode = compare on 2 processes", ["run.mode=compare"], "run.mode"),
                        ("run.mode = rollout on 2 processes", ["run.mode=rollout"], "run.mode")]:
    bad_out = os.path.join(a.work, "refused")
    r = mpirun(2, *sets, name="bad", steps=N, out=bad_out)
    hptest.check(r.returncode == 2 and key in r.stderr and not os.path.exists(bad_out),
                 f"{what}: refused with exit 2, naming {key}, nothing written",
                 f"rc {r.returncode}\n{r.stderr[-800:]}")

hptest.finish()
