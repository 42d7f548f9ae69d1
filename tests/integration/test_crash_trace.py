"""Whatever instant a training run dies, the trace on disk plus the newest checkpoint give, after
run.restart = auto, one trace with every step exactly once and its end event. The run is killed (SIGKILL, nothing
flushed) at the two instants around a checkpoint through HPT_CRASH_AT, and, as a user would, by kill -9 as soon as
a checkpoint file appears. A damaged newest checkpoint makes restart = auto fall back to the next older one with a
warning naming it; a checkpoint of one data set does not resume on another."""
import os
import signal
import subprocess
import time

import numpy as np

import hptest

a = hptest.args()
h5py = hptest.h5()
deck = hptest.deck_path(a.root, "xor.ini")
STEPS = 300
base = ["run.print_every=1000", "train.val_every=50", "checkpoint.every=100", "dataset.samples=600",
        f"train.steps={STEPS}"]


def trace(out):
    with h5py.File(os.path.join(out, "xor_trace.h5"), "r") as f:
        return f["steps/step"][()], f["events/kind"][()], f["events/step"][()]


def check_complete(out, what):
    steps, kinds, ev_steps = trace(out)
    hptest.check(len(steps) == STEPS and np.array_equal(steps, np.arange(1, STEPS + 1)),
                 f"{what}: every step exactly once in the restarted trace", str(steps[:3]) + "..." + str(steps[-3:]))
    hptest.check(list(kinds).count(5) == 1 and ev_steps[list(kinds).index(5)] == STEPS,
                 f"{what}: one end event at the last step", str(list(zip(kinds, ev_steps))))
    hptest.check(all(np.diff(ev_steps) >= 0), f"{what}: events in step order", str(list(ev_steps)))
    left = [f for f in os.listdir(out) if ".tmp." in f]
    hptest.check(not left, f"{what}: no temporary left after the restart", str(left))


# The two instants around the checkpoint of step 200: after the trace rows reached the disk, and after the
# checkpoint was renamed into place.
for point in ("trace_flushed", "checkpoint_written"):
    out = os.path.join(a.work, point)
    r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", env={"HPT_CRASH_AT": f"{point}:200"})
    hptest.check(r.returncode == -signal.SIGKILL, f"{point}: the run was killed at step 200", f"rc {r.returncode}")
    steps, _, _ = trace(out)
    hptest.check(len(steps) > 0 and steps[-1] == 200, f"{point}: the trace on disk reaches step 200",
                 str(steps[-3:]))
    r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "run.restart=auto")
    want = 200 if point == "checkpoint_written" else 100
    hptest.check(r.returncode == 0 and f"at step {want}" in r.stdout, f"{point}: restart=auto from step {want}",
                 r.stdout[-300:] + r.stderr[-300:])
    check_complete(out, point)

# kill -9 as soon as a checkpoint file appears, as the independent tester did.
out = os.path.join(a.work, "kill9")
cmd = [a.hpt, "-i", deck, "--set", f"output.dir={out}"] + [x for s in base for x in ("--set", s)]
cmd = [c.replace(f"train.steps={STEPS}", "train.steps=20000").replace("checkpoint.every=100", "checkpoint.every=2000")
       for c in cmd]
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
t0 = time.time()
while time.time() - t0 < 300 and p.poll() is None:
    if any("_ckpt_" in f and f.endswith(".h5") for f in (os.listdir(out) if os.path.isdir(out) else [])):
        break
    time.sleep(0.001)
p.send_signal(signal.SIGKILL)
p.wait()
steps, _, _ = trace(out)
hptest.check(len(steps) >= 2000, "kill -9 at the first checkpoint: the trace on disk holds its 2000 steps",
             f"{len(steps)} rows")
r = hptest.run(a.hpt, deck, *[s.replace("checkpoint.every=100", "checkpoint.every=2000") for s in base],
               f"output.dir={out}", "train.steps=2100", "run.restart=auto")
steps, _, _ = trace(out)
hptest.check(r.returncode == 0 and np.array_equal(steps, np.arange(1, 2101)),
             "kill -9 at the first checkpoint: after restart, steps 1..2100 once each", r.stderr[-300:])

# A damaged newest checkpoint: restart = auto warns, names it, and continues from the next older one.
out = os.path.join(a.work, "damaged")
r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "train.steps=200")
hptest.check(r.returncode == 0, "damaged: the first run succeeds", r.stderr[-300:])
newest = os.path.join(out, "xor_ckpt_0000000200.h5")
with h5py.File(newest, "r+") as f:
    v = f["model/parameters"][()]
    v[0] += 1.0
    f["model/parameters"][...] = v
r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "run.restart=auto")
hptest.check(r.returncode == 0 and "xor_ckpt_0000000200.h5" in r.stderr and "warning" in r.stderr
             and "at step 100" in r.stdout, "damaged newest checkpoint: warning naming it, restart from step 100",
             r.stdout[-300:] + r.stderr[-500:])
check_complete(out, "damaged")
# Only damaged checkpoints: exit 2 naming them, nothing resumed.
with open(newest, "wb") as f:
    f.write(b"not hdf5")
for name in os.listdir(out):
    if "_ckpt_" in name and name != os.path.basename(newest):
        os.remove(os.path.join(out, name))
r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "run.restart=auto")
hptest.check(r.returncode == 2 and "xor_ckpt_0000000200.h5" in r.stderr,
             "only a damaged checkpoint: exit 2 naming it", r.stderr[-400:])

# A checkpoint of the xor data does not resume on spirals (same model shape).
out = os.path.join(a.work, "identity")
r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "train.steps=100")
ck = os.path.join(out, "xor_ckpt_0000000100.h5")
r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "output.name=sp", "dataset.style=spirals",
               "dataset.classes=2", f"run.restart={ck}")
hptest.check(r.returncode == 2 and "data set" in r.stderr and "spirals" in r.stderr,
             "xor checkpoint on spirals: exit 2 naming both data sets", r.stderr[-400:])

# A non-finite stop before any checkpoint does not claim one is kept.
out = os.path.join(a.work, "nonfinite")
r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "optimizer.style=sgd", "optimizer.lr=1e30",
               "model.activation=relu")
hptest.check(r.returncode == 3 and "no checkpoint" in r.stderr and "is kept" not in r.stderr,
             "non-finite before the first checkpoint: exit 3 saying none exists", r.stderr[-400:])

hptest.finish()
