"""Malformed decks and command lines: each must end with exit code 2 before any work, with one message that
names the offending key (or file) and what was expected; no output file may appear."""
import os

import hptest

a = hptest.args()

GOOD = "[run]\nmode = rollout\n[output]\ndir = {out}\n[rollout]\nhorizon = 3\nscenarios = 2\n"

# (name, deck text appended to a good deck or replacing it, --set overrides, texts the message must contain)
CASES = [
    ("unknown key", "[rollout]\nhorizn = 5\n", [], ["rollout.horizn", "rollout.horizon"]),
    ("unknown section", "[rolout]\nhorizon = 5\n", [], ["rolout.horizon", "rollout.horizon"]),
    ("not an integer", "[dynamics]\nmembers = five\n", [], ["dynamics.members", "five", "integer"]),
    ("out of range", "[dynamics]\nhidden = 0\n", [], ["dynamics.hidden", "range"]),
    ("bad choice", "[gru]\nreset = sideways\n", [], ["gru.reset", "sideways", "after"]),
    ("unknown style", "[encoder]\nstyle = fancy\n", [], ["encoder.style", "fancy", "rich"]),
    ("bad real", "[rollout]\ninitial_loss = nan\n", [], ["rollout.initial_loss", "nan"]),
    ("bad boolean", "[rollout]\nwrite_paths = maybe\n", [], ["rollout.write_paths", "maybe"]),
    ("key outside a section", "REPLACE:horizon = 5\n", [], ["horizon", "section"]),
    ("line without '='", "REPLACE:[run]\nthis is not a key value line\n", [], ["deck", "key = value"]),
    ("duplicate key", "[bench]\nrepeat = 3\nrepeat = 4\n", [], ["bench.repeat", "more than once"]),
    ("--set unknown key", "", ["rollout.horizonn=4"], ["rollout.horizonn", "--set"]),
    ("--set without =", "", ["rollout.horizon"], ["--set", "rollout.horizon", "section.key=value"]),
    ("--set out of range", "", ["rollout.scenarios=-3"], ["rollout.scenarios", "-3"]),
    ("model file missing", "", ["rollout.model=/nonexistent/model.h5"], ["rollout.model", "/nonexistent/model.h5"]),
    ("a pasted line as a key", "[rollout]\n" + "x" * 500000 + " = 1\n", [],
     ["rollout.xxxx", "(500008 characters)", "closest known option"]),
    ("model file not HDF5", "", ["rollout.model={deckfile}"], ["rollout.model", "HDF5"]),
]

for i, (name, text, sets, needles) in enumerate(CASES):
    out = os.path.join(a.work, f"out{i}")
    deck = os.path.join(a.work, f"deck{i}.ini")
    body = text[len("REPLACE:"):] if text.startswith("REPLACE:") else GOOD.format(out=out) + text
    with open(deck, "w") as f:
        f.write(body)
    sets = [s.replace("{deckfile}", deck) for s in sets]
    r = hptest.run(a.hpt, deck, *sets)
    msg = r.stderr
    hptest.check(r.returncode == 2, f"{name}: exit code 2", f"got {r.returncode}; stderr: {msg}")
    missing = [n for n in needles if n not in msg]
    hptest.check(not missing, f"{name}: message names {needles}", f"missing {missing} in: {msg.strip()}")
    hptest.check(msg.count("\n") <= 8 and len(msg) < 2000, f"{name}: one short message", msg[:2000])
    made = [p for p in os.listdir(out)] if os.path.isdir(out) else []
    hptest.check(not any(p.endswith(".h5") for p in made), f"{name}: no output written", str(made))

# A deck file that does not exist.
r = hptest.run(a.hpt, os.path.join(a.work, "missing.ini"))
hptest.check(r.returncode == 2 and "missing.ini" in r.stderr, "missing deck: exit 2 naming the file", r.stderr)
# An unknown command-line argument.
r = hptest.run(a.hpt, os.path.join(a.work, "deck0.ini"), extra=["--frobnicate"])
hptest.check(r.returncode == 2 and "--frobnicate" in r.stderr, "unknown argument: exit 2 naming it", r.stderr)

hptest.finish()
