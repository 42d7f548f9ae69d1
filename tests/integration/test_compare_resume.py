"""A comparison stopped part-way continues with run.restart = auto: every finished arm leaves <name>_arm.h5, a
restarted comparison reads those back and trains only the others, and its comparison file equals that of an
uninterrupted run in everything but wall times. Killed between two arms, the finished ones are read; killed inside an
arm, that arm trains again from the start; an arm file written for another deck is not used; run.restart naming a
file is refused before any work."""
import os

import numpy as np

import hptest

a = hptest.args()
h5py = hptest.h5()
deck = hptest.deck_path(a.root, "reference/digits-sgd.ini")
STEPS = 200
sets = hptest.short_hybrid_sets(STEPS) + ["compare.seeds=1,2"]
TIMED = ("seconds", "wall_seconds", "seconds_to_common_loss", "full_seconds_to_common_loss")


def compare(tag, *extra_sets, env=None):
    out = os.path.join(a.work, tag)
    r = hptest.run(a.hpt, deck, *sets, f"output.dir={out}", *extra_sets, env=env, extra=("--compare",))
    return out, r


def contents(out):
    """Every dataset and attribute under /seeds, wall times left out (they differ between runs)."""
    items = {}
    with h5py.File(os.path.join(out, "digits-sgd_compare.h5"), "r") as f:
        def visit(name, obj):
            for k, v in obj.attrs.items():
                if not (k in TIMED or k.startswith("seconds")):
                    items[f"{name}@{k}"] = np.asarray(v)
            if isinstance(obj, h5py.Dataset) and obj.name.split("/")[-1] not in TIMED:
                items[name] = obj[()]
        f["seeds"].visititems(visit)
    return items


def same(x, y):
    return x.keys() == y.keys() and all(np.array_equal(x[k], y[k], equal_nan=True) for k in x)


whole, r = compare("whole")
hptest.check(r.returncode == 0, "an uninterrupted comparison exits 0", r.stdout[-500:] + r.stderr[-500:])
reference = contents(whole)
arm_files = sorted(n for n in os.listdir(whole) if n.endswith("_arm.h5"))
hptest.check(len(arm_files) == 8, "every finished arm leaves its _arm.h5", str(arm_files))
with h5py.File(os.path.join(whole, "digits-sgd_s1_hybrid_arm.h5"), "r") as f:
    hptest.check(f.attrs["hpt_kind"] == "compare_arm" and f["step_kind"].shape == (STEPS,),
                 "an arm file is of kind compare_arm and holds the arm's step pattern", str(dict(f.attrs)))

# 1. Killed (SIGKILL) after the fifth arm (seed 2's full): no comparison, five arm files; the restart reads those
# five and trains the other three.
out, r = compare("between", env={"HPT_CRASH_AT": "compare_arm_done:5"})
hptest.check(r.returncode == -9 and not os.path.exists(os.path.join(out, "digits-sgd_compare.h5")),
             "killed after the fifth arm: no comparison written", f"rc {r.returncode}")
hptest.check(len([n for n in os.listdir(out) if n.endswith("_arm.h5")]) == 5, "five arm files are left")
_, r = compare("between", "run.restart=auto")
hptest.check(r.returncode == 0 and r.stdout.count("finished earlier: read from") == 5,
             "the restart reads the five finished arms", r.stdout[-1500:] + r.stderr[-500:])
hptest.check(same(contents(out), reference), "the continued comparison equals the uninterrupted one")

# 2. Killed inside the first arm (right after its last checkpoint, before its arm file): the restart trains it again
# from the start, over the files it left.
out, r = compare("inside", env={"HPT_CRASH_AT": f"checkpoint_written:{STEPS}"})
hptest.check(r.returncode == -9 and not any(n.endswith("_arm.h5") for n in os.listdir(out)),
             "killed inside the first arm: no arm file", f"rc {r.returncode}")
_, r = compare("inside", "run.restart=auto")
hptest.check(r.returncode == 0 and "finished earlier" not in r.stdout, "the restart trains every arm",
             r.stdout[-800:] + r.stderr[-500:])
hptest.check(same(contents(out), reference), "and equals the uninterrupted comparison")

# 3. The same folder with another deck: no arm file is used.
_, r = compare("between", "run.restart=auto", "optimizer.lr=0.003")
hptest.check(r.returncode == 0 and r.stdout.count("it was written for another deck") == 8
             and "finished earlier" not in r.stdout, "arm files of another deck are not read",
             r.stdout[-800:] + r.stderr[-500:])

# 4. run.restart naming a file: exit 2 naming the key, nothing written.
out, r = compare("refused", f"run.restart={os.path.join(whole, 'digits-sgd_s1_full_arm.h5')}")
hptest.check(r.returncode == 2 and "run.restart" in r.stderr and not os.path.exists(out),
             "run.restart = <file> with --compare: exit 2 naming the key, nothing written", r.stderr[-300:])

hptest.finish()
