"""SIGTERM and SIGUSR1 (batch schedulers' warnings) make a training run write a checkpoint at the next step
boundary and stop cleanly; run.restart=auto continues from it. A non-finite loss stops the run with a message
naming the step and keeps the last good checkpoint. A comparison stopped by a signal writes no comparison
(exit 4)."""
import os
import signal
import subprocess
import time

import h5py

import hptest

a = hptest.args()
deck = hptest.deck_path(a.root, "xor.ini")

for sig in (signal.SIGTERM, signal.SIGUSR1):
    out = os.path.join(a.work, sig.name)
    cmd = [a.hpt, "-i", deck, "--set", f"output.dir={out}", "--set", "train.steps=10000000",
           "--set", "run.print_every=50", "--set", "train.val_every=1000"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = False
    t0 = time.time()
    while time.time() - t0 < 120:  # wait for training to be under way
        line = p.stdout.readline()
        if line.startswith("step "):
            seen = True
            break
    hptest.check(seen, f"{sig.name}: training started")
    p.send_signal(sig)
    try:
        stdout, stderr = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        stdout, stderr = p.communicate()
    hptest.check(p.returncode == 0, f"{sig.name}: clean exit (0)", f"rc {p.returncode}: {stderr[-400:]}")
    hptest.check("stopped by signal" in stdout, f"{sig.name}: says it stopped", stdout[-400:])
    cks = sorted(f for f in os.listdir(out) if "_ckpt_" in f and f.endswith(".h5"))
    tmps = [f for f in os.listdir(out) if ".tmp." in f]
    hptest.check(len(cks) == 1 and not tmps, f"{sig.name}: one complete checkpoint, no temporary", str(os.listdir(out)))
    if cks:
        with h5py.File(os.path.join(out, cks[0]), "r") as f:
            step = int(f.attrs["step"])
        with h5py.File(os.path.join(out, "xor_trace.h5"), "r") as f:
            last = int(f["steps/step"][-1]) if len(f["steps/step"]) else -1
        hptest.check(last == step, f"{sig.name}: trace flushed up to the checkpoint step {step}", str(last))
        r = hptest.run(a.hpt, deck, f"output.dir={out}", f"train.steps={step + 30}", "run.restart=auto",
                       "run.print_every=10")
        hptest.check(r.returncode == 0 and f"at step {step}" in r.stdout, f"{sig.name}: restart=auto continues",
                     r.stdout[-500:] + r.stderr[-300:])

# A comparison cannot be continued: a signal in one of its arms stops it with exit 4, a message
# naming the seed and arm, and no comparison file (an arm cut short must not enter the table).
out = os.path.join(a.work, "compare")
cmd = [a.hpt, "--compare", "-i", deck, "--set", f"output.dir={out}", "--set", "train.hybrid=on",
       "--set", "train.steps=10000000", "--set", "run.print_every=50", "--set", "train.val_every=1000"]
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
t0 = time.time()
while time.time() - t0 < 120:
    if p.stdout.readline().startswith("step "):
        break
p.send_signal(signal.SIGTERM)
try:
    stdout, stderr = p.communicate(timeout=120)
except subprocess.TimeoutExpired:
    p.kill()
    stdout, stderr = p.communicate()
hptest.check(p.returncode == 4 and "compare stopped: seed 1, arm full was stopped by signal 15" in stdout,
             "compare: a signal stops it with exit 4 naming seed and arm", f"rc {p.returncode}: {stdout[-400:]}")
written = os.listdir(out) if os.path.isdir(out) else []
hptest.check(not any(f.endswith("_compare.h5") or ".tmp." in f for f in written) and "arm hybrid" not in stdout,
             "compare: no comparison file, no further arm", str(written))

out = os.path.join(a.work, "diverge")
r = hptest.run(a.hpt, deck, f"output.dir={out}", "optimizer.style=sgd", "optimizer.lr=1e30", "model.activation=relu",
               "train.steps=200", "checkpoint.every=1", "checkpoint.keep=2")
hptest.check(r.returncode == 3 and "not finite at step" in r.stderr, "non-finite: exit 3 naming the step",
             f"rc {r.returncode}: {r.stderr[-400:]}")
cks = sorted(f for f in os.listdir(out) if "_ckpt_" in f) if os.path.isdir(out) else []
ok = True
for c in cks:
    with h5py.File(os.path.join(out, c), "r") as f:
        import numpy as np
        ok = ok and bool(np.all(np.isfinite(f["model/parameters"][()])))
hptest.check(bool(cks) and ok, "non-finite: the kept checkpoints hold finite parameters", str(cks))
hptest.finish()
