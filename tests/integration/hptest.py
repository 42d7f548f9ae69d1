"""Shared helpers of the integration tests: argument parsing, running the hpt binary, checks."""
import argparse
import os
import shutil
import subprocess
import sys

FAILURES = []


def args():
    p = argparse.ArgumentParser()
    p.add_argument("--hpt", required=True)
    p.add_argument("--root", required=True)
    p.add_argument("--work", required=True)
    a = p.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    return a


def run(hpt, deck, *sets, cwd=None, env=None, timeout=600, extra=()):
    cmd = [hpt, "-i", deck] + [x for s in sets for x in ("--set", s)] + list(extra)
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(cmd, cwd=cwd, env=e, capture_output=True, text=True, timeout=timeout)


def check(cond, what, detail=""):
    status = "ok  " if cond else "FAIL"
    print(f"[{status}] {what}" + (f"\n       {detail}" if (detail and not cond) else ""))
    if not cond:
        FAILURES.append(what)


def finish():
    n = len(FAILURES)
    print(f"{'all checks passed' if n == 0 else str(n) + ' check(s) failed: ' + ', '.join(FAILURES)}")
    sys.exit(1 if n else 0)


def h5():
    import h5py  # Debian's python3-h5py (installed by run/setup)
    return h5py


def deck_path(root, name):
    return os.path.join(root, "inputs", name)


def short_hybrid_sets(steps):
    """Deck settings of a short hybrid run on the digits reference deck that enters a predict block at every decision
    the forecaster can make, so a test sees many blocks."""
    return ["run.print_every=1000", f"train.steps={steps}", "train.val_every=50", "hybrid.warmup=60",
            "predict.confidence=1e6", "predict.min_coverage=0", "predict.min_scored=0", "forecast.every=10",
            "dynamics.bptt=8"]


def first_step_inside_block(cols, phase=2):
    """The first step followed by another step of the same predict block (None when there is none)."""
    for i, s in enumerate(cols["step"][:-1]):
        if cols["phase"][i] == phase and cols["phase"][i + 1] == phase:
            return int(s)
    return None


def check_restart_equality(a, deck, sets, ck, read_trace, where, tag=""):
    """A run checkpointing at step `ck` and killed just after that checkpoint, then restarted with run.restart = auto,
    writes the same trace (every column but wall time) as an uninterrupted run. read_trace(dir) -> (columns, events).
    Returns the uninterrupted run's columns."""
    import numpy as np
    import signal
    sets = list(sets) + [f"checkpoint.every={ck}"]
    straight = os.path.join(a.work, f"straight{where}")
    run(a.hpt, deck, *sets, f"output.dir={straight}")
    scols, _ = read_trace(straight)
    out = os.path.join(a.work, f"restart{where}")
    r = run(a.hpt, deck, *sets, f"output.dir={out}", env={"HPT_CRASH_AT": f"checkpoint_written:{ck}"})
    check(r.returncode == -signal.SIGKILL, f"{tag}the run was killed after the checkpoint of step {ck}",
          f"rc {r.returncode}")
    r = run(a.hpt, deck, *sets, f"output.dir={out}", "run.restart=auto")
    check(r.returncode == 0 and f"at step {ck}" in r.stdout, f"{tag}restart = auto continues from step {ck}",
          r.stdout[-500:] + r.stderr[-500:])
    rcols, _ = read_trace(out)
    diff = [k for k in scols if k != "wall_time" and not np.array_equal(scols[k], rcols[k], equal_nan=True)]
    check(not diff, f"{tag}the restarted trace equals the uninterrupted one (all columns but wall time)", str(diff))
    return scols
