"""Same seed, same paths: a rollout is bit-identical on OpenMP with 1 and 2 threads (the Serial backend is
compared in the unit tests), and a rollout from a saved model file equals the rollout from the initialisation that
was saved; a different seed gives different paths."""
import os

import numpy as np

import hptest

a = hptest.args()
h5py = hptest.h5()
deck = hptest.deck_path(a.root, "rollout-synthetic.ini")
out = os.path.join(a.work, "out")
common = [f"output.dir={out}", "rollout.horizon=30", "rollout.scenarios=8", "dynamics.hidden=64"]


def paths(name):
    with h5py.File(os.path.join(out, name + ".h5"), "r") as f:
        return f["paths"][()]


for enc in ("rich", "prototype"):
    for reset in ("after", "before"):
        tag = f"{enc}_{reset}"
        runs = {}
        for threads in (1, 2):
            r = hptest.run(a.hpt, deck, *common, f"run.threads={threads}", f"encoder.style={enc}",
                           f"gru.reset={reset}", f"output.name={tag}_t{threads}",
                           f"rollout.save_model={out}/{tag}_model.h5")
            hptest.check(r.returncode == 0, f"{tag}: {threads} thread(s) runs", r.stderr[-500:])
            runs[threads] = paths(f"{tag}_t{threads}") if r.returncode == 0 else None
        if runs[1] is None or runs[2] is None:
            continue
        hptest.check(np.array_equal(runs[1], runs[2]), f"{tag}: 1 and 2 threads give bit-identical paths")
        r = hptest.run(a.hpt, deck, *common, f"encoder.style={enc}", f"gru.reset={reset}",
                       f"output.name={tag}_loaded", f"rollout.model={out}/{tag}_model.h5")
        hptest.check(r.returncode == 0 and np.array_equal(paths(f"{tag}_loaded"), runs[2]),
                     f"{tag}: the saved model reproduces the paths", r.stderr[-400:])
        r = hptest.run(a.hpt, deck, *common, f"encoder.style={enc}", f"gru.reset={reset}", "run.seed=2",
                       f"output.name={tag}_seed2")
        hptest.check(r.returncode == 0 and not np.array_equal(paths(f"{tag}_seed2"), runs[2]),
                     f"{tag}: another seed gives other paths")
hptest.finish()
