#!/usr/bin/env python3
"""run/corpus/torch_curves.py without PyTorch: the exponential and cyclic schedules hold their
definitions (warmup to the peak, decay to 1 % of it at the last step; triangles between 10 % and
100 % of the peak, four of them), the added optimizers take their rates from the ones they derive
from, and the plan holds every (problem, optimizer, schedule, rate) once."""
import importlib.util
import os

import numpy as np

import hptest

a = hptest.args()
spec = importlib.util.spec_from_file_location("torch_curves",
                                              os.path.join(a.root, "run/corpus/torch_curves.py"))
tc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tc)

T, peak = 2000, 0.3
warm = max(1, int(round(0.03 * T)))
exp = np.array([tc.lr_at("exp", peak, t, T) for t in range(1, T + 1)])
hptest.check(abs(exp[warm - 1] - peak) < 1e-12 and abs(exp[-1] - 0.01 * peak) < 1e-12,
             "exp: the peak at the end of the warmup, 1 % of it at the last step",
             f"{exp[warm - 1]} {exp[-1]}")
hptest.check(np.all(np.diff(exp[:warm]) > 0) and np.all(np.diff(exp[warm - 1:]) < 0),
             "exp: rises through the warmup, then falls at every step")
ratio = exp[warm:] / exp[warm - 1:-1]
hptest.check(np.allclose(ratio, ratio[0], rtol=1e-9), "exp: a constant factor per step after the warmup")

cyc = np.array([tc.lr_at("cyclic", peak, t, T) for t in range(1, T + 1)])
hptest.check(cyc.min() >= 0.1 * peak - 1e-12 and cyc.max() <= peak + 1e-12,
             "cyclic: between 10 % of the peak and the peak", f"{cyc.min()} {cyc.max()}")
d = np.sign(np.diff(cyc))
turns_down = int(np.sum((d[:-1] > 0) & (d[1:] < 0)))
turns_up = int(np.sum((d[:-1] < 0) & (d[1:] > 0)))
hptest.check(turns_down == 4 and turns_up == 3 and cyc.max() > 0.99 * peak,
             "cyclic: four triangles, the rate rising again three times", f"{turns_down} {turns_up}")

cfg = tc.PROBLEMS["mlp-teacher"]
hptest.check(tc.peak_rates(cfg, "rmsprop") == cfg["lr"]["adamw"]
             and np.allclose(tc.peak_rates(cfg, "sgd-plain"), [2 * x for x in cfg["lr"]["sgd"]])
             and tc.weight_decay(cfg, "rmsprop") == 0.0 and tc.weight_decay(cfg, "adamw") == cfg["wd"]["adamw"],
             "rmsprop takes AdamW's rates, plain SGD twice SGD's, neither a weight decay")

problems, opts, scheds = ("mlp-teacher", "mod-add"), ("rmsprop", "sgd-plain", "sgd"), ("exp", "cyclic")
plan = tc.plan(False, (29,), False, problems, scheds, opts)
ids = [s["id"] for s in plan]
hptest.check(len(ids) == len(set(ids)) == len(problems) * len(opts) * len(scheds) * 2
             and all(s["lr_peak"] == tc.peak_rates(tc.PROBLEMS[s["problem"]], s["optimizer"])[s["lr_index"]]
                     for s in plan),
             "the plan holds each (problem, optimizer, schedule, rate) once, at its peak rate", str(ids[:4]))
hptest.finish()
