"""The Slurm scripts (run/slurm/) without Slurm: every script passes `bash -n` and shellcheck (the other
bash scripts of run/ too, at warning level); the CPU job forwards SIGUSR1 to hpt, which checkpoints
and stops, and requeues itself (a stand-in scontrol records the call), SIGTERM stops without requeue,
and the requeued job continues from the checkpoint; the sweep's array tasks (SLURM_ARRAY_TASK_ID
set here) and its forecast step write the curve files and the forecast output; the live sweep's
array task runs example_train.py, whose curve file (run/log_curve.py) parses, and which stops at once
when hpt's <run>.stop file exists."""
import csv
import os
import shutil
import signal
import subprocess
import sys
import time

from hptest import args, check, deck_path, finish, h5

a = args()
slurm_dir = os.path.join(a.root, "run", "slurm")
xor = deck_path(a.root, "xor.ini")


def bash_scripts(folder):
    found = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not os.path.isfile(path) or name.endswith(".md"):
            continue
        with open(path, errors="replace") as f:
            head = f.read(200)
        if head.startswith("#!") and "bash" in head.splitlines()[0] or "shellcheck shell=bash" in head:
            found.append(path)
    return found


# --- bash -n and shellcheck
shellcheck = shutil.which("shellcheck")
check(shellcheck is not None, "shellcheck is installed (run/setup installs Debian's package)")
slurm_scripts = bash_scripts(slurm_dir)
check(len(slurm_scripts) >= 5, "run/slurm holds the job scripts and their shared steps", str(slurm_scripts))
other_scripts = bash_scripts(os.path.join(a.root, "run")) + bash_scripts(os.path.join(a.root, "run", "device"))
for path, severity in [(p, "style") for p in slurm_scripts] + [(p, "warning") for p in other_scripts]:
    rel = os.path.relpath(path, a.root)
    p = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
    check(p.returncode == 0, f"bash -n {rel}", p.stderr)
    if shellcheck:
        p = subprocess.run([shellcheck, "-x", "-S", severity, rel], cwd=a.root, capture_output=True, text=True)
        check(p.returncode == 0, f"shellcheck -S {severity} {rel}", p.stdout[-2000:])

# --- the live sweep's array task: example_train.py logs through run/log_curve.py and obeys <run>.stop
live_out = os.path.join(a.work, "live-sweep")
live_env = dict(os.environ, HPT_SWEEP_LRS="0.05 0.5", HPT_SWEEP_OUT=live_out, SLURM_ARRAY_JOB_ID="777",
                HPT_SWEEP_TRAIN=f"{sys.executable} {os.path.join(slurm_dir, 'example_train.py')}")


def live_task(task):
    return subprocess.run(["bash", os.path.join(slurm_dir, "live-sweep-array.sbatch"), "--steps", "120"],
                          cwd=a.work, env=dict(live_env, SLURM_ARRAY_TASK_ID=str(task)), capture_output=True,
                          text=True, timeout=60)


def curve_rows(path):
    if not os.path.isfile(path):
        return []
    with open(path, newline="") as fh:
        return list(csv.reader(fh))


def parse_row(x):
    """(step, loss, lr, val_loss or None, job, final_step) of a curve row, or None if it does not
    parse."""
    try:
        row = (int(x[0]), float(x[1]), float(x[2]), float(x[3]) if x[3] else None, x[4], int(x[5]))
    except (ValueError, IndexError):
        return None
    return row if len(x) == 6 else None


r = live_task(0)
check(r.returncode == 0, "live sweep task 0 runs example_train.py", r.stdout[-600:] + r.stderr[-600:])
rows = curve_rows(os.path.join(live_out, "live", "lr_0.05.csv"))
check(rows[:1] == [["step", "loss", "lr", "val_loss", "job", "final_step"]], "the curve file's header",
      str(rows[:1]))
parsed = [parse_row(x) for x in rows[1:]]
check(parsed and None not in parsed, "every row of the curve file parses", str(rows[1:4]))
parsed = [x for x in parsed if x]
check([x[0] for x in parsed] == list(range(1, 121)), "one row per step, steps 1 to 120")
check(all(0 < x[1] < float("inf") and x[2] > 0 for x in parsed), "finite positive losses and rates")
check([x[0] for x in parsed if x[3] is not None] == [50, 100, 120], "the validation loss at steps 50, 100, 120")
check({x[4] for x in parsed} == {"777_0"}, "the job column holds the array task's job id",
      str({x[4] for x in parsed}))
check({x[5] for x in parsed} == {120}, "the final_step column holds the planned last step",
      str({x[5] for x in parsed}))
os.makedirs(os.path.join(live_out, "live"), exist_ok=True)
open(os.path.join(live_out, "live", "lr_0.5.stop"), "w").close()
r = live_task(1)
check(r.returncode == 0 and "stopped by hpt" in r.stdout, "a run whose .stop file exists stops and exits 0",
      r.stdout[-600:] + r.stderr[-600:])
rows = curve_rows(os.path.join(live_out, "live", "lr_0.5.csv"))
check(len(rows) == 1, "the stopped run stops at its first check (header only)", str(rows[:3]))

# --- the CPU job: signal forwarding, requeue and restart, with a stand-in scontrol
bin_dir = os.path.join(a.work, "bin")
os.makedirs(bin_dir)
scontrol_log = os.path.join(a.work, "scontrol.log")
with open(os.path.join(bin_dir, "scontrol"), "w") as f:
    f.write(f'#!/bin/sh\necho "$@" >> "{scontrol_log}"\n')
os.chmod(os.path.join(bin_dir, "scontrol"), 0o755)
job_env = dict(os.environ, HPT_BIN=a.hpt, SLURM_CPUS_PER_TASK="2", PATH=bin_dir + ":" + os.environ["PATH"])


def scontrol_calls():
    if not os.path.exists(scontrol_log):
        return []
    with open(scontrol_log) as f:
        return f.read().splitlines()


def checkpoint_step(folder):
    steps = [int(f.rsplit("_", 1)[1].split(".")[0]) for f in os.listdir(folder)
             if "_ckpt_" in f and f.endswith(".h5")]
    return max(steps) if steps else None


for sig, job_id, requeues in ((signal.SIGUSR1, "4242", True), (signal.SIGTERM, "4343", False)):
    out = os.path.join(a.work, "cpu_" + sig.name)
    cmd = ["bash", os.path.join(slurm_dir, "cpu.sbatch"), xor, "--set", f"output.dir={out}",
           "--set", "train.steps=10000000", "--set", "run.print_every=50", "--set", "train.val_every=1000"]
    calls_before = len(scontrol_calls())
    p = subprocess.Popen(cmd, cwd=a.work, env=dict(job_env, SLURM_JOB_ID=job_id), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    started = False
    t0 = time.time()
    while time.time() - t0 < 120:
        line = p.stdout.readline()
        if not line or line.startswith("step "):
            started = bool(line)
            break
    check(started, f"{sig.name}: the job's training is under way")
    p.send_signal(sig)  # to the batch shell only, as --signal=B: does
    try:
        stdout, stderr = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        stdout, stderr = p.communicate()
    check(p.returncode == 0, f"{sig.name}: the job exits 0", f"rc {p.returncode}: {stderr[-600:]}")
    check("stopped by signal" in stdout, f"{sig.name}: hpt got the signal and stopped", stdout[-600:])
    step = checkpoint_step(out) if os.path.isdir(out) else None
    check(step is not None, f"{sig.name}: hpt wrote a checkpoint")
    calls = scontrol_calls()[calls_before:]
    if requeues:
        check(calls == [f"requeue {job_id}"], f"{sig.name}: the job requeues itself", str(calls))
        if step is not None:
            # The requeued job: same script, continues from the checkpoint and finishes.
            r = subprocess.run(cmd[:3] + ["--set", f"output.dir={out}", "--set", f"train.steps={step + 20}",
                                          "--set", "run.print_every=10"],
                               cwd=a.work, env=dict(job_env, SLURM_JOB_ID=job_id, SLURM_RESTART_COUNT="1"),
                               capture_output=True, text=True, timeout=120)
            check(r.returncode == 0 and f"at step {step}" in r.stdout,
                  "the requeued job continues from the checkpoint", r.stdout[-600:] + r.stderr[-400:])
            check(len(scontrol_calls()) == calls_before + 1, "a job that finishes does not requeue")
    else:
        check(calls == [], f"{sig.name}: no requeue (scancel or preemption)", str(calls))

# --- the learning-rate sweep: array tasks, then the forecast step
sweep = os.path.join(a.work, "sweep")
rates = ["0.003", "0.01", "0.03"]
sweep_env = dict(job_env, HPT_SWEEP_LRS=" ".join(rates), HPT_SWEEP_OUT=sweep)
short = ["--set", "train.steps=200", "--set", "train.val_every=100", "--set", "run.print_every=1000"]
for task in range(len(rates)):
    r = subprocess.run(["bash", os.path.join(slurm_dir, "sweep-array.sbatch"), xor] + short, cwd=a.work,
                       env=dict(sweep_env, SLURM_ARRAY_TASK_ID=str(task)), capture_output=True, text=True,
                       timeout=300)
    check(r.returncode == 0, f"sweep task {task} (lr {rates[task]}) succeeds", r.stdout[-600:] + r.stderr[-600:])
    check(os.path.isfile(os.path.join(sweep, f"lr_{rates[task]}", f"lr_{rates[task]}_trace.h5")),
          f"sweep task {task} writes its own output folder")
r = subprocess.run(["bash", os.path.join(slurm_dir, "sweep-array.sbatch"), xor] + short, cwd=a.work,
                   env=dict(sweep_env, SLURM_ARRAY_TASK_ID="3"), capture_output=True, text=True, timeout=60)
check(r.returncode == 2 and "3 rates" in r.stderr, "a task past the list of rates is refused", r.stderr[-400:])

small = ["forecast.horizons=10,50", "forecast.every=10", "forecast.scenarios=8", "dynamics.members=2",
         "dynamics.hidden=16", "dynamics.stochastic=4"]
forecast_sets = [x for s in small for x in ("--set", s)]
r = subprocess.run(["bash", os.path.join(slurm_dir, "sweep-forecast.sbatch")] + forecast_sets,
                   cwd=a.work, env=sweep_env, capture_output=True, text=True, timeout=300)
check(r.returncode == 0, "the sweep's forecast step succeeds", r.stdout[-1500:] + r.stderr[-600:])
f5 = h5()
curves = os.path.join(sweep, "curves.h5")
check(os.path.isfile(curves) and os.path.isfile(os.path.join(sweep, "curves.csv")), "the curve files are written")
if os.path.isfile(curves):
    with f5.File(curves, "r") as f:
        check(sorted(f["runs"].keys()) == sorted(f"lr_{x}" for x in rates), "curves.h5 holds one run per rate",
              str(list(f["runs"].keys())))
forecast = os.path.join(sweep, "forecast.h5")
check(os.path.isfile(forecast), "the forecast output is written")
if os.path.isfile(forecast):
    with f5.File(forecast, "r") as f:
        kind = f.attrs["hpt_kind"]
        check(kind in ("forecast", b"forecast"), "the output is a forecast file", str(kind))
        check(f["forecasts/run"].shape[0] > 0, "forecast rows written")
finish()
