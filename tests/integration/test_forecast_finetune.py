"""forecast.finetune (online fine-tuning of the learned level forecaster) end to end on the
project's hpt sweep (24 runs of 1000 steps): with it on, forecast mode runs, refits and writes its
file; the learned forecasts before the first refit are those of the pretrained model, later ones
differ, bit-identical on 1 and 2 threads; off is the default and changes nothing; the learned
forecasts at origins up to a step do not depend on the losses after it (causal); bad options and
run.mode = watch with it on are refused with exit 2, a message naming the key, and nothing
written."""
import os
import shutil

import numpy as np

from hptest import args, check, deck_path, finish, h5, run

a = args()
deck = deck_path(a.root, "forecast.ini")
source = os.path.join(a.root, "tests", "data", "curves", "hpt-sweep.h5")
common = ["forecast.horizons=10,50,100,200", "forecast.every=50", "forecast.ensemble=off",
          "output.name=fc"]
tune = ["forecast.finetune=on", "forecast.finetune_every=200"]
f5 = h5()


def forecast(name, curves, *sets):
    out = os.path.join(a.work, name)
    r = run(a.hpt, deck, f"forecast.input={curves}", f"output.dir={out}", *common, *sets)
    check(r.returncode == 0, f"{name}: forecast succeeds", r.stdout[-2000:] + r.stderr)
    return r, os.path.join(out, "fc.h5")


def columns(path):
    with f5.File(path, "r") as f:
        return {"origin": f["forecasts/origin"][...], "run": f["forecasts/run"][...],
                "learned": f["baselines/learned/forecast"][...],
                "last": f["baselines/last/forecast"][...]}


_, default = forecast("default", source)
_, off = forecast("off", source, "forecast.finetune=off", "forecast.finetune_every=7")
r, on = forecast("on", source, *tune)
check("fine-tuned online:" in r.stdout and " 0 group refits" not in r.stdout,
      "on: the console names the refits", r.stdout[-2000:])
d, o, n = columns(default), columns(off), columns(on)
check(all(np.array_equal(d[k], o[k], equal_nan=True) for k in d),
      "forecast.finetune = off (the default) leaves every forecast unchanged")
early = n["origin"] < 200
check(np.array_equal(n["learned"][early], d["learned"][early]),
      "on: before the first refit the learned forecasts are the pretrained model's")
check(np.nanmax(np.abs(n["learned"][~early] - d["learned"][~early])) > 1e-6,
      "on: after it they change")
check(np.array_equal(n["last"], d["last"], equal_nan=True), "on: the other forecasters unchanged")
_, one = forecast("on_1thread", source, *tune, "run.threads=1")
check(np.array_equal(columns(one)["learned"], n["learned"]),
      "on: 1 and 2 threads give bit-identical learned forecasts")

# Causality: the losses after step 500 altered, every learned forecast at an origin <= 500 is the
# same (the refits at 200 and 400 only used targets realised by then).
altered = os.path.join(a.work, "altered.h5")
shutil.copy(source, altered)
with f5.File(altered, "r+") as f:
    for run_id in f["runs"]:
        g = f["runs"][run_id]
        loss = g["loss"][...]
        loss[g["step"][...] > 500] *= 1.7
        g["loss"][...] = loss
_, cut = forecast("altered", altered, *tune)
c = columns(cut)
upto = n["origin"] <= 500
check(np.array_equal(c["learned"][c["origin"] <= 500], n["learned"][upto]),
      "on: learned forecasts at origins <= 500 do not depend on the losses after step 500")
check(not np.array_equal(c["learned"][c["origin"] > 500], n["learned"][~upto]),
      "on: later ones do (the check has teeth)")

# Bad options: exit 2 before any work, naming the key, nothing written.
for label, sets, key in (("finetune=maybe", ["forecast.finetune=maybe"], "forecast.finetune"),
                         ("every=0", ["forecast.finetune_every=0"], "forecast.finetune_every"),
                         ("strength=-1", ["forecast.finetune_strength=-1"],
                          "forecast.finetune_strength"),
                         ("samples=5", ["forecast.finetune_samples=5"], "forecast.finetune_samples"),
                         ("pretrained=none", ["forecast.finetune=on", "forecast.pretrained=none"],
                          "forecast.pretrained = none")):
    out = os.path.join(a.work, "refused_" + label.replace("=", "_"))
    r = run(a.hpt, deck, f"forecast.input={source}", f"output.dir={out}", *common, *sets)
    check(r.returncode == 2 and key in r.stderr, f"{label}: exit 2 naming {key}", r.stderr)
    check(not os.path.exists(out), f"{label}: nothing written")

folder = os.path.join(a.work, "live")
os.makedirs(folder)
out = os.path.join(a.work, "refused_watch")
r = run(a.hpt, deck_path(a.root, "watch.ini"), f"watch.folder={folder}", f"output.dir={out}",
        "forecast.finetune=on")
check(r.returncode == 2 and "forecast.finetune = on" in r.stderr and "watch" in r.stderr,
      "run.mode = watch refuses forecast.finetune = on with exit 2", r.stderr)
check(not os.path.exists(out), "watch refused: nothing written")
finish()
