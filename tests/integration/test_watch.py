"""run.mode = watch against run.mode = forecast: a finished sweep (tests/data/curves/hpt-sweep.h5,
24 runs of three problems, 1000 steps, without learning rates) replayed as if live by a writer
process that grows one CSV per run in chunks, with torn last lines, one run restarted from a
checkpoint and one file deleted. The watcher's judgment of every run (verdict, step, probability)
must equal the offline forecast mode's stop list on the same curves; stop files are written for
exactly the stopped runs, each decision is logged once, and a restarted watch keeps its decisions.
With each run's planned learning rates in <run>.lr, the judgments equal forecast mode's on the
curves with their lr column.
Then: a wide CSV and an hpt trace are read, a final_step column replaces watch.final_step,
watch.act = scancel calls a stand-in with the job ids of the file names, and bad inputs end the
run with exit 2 and nothing written."""
import os
import subprocess
import sys
import time

import h5py
import numpy as np

from hptest import args, check, finish, run

a = args()
hpt, root, work = a.hpt, a.root, a.work
deck = os.path.join(root, "inputs", "watch.ini")
grow = os.path.join(root, "tests", "integration", "grow_sweep.py")
sweep = os.path.join(root, "tests", "data", "curves", "hpt-sweep.h5")

# --- the offline twin: forecast mode's stop list of the sweep, grouped by problem


def offline_stop_list(name, with_lr, *sets, logged_every=1):
    """{run id: (stop origin, probability, stopped)} of forecast mode on the sweep (with or without
    its lr column, only the steps divisible by logged_every, written to WORK/<name>.h5), with the
    options `sets`."""
    path = os.path.join(work, name + ".h5")
    with h5py.File(sweep, "r") as f, h5py.File(path, "w") as o:
        for rid, g in f["runs"].items():
            og = o.create_group("runs/" + rid)
            keep = g["step"][...] % logged_every == 0
            for d in ("step", "loss") + (("lr",) if with_lr else ()):
                og[d] = g[d][...][keep]
            og.attrs["group"] = rid.split("_")[1]
    p = run(hpt, os.path.join(root, "inputs", "forecast.ini"), f"forecast.input={path}",
            "forecast.ensemble=off", f"output.dir={work}", f"output.name=offline_{name}", *sets)
    check(p.returncode == 0, f"offline forecast of the sweep ({name})", p.stderr[-2000:])
    stops = {}
    with h5py.File(os.path.join(work, f"offline_{name}.h5"), "r") as f:
        for g in f["runs"].values():
            rid = g.attrs["id"].decode() if isinstance(g.attrs["id"], bytes) else g.attrs["id"]
            stops[rid] = (int(g.attrs["stop_origin"]), float(g.attrs["stop_beat_probability"]),
                          int(g.attrs["stopped"]))
    return path, stops


def watched_replay(folder, name, *rule):
    """The sweep (with its plans) grown in chunks into WORK/<folder> while a watcher named `name`
    judges it with the options `rule`: (the watcher's stdout, status_runs of its status file)."""
    live_dir = os.path.join(work, folder)
    os.makedirs(live_dir)
    watcher = subprocess.Popen(watch_cmd(live_dir, name, *rule), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    writer = subprocess.run([sys.executable, grow, curves_lr, live_dir, "--chunk", "100", "--pause",
                             "0.03", "--plan"], capture_output=True, text=True, timeout=300)
    out, err = watcher.communicate(timeout=300)
    check(writer.returncode == 0 and watcher.returncode == 0, f"the sweep watched with {rule}",
          writer.stderr[-500:] + err[-1000:])
    return out, status_runs(os.path.join(work, name + "_watch.h5"))


# Without learning rates: a live run's future rates are not in its file.
curves, offline = offline_stop_list("curves", with_lr=False)

def watch_cmd(folder, name, *sets, final_step=1000):
    cmd = [hpt, "-i", deck, "--set", f"watch.folder={folder}", "--set", f"watch.final_step={final_step}",
           "--set", "watch.interval=0.05", "--set", "watch.idle_exit=20", "--set", f"output.dir={work}",
           "--set", f"output.name={name}", "--set", "watch.max_stop_fraction=1"]
    return cmd + [x for s in sets for x in ("--set", s)]


def status_runs(path):
    """{run id: its names (attributes of /runs/<i>) and numbers (entry i of every /status column)}."""
    out = {}
    with h5py.File(path, "r") as f:
        columns = {k: v[...] for k, v in f["status"].items()}
        for name, g in f["runs"].items():
            at = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in g.attrs.items()}
            at.update({k: v[int(name)].item() for k, v in columns.items()})
            lo, hi = f["curves/offset"][int(name)], f["curves/offset"][int(name) + 1]
            at["curve_steps"] = f["curves/step"][lo:hi]
            out[at["id"]] = at
    return out


# --- the live replay
live = os.path.join(work, "live")
os.makedirs(live)
restarted, vanished = "r08_spirals_sgd_lr0.1", "r21_teacher_adam_lr0.00139"
watcher = subprocess.Popen(watch_cmd(live, "w", "watch.act=file"), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
writer = subprocess.run([sys.executable, grow, curves, live, "--chunk", "40", "--pause", "0.03", "--torn",
                         "--restart", f"{restarted}:400:360", "--vanish", f"{vanished}:700"],
                        capture_output=True, text=True, timeout=300)
check(writer.returncode == 0, "the writer grew the sweep", writer.stderr[-1000:])
out, err = watcher.communicate(timeout=300)
check(watcher.returncode == 0, "the watch ends by itself once every run is done", err[-2000:] + out[-2000:])
check("watch ends after poll" in out and "every run finished, stopped or vanished" in out,
      "it says why it ended", out[-1000:])
polls = [l for l in out.splitlines() if l.startswith("poll ")]
check(len(polls) >= 5, "it polled while the files grew", str(len(polls)))

status = status_runs(os.path.join(work, "w_watch.h5"))
check(sorted(status) == sorted(offline), "every run of the sweep is in the status file", str(sorted(status)))
for rid, (origin, prob, stopped) in sorted(offline.items()):
    st = status.get(rid, {})
    same = (st.get("judge_step") == origin and st.get("verdict") == stopped
            and np.isclose(st.get("judged_probability", np.nan), prob, rtol=1e-9, atol=1e-300))
    check(same, f"run {rid}: judged as the offline stop list judges it (step {origin}, P {prob:.4g}, "
          f"stopped {stopped})", str({k: st.get(k) for k in ("judge_step", "verdict", "judged_probability")}))
stopped_ids = sorted(r for r, st in status.items() if st["decision"] == "stop")
check(len(stopped_ids) >= 3, "some runs were stopped while they ran", str(stopped_ids))
stop_files = sorted(f[:-5] for f in os.listdir(live) if f.endswith(".stop"))
check(stop_files == stopped_ids, "watch.act = file wrote <run>.stop for exactly the stopped runs",
      f"{stop_files} vs {stopped_ids}")
with open(os.path.join(work, "w_watch_actions.log")) as f:
    log = f.read().splitlines()
logged = sorted(l.split(" stop '")[1].split("'")[0] for l in log)
check(logged == stopped_ids, "every stop is logged once, with its evidence",
      "\n".join(log[:5]))
check(all("P(final below" in l for l in log), "each log line gives the probability it was judged by")
for rid, st in status.items():
    if st["decision"] == "stop":
        check(st["stop_step"] == st["judge_step"] == 250, f"{rid} stopped at its judgment origin")
check(status[vanished]["decision"] in ("gone", "stop"), "the deleted file's run is gone (or was stopped)",
      status[vanished]["decision"])
check(f"run '{restarted}'" in out and "restarted from a checkpoint" in out,
      "the restarted run's cut is noted", out[-1500:])
check("not a number" not in out and "not a step number" not in out,
      "torn last lines wait for their newline (no line read half)")
best = {}
for rid, (origin, prob, stopped) in offline.items():
    g = rid.split("_")[1]
    with h5py.File(curves, "r") as f:
        final = float(np.log(np.mean(f["runs"][rid]["loss"][-10:])))
    if g not in best or final < best[g][1]:
        best[g] = (rid, final)
for g, (rid, _) in best.items():
    check(status[rid]["decision"] != "stop", f"the best run of group {g} ({rid}) is never stopped")
txt = open(os.path.join(work, "w_watch.txt")).read()
check(all(r in txt for r in stopped_ids) and "why:" in txt, "the text status names every run and why")

# --- a sweep logged every 5 steps: the watcher reads it step by step as forecast mode does, and
#     judges every run as forecast mode's stop list on the same sparse curves
curves_5, offline_5 = offline_stop_list("curves_every5", False, logged_every=5)
sparse_dir = os.path.join(work, "sparse")
os.makedirs(sparse_dir)
watcher = subprocess.Popen(watch_cmd(sparse_dir, "sparse5"), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
writer = subprocess.run([sys.executable, grow, curves_5, sparse_dir, "--chunk", "8", "--pause",
                         "0.03"], capture_output=True, text=True, timeout=300)
out_s, err_s = watcher.communicate(timeout=300)
check(writer.returncode == 0 and watcher.returncode == 0, "the sweep logged every 5 steps watched",
      writer.stderr[-500:] + err_s[-1000:])
status_s = status_runs(os.path.join(work, "sparse5_watch.h5"))
# (The verdicts may differ one way: the watcher keeps a run whose forecast is the best of its group
# at the poll that judges it, which depends on how far the others have grown by then.)
same = [rid for rid, (origin, prob, stopped) in offline_5.items()
        if status_s[rid]["judge_step"] == origin and status_s[rid]["verdict"] <= stopped
        and np.isclose(status_s[rid]["judged_probability"], prob, rtol=1e-9, atol=1e-300)]
check(len(same) == len(offline_5) and len(same) > 0, "every judgment of the sparse sweep is made "
      "at forecast mode's origin with its probability, and stops no run that it keeps",
      str(sorted(set(offline_5) - set(same))))
check(sum(status_s[r]["verdict"] == 1 for r in offline_5) >= 3, "and the watcher stops runs")
check(any(offline_5[r][1] != offline[r][1] for r in offline),
      "the sparse curves are judged on other evidence than the full ones (so the check tests them)")

# --- with the runs' planned learning rates (<run>.lr): the judgments of forecast mode on the curves
#     with their lr column, where the schedule to the end is known
curves_lr, offline_lr = offline_stop_list("curves_lr", with_lr=True)
planned = os.path.join(work, "planned")
os.makedirs(planned)
watcher = subprocess.Popen(watch_cmd(planned, "p"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
writer = subprocess.run([sys.executable, grow, curves_lr, planned, "--chunk", "100", "--pause", "0.03",
                         "--plan"], capture_output=True, text=True, timeout=300)
out_p, err_p = watcher.communicate(timeout=300)
check(writer.returncode == 0 and watcher.returncode == 0, "the sweep with plans replayed and watched",
      writer.stderr[-500:] + err_p[-1000:])
check("planned learning rates of 1000 steps" in out_p, "the plans are read", out_p[:1500])
status_p = status_runs(os.path.join(work, "p_watch.h5"))
same = [rid for rid, (origin, prob, stopped) in offline_lr.items()
        if status_p[rid]["judge_step"] == origin and status_p[rid]["verdict"] == stopped
        and np.isclose(status_p[rid]["judged_probability"], prob, rtol=1e-9, atol=1e-300)]
check(len(same) == len(offline_lr), "with plans every judgment equals forecast mode's on the curves "
      "with their learning rates", str(sorted(set(offline_lr) - set(same))))
check(sum(v[2] for v in offline_lr.values()) != sum(v[2] for v in offline.values()) or
      any(offline_lr[r][1] != offline[r][1] for r in offline),
      "the schedule changes the judgments (so the check above tests the plans)")

# --- forecast.stop_rule = median (also stopped when the forecast final median lies above the
#     median of the others') judged against the best other run's median alone
#     (forecast.stop_against = median; the live replay above ran the default, interval): the
#     watcher's judgments equal forecast mode's with the same rule
median_rule = ("forecast.stop_rule=median", "forecast.stop_confidence=0.99", "forecast.stop_against=median")
_, offline_m = offline_stop_list("curves_median", True, *median_rule)
_, offline_interval = offline_stop_list("curves_median_interval", True, *median_rule[:2])
check(sum(offline_interval[r][1] > offline_m[r][1] + 1e-6 for r in offline_m if offline_m[r][1] < 0.1) >= 1,
      "against the best other run's interval (the default), runs judged behind get a higher probability "
      "of beating it than against its median (so the two replays test both)",
      str({r: (offline_interval[r][1], offline_m[r][1]) for r in list(offline_m)[:6]}))
out_m, status_m = watched_replay("median", "m", *median_rule)
same = [rid for rid, (origin, prob, stopped) in offline_m.items()
        if status_m[rid]["judge_step"] == origin and status_m[rid]["verdict"] == stopped
        and np.isclose(status_m[rid]["judged_probability"], prob, rtol=1e-9, atol=1e-300)]
check(len(same) == len(offline_m), "median rule: every judgment equals forecast mode's",
      str(sorted(set(offline_m) - set(same))))
by_probability_only = sum(v[1] < 0.01 for v in offline_m.values())
check(sum(v[2] for v in offline_m.values()) > by_probability_only,
      "the median rule stops runs that the probability alone keeps (so the check above tests it)",
      str(by_probability_only))

# --- forecast.stop_rule = both (stopped when the forecast final median and the current level both
#     lie above the 0.4 quantile of the other runs'): the watcher's judgments equal forecast mode's
both_rule = ("forecast.stop_rule=both", "forecast.stop_quantile=0.4")
_, offline_b = offline_stop_list("curves_both", True, *both_rule)
out_b, status_b = watched_replay("both", "b", *both_rule)
check("0.4 quantile" in out_b, "the watcher says which rule it judges by", out_b[-1000:])
same = [rid for rid, (origin, prob, stopped) in offline_b.items()
        if status_b[rid]["judge_step"] == origin and status_b[rid]["verdict"] == stopped]
check(len(same) == len(offline_b), "rule both: every judgment equals forecast mode's",
      str(sorted(set(offline_b) - set(same))))
check(0 < sum(v[2] for v in offline_b.values()) < len(offline_b),
      "the rule both stops some runs and keeps others (so the check above tests it)",
      str([v[2] for v in offline_b.values()]))

# --- judged again at half way (watch.rejudge_at = 0.5), stopped runs ending as a script that
#     honours its stop file does: the first judgments are the single ones above, every run kept
#     there is judged again at step 500
rejudged = os.path.join(work, "rejudged")
os.makedirs(rejudged)
watcher = subprocess.Popen(watch_cmd(rejudged, "r", "watch.rejudge_at=0.5", "watch.act=file"),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
writer = subprocess.run([sys.executable, grow, curves_lr, rejudged, "--chunk", "100", "--pause", "0.03",
                         "--plan", "--honour-stop"], capture_output=True, text=True, timeout=300)
out_r, err_r = watcher.communicate(timeout=300)
check(writer.returncode == 0 and watcher.returncode == 0, "a sweep watched with a second judgment",
      writer.stderr[-500:] + err_r[-1000:])
status_r = status_runs(os.path.join(work, "r_watch.h5"))
# A run the writer finished before the watcher judged it keeps the rule's verdict ("finished",
# verdict 1) instead of a stop: the sets are compared by verdict, whatever the two processes' pace.
first = sorted(r for r, st in status_r.items() if st["verdict"] == 1 and st["judge_step"] == 250)
check(first == sorted(r for r, v in offline_lr.items() if v[2]),
      "the runs the first judgment stops are forecast mode's", f"{first}")
kept = [st for r, st in status_r.items() if r not in first]
check(kept and all(st["judge_step"] == 500 for st in kept),
      "every run kept at step 250 is judged again at step 500", str([st["judge_step"] for st in kept]))
check(all(st["stop_step"] in (-1, 250, 500) for st in status_r.values()),
      "runs are stopped only at their judgment origins")

# --- a restarted watch keeps its decisions and does not act twice
p = subprocess.run(watch_cmd(live, "w", "watch.act=file", "watch.max_polls=1"), capture_output=True,
                   text=True, timeout=120)
check(p.returncode == 0, "a second watch of the same sweep runs", p.stderr[-1000:])
check(sum("stays stopped" in l for l in p.stdout.splitlines()) == len(stopped_ids),
      "it restores every earlier stop", p.stdout[:1500])
with open(os.path.join(work, "w_watch_actions.log")) as f:
    check(f.read().splitlines() == log, "and takes no decision twice")

# --- scancel with job ids from the file names; a wide CSV and an hpt trace are read too
part = os.path.join(work, "part")
os.makedirs(part)
writer = subprocess.run([sys.executable, grow, curves, part, "--chunk", "400", "--pause", "0", "--upto", "400",
                         "--job-names", "--final-step-column"], capture_output=True, text=True, timeout=120)
check(writer.returncode == 0, "the writer wrote the sweep's first 400 steps", writer.stderr[-1000:])
with open(os.path.join(part, "wide.csv"), "w") as f:
    f.write("step,wide_a,wide_b\n" + "".join(f"{s},{1.0 / s!r},{2.0 / s!r}\n" for s in range(1, 301)))
p = run(hpt, os.path.join(root, "inputs", "xor.ini"), "train.steps=120", f"output.dir={part}",
        "output.name=xor")
check(p.returncode == 0, "an hpt training run writes its trace into the folder", p.stderr[-1000:])
for f in os.listdir(part):
    if "_ckpt_" in f or f.endswith("_arm.h5"):
        os.remove(os.path.join(part, f))
stand_in = os.path.join(work, "scancel")
calls = os.path.join(work, "scancel.log")
with open(stand_in, "w") as f:
    f.write(f'#!/bin/sh\necho "$@" >> "{calls}"\n')
os.chmod(stand_in, 0o755)
p = subprocess.run(watch_cmd(part, "s", "watch.act=scancel", f"watch.scancel_command={stand_in}",
                             "watch.max_polls=1", final_step=0), capture_output=True, text=True, timeout=120)
check(p.returncode == 0, "watch with watch.act = scancel", p.stderr[-1000:])
st2 = status_runs(os.path.join(work, "s_watch.h5"))
check("wide_a" in st2 and st2["wide_a"]["last_step"] == 300, "the wide CSV's columns are runs",
      str(st2.get("wide_a", {}).get("last_step")))
check("xor" in st2 and st2["xor"]["last_step"] == 120, "the hpt trace is a run", str(st2.get("xor")))
check(st2["xor"]["curve_steps"][-1] == 120 and len(st2["wide_a"]["curve_steps"]) == 300,
      "the status file holds each run's curve")
check(st2["xor"]["decision"] == "wait" and "no planned last step" in st2["xor"]["reason"],
      "a run whose planned last step is unknown waits, and says why", str(st2["xor"]))
judged = [st for st in st2.values() if st["group"]]
check(all(st["judge_step"] == 250 for st in judged),
      "the final_step column sets the judgment step (watch.final_step = 0)",
      str(sorted({st["judge_step"] for st in judged})))
cancelled = sorted(open(calls).read().split()) if os.path.exists(calls) else []
expected = sorted(st["job"] for st in st2.values() if st["decision"] == "stop")
check(len(expected) > 0 and cancelled == expected,
      "scancel was called once with the job id of every stopped run", f"{cancelled} vs {expected}")

# --- a run that starts late: its file appears while the watch runs
late = os.path.join(work, "late")
os.makedirs(late)
with open(os.path.join(late, "early.csv"), "w") as f:
    f.write("step,loss\n" + "".join(f"{s},{1.0 / s!r}\n" for s in range(1, 51)))
watcher = subprocess.Popen(watch_cmd(late, "l", "watch.max_polls=40", "watch.interval=0.05"),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
time.sleep(0.5)
with open(os.path.join(late, "late.csv"), "w") as f:
    f.write("step,loss\n" + "".join(f"{s},{2.0 / s!r}\n" for s in range(1, 21)))
out_l, err_l = watcher.communicate(timeout=120)
polls_before = [l for l in out_l.splitlines() if l.startswith("poll ")]
st_l = status_runs(os.path.join(work, "l_watch.h5"))
check(watcher.returncode == 0 and "late" in st_l and st_l["late"]["last_step"] == 20,
      "a run whose file appears during the watch joins it", err_l[-500:] + str(st_l.get("late")))
check(any(" 1 runs " in l for l in polls_before) and any(" 2 runs " in l for l in polls_before),
      "it was polled before and after the late run appeared", "\n".join(polls_before[:3]))

# --- bad inputs: exit 2, one message naming the key, nothing written
for sets, key in ((["watch.folder=" + os.path.join(work, "nope")], "watch.folder"),
                  (["watch.interval=0"], "watch.interval"),
                  (["watch.rejudge_at=0.2"], "watch.rejudge_at"),
                  (["forecast.pretrained=none"], "forecast.pretrained"),
                  (["forecast.final_model=" + os.path.join(a.root, "inputs", "models", "level-model.h5")],
                   "forecast.final_model"),
                  (["watch.act=scancel", "watch.scancel_command=/no/such/scancel"], "watch.scancel_command")):
    out_dir = os.path.join(work, "bad_" + key.replace(".", "_"))
    cmd = watch_cmd(live, "bad") + [x for s in sets + [f"output.dir={out_dir}"] for x in ("--set", s)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and key in p.stderr and not os.path.exists(out_dir),
          f"a bad {key} ends the run with exit 2, naming it, nothing written", p.stderr[-500:])
finish()
