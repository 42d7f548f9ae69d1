"""Data-parallel training over MPI (docs/mpi.md), on 2 processes of the xor deck: the parameters and decisions are
identical on every process (each process's digest, stored in the trace, against FNV-1a computed here from the
checkpoint and the trace); the run equals, within float rounding, one process training the same global batch (and a
run on other data does not), validation included (sharded over the processes); the communication counted in the
trace is exactly what the steps, validations and checks the trace records need, with the gradient allreduce's bytes
computed here from the model's size; a restart on 2 processes continues bit for bit; a checkpoint of 2 processes
continues on 1 and on 3 (equal within float rounding), and is refused on 7, whose shards of the global batch would
be unequal (exit 2, before any work), as are the modes that do not run data-parallel.
A short hybrid run on the digits deck makes the same decisions on 2 processes as on 1, and the same on both
processes; a comparison on 2 processes reports each arm's communication, where hybrid's real steps alone make gradient
allreduces. The Slurm job run/slurm/mpi.sbatch (stand-in srun and scontrol) stops on SIGUSR1 with a checkpoint,
requeues, and continues. run.mode = forecast, divided by run, writes on 2 processes the same file as on 1, bit for
bit, with and without the shared ensemble, for 5 runs (blocks of 2 and 3) and for 1 run.
Needs a binary built with HPT_ENABLE_MPI; against any other it exits 77, which ctest reports as skipped."""
import configparser
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


def fnv1a(data, h=14695981039346656037):
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def data_parallel(path):
    with h5py.File(path, "r") as f:
        g = f["data_parallel"]
        return {k: g.attrs[k] for k in g.attrs}


def deck_of(path):
    with h5py.File(path, "r") as f:
        c = configparser.ConfigParser()
        c.read_string(f.attrs["hpt_deck"].decode() if isinstance(f.attrs["hpt_deck"], bytes) else f.attrs["hpt_deck"])
        return c, f.attrs["hpt_precision"]


def gradient_bytes_per_step(path):
    """Bytes of one gradient allreduce: every weight and bias of the MLP in model.layers, in the working precision."""
    c, precision = deck_of(path)
    sizes = [int(x) for x in c["model"]["layers"].replace("-", ",").split(",")]
    params = sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:]))
    return params * (4 if precision in ("float", b"float") else 8), params


def decisions_digest(t):
    """FNV-1a over (phase, backward, verdict, block_horizon) of every step, int64 little-endian (docs/mpi.md)."""
    rows = np.stack([t["phase"], t["backward"], t["verdict"], t["block_horizon"]], axis=1).astype("<i8")
    return fnv1a(rows.tobytes())


def events(path):
    with h5py.File(path, "r") as f:
        return f["events"]["step"][()], f["events"]["kind"][()], f["events"]["value"][()]


def expected_traffic(path, ranks):
    """The collectives a run needs, counted from its trace: (calls, bytes) per traffic kind."""
    t = trace(os.path.dirname(path), os.path.basename(path)[:-len("_trace.h5")])
    c, _ = deck_of(path)
    grad, _ = gradient_bytes_per_step(path)
    steps, val_every, last = t["step"], int(c["train"]["val_every"]), int(t["step"][-1])
    ev_step, kind, value = events(path)
    real = int(t["backward"].sum())
    losses = int(np.isfinite(t["loss"]).sum())  # each step whose minibatch was evaluated averages its loss
    validated = (steps % val_every == 0) | (steps == last)
    # A validation before a rollback or a critical divergence is done again after the restore.
    restored = set(ev_step[kind == 10]) | set(steps[t["verdict"] < 0])
    validations = int(validated.sum()) + int(sum(1 for s in steps[validated] if s in restored))
    # The probe set is evaluated at each block's start and at each verdict (a rollback for a non-finite loss has none).
    probes = int((kind == 6).sum() + (kind == 7).sum() + ((kind == 8) & np.isfinite(value)).sum())
    checks = int((kind == 2).sum())
    return {"gradient": (real, real * grad), "loss": (losses, 16 * losses),
            "evaluation": (validations + probes, 24 * (validations + probes)),
            "control": (len(steps) + checks, 8 * len(steps) + checks * 2 * ranks * 8)}


def check_traffic(path, ranks, what):
    dp = data_parallel(path)
    want = expected_traffic(path, ranks)
    got = {k: (int(dp[f"{k}_calls"]), int(dp[f"{k}_bytes"])) for k in want}
    hptest.check(got == want, f"{what}: the collectives counted are those its trace needs (calls, bytes per kind)",
                 f"counted {got}\nexpected {want}")
    hptest.check(int(dp["bytes"]) == sum(b for _, b in want.values()), f"{what}: the total bytes are their sum")
    return dp


def check_digests(path, t, ckpt, what):
    dp = data_parallel(path)
    own = [x & 0xFFFFFFFFFFFFFFFF for x in (int(v) for v in dp["parameter_checksums"])]
    dec = [x & 0xFFFFFFFFFFFFFFFF for x in (int(v) for v in dp["decision_checksums"])]
    with h5py.File(ckpt, "r") as f:
        params = f["model/parameters"][()]
    hptest.check(len(own) == int(dp["ranks"]) and len(set(own)) == 1 and own[0] == fnv1a(params.tobytes()),
                 f"{what}: every process's parameter digest equals FNV-1a of the final checkpoint's parameters",
                 f"{[hex(x) for x in own]} vs {fnv1a(params.tobytes()):#x}")
    hptest.check(len(set(dec)) == 1 and dec[0] == decisions_digest(t),
                 f"{what}: every process's decision digest equals that of the trace's decisions",
                 f"{[hex(x) for x in dec]} vs {decisions_digest(t):#x}")


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
    hptest.check("collectives of parameters and gradients" in r2.stdout and "host memory" in r2.stdout,
                 "the summary says where the collectives' buffers are (host memory in a CPU build)",
                 r2.stdout[-1500:])
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
    hptest.check(np.allclose(t2["val_loss"], t1["val_loss"], rtol=1e-4, atol=1e-6, equal_nan=True) and
                 np.allclose(t2["val_accuracy"], t1["val_accuracy"], rtol=1e-4, atol=1e-6, equal_nan=True),
                 "the validation loss and accuracy (each process evaluates its shard) equal 1 process's")

    # Every process's digests against FNV-1a computed here, and the communication against the trace.
    two_trace = os.path.join(out, "two_trace.h5")
    check_digests(two_trace, t2, os.path.join(out, f"two_ckpt_{2 * N:010d}.h5"), "2 processes")
    grad, n_params = gradient_bytes_per_step(two_trace)
    hptest.check(p2.size == n_params, "the model has the parameters counted from model.layers",
                 f"{p2.size} vs {n_params}")
    dp2 = check_traffic(two_trace, 2, "2 processes")
    hptest.check(int(dp2["gradient_bytes"]) == 2 * N * grad,
                 f"2 processes: gradient allreduce bytes = real steps x parameters x {grad // n_params} bytes",
                 str(dp2["gradient_bytes"]))
    hptest.check("communication: gradient" in r2.stdout and "communication: total" in r2.stdout,
                 "the summary reports the communication per kind", r2.stdout[-1500:])
    dp1 = data_parallel(os.path.join(out, "one_trace.h5"))
    hptest.check(int(dp1["ranks"]) == 1 and int(dp1["calls"]) == 0 and int(dp1["bytes"]) == 0,
                 "1 process: no collective, nothing counted", str(dp1))

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

        # The same checkpoint on another number of processes continues: the global batches are the same, only
        # the order of the sums changes (equal within float rounding).
        ck = os.path.join(out, f"split_ckpt_{N:010d}.h5")
        for n in (1, 3):
            rn = mpirun(n, f"run.restart={ck}", name=f"on{n}", steps=2 * N, out=out)
            if not ok(rn, f"the 2-process checkpoint continues on {n} process(es)"):
                continue
            hptest.check(f"at step {N}" in rn.stdout and f"written by 2 process(es), this run has {n}" in rn.stdout,
                         f"... from step {N}, saying that the number of processes changed", rn.stdout[-1500:])
            pn, _ = params(out, f"on{n}", 2 * N)
            hptest.check(np.allclose(pn, p2s, **tol), f"... and ends where the straight 2-process run ends ({n})",
                         f"max |diff| {np.max(np.abs(pn - p2s)):.3g}")
            dpn = data_parallel(os.path.join(out, f"on{n}_trace.h5"))
            hptest.check(int(dpn["ranks"]) == n and int(dpn["since_step"]) == N,
                         f"... its trace records {n} process(es) since step {N}", str(dpn))
        # 7 processes cannot split the global batch of 60 rows: refused before any work, nothing written.
        before = sorted(os.listdir(out))
        r7 = mpirun(7, f"run.restart={ck}", name="seven", steps=2 * N, out=out)
        hptest.check(r7.returncode == 2 and "train.batch_size = 60 on 7 processes" in r7.stderr and
                     sorted(os.listdir(out)) == before,
                     "the 2-process checkpoint on 7 processes (60 rows do not split): exit 2, nothing written",
                     f"rc {r7.returncode}\n{r7.stderr[-1000:]}")
        hptest.check(r7.stderr.count("input error") == 1, "... with one message (rank 0's)", r7.stderr[-1000:])

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
    h2_trace = os.path.join(a.work, "hybrid2", "digits_trace.h5")
    check_digests(h2_trace, u2, os.path.join(a.work, "hybrid2", "digits_ckpt_0000000300.h5"), "hybrid, 2 processes")
    check_traffic(h2_trace, 2, "hybrid, 2 processes")

# A comparison on 2 processes (the same short hybrid deck): each arm's communication in the table and the file. Only
# real steps make a gradient allreduce, so hybrid's bytes are its own real steps' and below full's.
cmp_out = os.path.join(a.work, "compare2")
cmp = subprocess.run(["mpirun", "-np", "2", "--oversubscribe", "--allow-run-as-root", a.hpt, "-i",
                      hptest.deck_path(a.root, "digits.ini"), "--set", "run.mode=compare", "--set", f"output.dir={cmp_out}"]
                     + [x for h in hybrid for x in ("--set", h)], capture_output=True, text=True, timeout=900)
if ok(cmp, "a comparison on 2 processes"):
    hptest.check("communicated MB" in cmp.stdout and "communication s" in cmp.stdout,
                 "the comparison's table has each arm's communicated MB and seconds", cmp.stdout[-2500:])
    with h5py.File(os.path.join(cmp_out, "digits_compare.h5"), "r") as f:
        arms = {arm: {k: f["arms"][arm].attrs[k] for k in f["arms"][arm].attrs} for arm in ("full", "hybrid")}
    full_trace = os.path.join(cmp_out, "digits_s1_full_trace.h5")
    hyb_trace = os.path.join(cmp_out, "digits_s1_hybrid_trace.h5")
    grad, _ = gradient_bytes_per_step(full_trace)
    for arm, path in (("full", full_trace), ("hybrid", hyb_trace)):
        g = arms[arm]
        hptest.check(int(g["comm_gradient_bytes"]) == int(g["backward_total"]) * grad,
                     f"compare, {arm}: gradient allreduce bytes = its real steps x parameters x element size",
                     f"{g['comm_gradient_bytes']} vs {int(g['backward_total'])} x {grad}")
        dp = check_traffic(path, 2, f"compare, {arm}")
        hptest.check(all(int(dp[k]) == int(g["comm_" + k]) for k in ("bytes", "calls", "gradient_bytes", "loss_bytes",
                                                                         "evaluation_bytes", "control_bytes")),
                     f"compare, {arm}: the comparison file's counts are its trace's")
    hptest.check(int(arms["hybrid"]["backward_total"]) < int(arms["full"]["backward_total"]) and
                 int(arms["hybrid"]["comm_bytes"]) < int(arms["full"]["comm_bytes"]),
                 "compare: hybrid communicates fewer bytes than full (no gradient allreduce on predicted steps)",
                 f"hybrid {arms['hybrid']['comm_bytes']}, full {arms['full']['comm_bytes']}")
    # Continued with run.restart = auto: both processes read every finished arm back, counters included.
    again = subprocess.run(cmp.args + ["--set", "run.restart=auto"], capture_output=True, text=True, timeout=600)
    table = lambda out: out[out.index("\ncompare ("):out.index("\nseed ")]
    if ok(again, "the 2-process comparison continued with run.restart = auto"):
        hptest.check(again.stdout.count("finished earlier: read from") == 4 and "=== compare" in again.stdout and
                     table(again.stdout) == table(cmp.stdout),
                     "compare, continued: every arm read back, the same table (communication columns included)",
                     again.stdout[-2500:])

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

# run.mode = forecast divided by run: 1 and 2 processes write the same file, bit for bit, on a sweep of 5 runs of 2
# problems (an odd number: blocks of 2 and 3 runs) with the learned model fine-tuned online and the median stop rule
# (the parts that pool or compare runs), judged against the best other run's interval, with the shared ensemble
# (trained online on every process, its rollouts divided) judging the stop list, and on a single run (the second
# process forecasts none).
def curve_file(path, ids, steps):
    with h5py.File(os.path.join(a.root, "tests", "data", "curves", "torch-curves.h5"), "r") as src, \
            h5py.File(path, "w") as dst:
        for run_id in ids:
            s, d = src["runs"][run_id], dst.create_group("runs/" + run_id)
            d.attrs["group"] = s.attrs["group"]
            for k in ("step", "loss", "lr", "grad_norm"):
                d[k] = s[k][:steps]
            keep = s["val_step"][()] <= steps
            d["val_step"], d["val_loss"] = s["val_step"][()][keep], s["val_loss"][()][keep]


def forecast(n, curves, out, *sets):
    cmd = ["mpirun", "-np", str(n), "--oversubscribe", "--allow-run-as-root", "-x", "OMP_PROC_BIND=false",
           "-x", "OMP_WAIT_POLICY=passive", a.hpt, "-i", hptest.deck_path(a.root, "forecast.ini")]
    for s in [f"forecast.input={curves}", f"output.dir={out}", "output.name=fc", "run.threads=1",
              "forecast.horizons=10,50", "forecast.every=10"] + list(sets):
        cmd += ["--set", s]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


# The root attributes that hold wall times and rates, or the deck (whose output.dir differs).
TIMED = {"seconds", "run_steps_per_second", "rollout_member_steps_per_second", "rollout_gflops", "gemm_gflops",
         "hpt_deck"}


def contents(path):
    """Every dataset (dtype, shape, bytes) and attribute of an HDF5 file but the timed ones, by name."""
    found = {}

    def add(name, o):
        for k, v in o.attrs.items():
            if not (o.name == "/" and k in TIMED):
                found[f"{name}@{k}"] = np.asarray(v).tobytes()
        if isinstance(o, h5py.Dataset):
            found[name] = (o.dtype.str, o.shape, o[()].tobytes())

    with h5py.File(path, "r") as f:
        add("", f)
        f.visititems(add)
    return found


sweep5 = os.path.join(a.work, "sweep5.h5")
curve_file(sweep5, ["cnn-shapes_adamw_constant_lr0_s0", "cnn-shapes_adamw_constant_lr1_s0",
                    "cnn-shapes_sgd_cosine_lr0_s1", "mlp-spirals_adamw_cosine_lr0_s0",
                    "mlp-spirals_sgd_constant_lr1_s1"], 300)
single = os.path.join(a.work, "single.h5")
curve_file(single, ["mlp-spirals_adamw_cosine_lr0_s0"], 300)
ensemble = ["forecast.ensemble=on", "forecast.stop_by=hpt", "forecast.scenarios=8", "dynamics.members=2",
            "dynamics.hidden=16", "dynamics.stochastic=4"]
for tag, what, curves, sets in [
        ("learned", "5 runs of 2 problems", sweep5,
         ["forecast.ensemble=off", "forecast.finetune=on", "forecast.finetune_every=50", "forecast.stop_rule=median"]),
        ("interval", "5 runs against the best other run's interval", sweep5,
         ["forecast.ensemble=off", "forecast.stop_against=interval"]),
        ("ensemble", "5 runs, the ensemble", sweep5, ensemble),
        ("single", "1 run, the ensemble", single, ensemble)]:
    outs = {n: os.path.join(a.work, f"forecast{n}_{tag}") for n in (1, 2)}
    runs = {n: forecast(n, curves, outs[n], *sets) for n in (1, 2)}
    if not (ok(runs[1], f"forecast, {what}: 1 process") and ok(runs[2], f"forecast, {what}: 2 processes")):
        continue
    hptest.check(runs[2].stdout.count("stop list at") == 1 and "processes: 2, each forecasts a block" in runs[2].stdout,
                 f"forecast, {what}: rank 0 alone prints, and says how the runs were divided", runs[2].stdout[-1500:])
    hptest.check(sorted(os.listdir(outs[2])) == ["fc.h5"], f"forecast, {what}: 2 processes write one file",
                 str(os.listdir(outs[2])))
    one, two = contents(os.path.join(outs[1], "fc.h5")), contents(os.path.join(outs[2], "fc.h5"))
    differ = sorted(k for k in set(one) | set(two) if one.get(k) != two.get(k))
    hptest.check(len(one) > 50 and "forecasts/run" in one and "stop/run" in one and not differ,
                 f"forecast, {what}: every dataset and attribute of 2 processes (but wall times and rates) equals "
                 f"1 process's, bit for bit ({len(one)} of them)", f"differ: {differ}")

# Refused before any work (no output folder): a batch that does not split, a mode that does not run data-parallel.
for what, sets, key in [("a global batch of 61 rows on 2 processes", ["train.batch_size=61"], "train.batch_size"),
                        ("run.mode = forecast without forecast.input on 2 processes", ["run.mode=forecast"],
                         "forecast.input"),
                        ("run.mode = rollout on 2 processes", ["run.mode=rollout"], "run.mode")]:
    bad_out = os.path.join(a.work, "refused")
    r = mpirun(2, *sets, name="bad", steps=N, out=bad_out)
    hptest.check(r.returncode == 2 and key in r.stderr and not os.path.exists(bad_out),
                 f"{what}: refused with exit 2, naming {key}, nothing written",
                 f"rc {r.returncode}\n{r.stderr[-800:]}")

hptest.finish()
