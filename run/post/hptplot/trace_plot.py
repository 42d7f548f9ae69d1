"""Train trace (hpt_kind "trace"): minibatch and validation loss over steps on a log scale, the
phases of the run shaded, its events (rollbacks, divergences, ...) as named vertical lines, and
the training forecaster's 5-95 % fans at the start of every predict block (or, without predict
phases, at a few evenly spaced origins). The skip ratio is in the title."""
import os

import numpy as np

from .figure import new_figure
from .hpt_file import deck_value, parse_code_legend, require, table, text

PHASES = {0: ("warmup", "#bdbdbd"), 1: ("full", "#deebf7"), 2: ("predict", "#a1d99b"),
          3: ("correct", "#fdd0a2")}
PREDICT = 2
# Line style per event name; names not listed are drawn grey and dashed.
EVENT_STYLE = {
    "rollback": ("#d62728", "-"),
    "divergence warning": ("#ff7f0e", "--"),
    "divergence critical": ("#8c0000", "-"),
    "predict accepted": ("#2ca02c", ":"),
    "phase change": ("#7f7f7f", ":"),
    "non-finite stop": ("#8c0000", "-"),
    "signal stop": ("#9467bd", "-"),
    "restart": ("#1f77b4", "-."),
}
MAX_FANS = 40         # more would hide the curve; beyond this the origins are thinned evenly
MAX_EVENT_LABELS = 15  # kinds with more events than this get a legend entry but no text labels


def runs_of(values):
    """[(start index, end index exclusive, value)] of the constant runs of `values`."""
    if len(values) == 0:
        return []
    cut = np.flatnonzero(np.diff(values) != 0) + 1
    starts = np.concatenate(([0], cut))
    ends = np.concatenate((cut, [len(values)]))
    return [(int(s), int(e), int(values[s])) for s, e in zip(starts, ends)]


def skip_ratio(steps):
    """Fraction of steps without a backward pass: from the `backward` column when the trace has
    one, else the fraction of predict-phase steps."""
    if "backward" in steps and len(steps["backward"]):
        return 1.0 - float(np.mean(steps["backward"]))
    if len(steps["phase"]) == 0:
        return 0.0
    return float(np.mean(steps["phase"] == PREDICT))


def fan_origins(steps, forecasts):
    """Forecast origins to draw fans at: the latest origin at or before the first step of each
    predict block, else up to 5 evenly spaced origins."""
    origins = np.unique(forecasts["origin"]) if len(forecasts.get("origin", [])) else np.array([])
    if origins.size == 0:
        return []
    blocks = [steps["step"][s] for s, _, v in runs_of(steps["phase"]) if v == PREDICT]
    if blocks:
        chosen = []
        for b in blocks:
            before = origins[origins <= b]
            if before.size:
                chosen.append(int(before[-1]))
        chosen = sorted(set(chosen))
    else:
        chosen = [int(o) for o in origins[np.linspace(0, origins.size - 1, min(5, origins.size))
                                          .round().astype(int)]]
        chosen = sorted(set(chosen))
    if len(chosen) > MAX_FANS:
        chosen = [chosen[i] for i in np.linspace(0, len(chosen) - 1, MAX_FANS).round().astype(int)]
    return chosen


def draw_phases(ax, steps):
    seen = set()
    step = steps["step"]
    for s, e, code in runs_of(steps["phase"]):
        name, color = PHASES.get(code, (f"phase {code}", "#f2f2f2"))
        left = step[s] - 0.5
        right = step[e - 1] + 0.5
        ax.axvspan(left, right, color=color, alpha=0.4, lw=0, zorder=0,
                   label=None if name in seen else f"phase: {name}")
        seen.add(name)


def draw_events(ax, events, names):
    if not events or len(events.get("step", [])) == 0:
        return
    kinds = events["kind"].astype(int)
    labels_at = {}  # step -> labels already written there, to stack names of events at one step
    for code in np.unique(kinds):
        name = names.get(int(code), f"event {code}")
        color, style = EVENT_STYLE.get(name, ("#555555", "--"))
        at = events["step"][kinds == code]
        for i, s in enumerate(at):
            ax.axvline(s, color=color, ls=style, lw=1.2, zorder=3,
                       label=f"{name} ({at.size})" if i == 0 else None)
            if at.size <= MAX_EVENT_LABELS:
                row = labels_at.get(int(s), 0)
                labels_at[int(s)] = row + 1
                ax.text(s, 0.99 - 0.17 * row, f" {name}", transform=ax.get_xaxis_transform(), rotation=90,
                        va="top", ha="left", fontsize=7, color=color, zorder=4)


def draw_fans(ax, steps, forecasts, origins):
    loss = steps["loss"]
    for i, o in enumerate(origins):
        rows = np.flatnonzero(forecasts["origin"] == o)
        rows = rows[np.argsort(forecasts["horizon"][rows])]
        x = o + forecasts["horizon"][rows]
        lo, mid, hi = (np.exp(forecasts[q][rows]) for q in ("q05", "q50", "q95"))
        # The fan opens at the origin from the recent mean loss (the forecaster's own anchor).
        recent = loss[(steps["step"] <= o) & (steps["step"] > o - 10)]
        recent = recent[np.isfinite(recent)]
        if recent.size:
            anchor = float(np.mean(recent))
            x, lo, mid, hi = (np.concatenate(([a], b)) for a, b in
                              ((o, x), (anchor, lo), (anchor, mid), (anchor, hi)))
        ax.fill_between(x, lo, hi, color="#8e0152", alpha=0.35, lw=0, zorder=2,
                        label="forecast 5-95 %" if i == 0 else None)
        ax.plot(x, mid, color="#8e0152", lw=1.2, zorder=2,
                label="forecast median" if i == 0 else None)


def plot(f, path):
    steps = table(f, "steps", path)
    require(steps, ("step", "phase", "loss", "val_loss"), "table /steps", path)
    events = table(f, "events", path) if "events" in f else {}
    names = parse_code_legend(text(f["events"].attrs.get("kinds", ""))) if "events" in f else {}
    forecasts = table(f, "forecasts", path) if "forecasts" in f else {}
    if forecasts:
        require(forecasts, ("origin", "horizon", "q05", "q50", "q95"), "table /forecasts", path)

    fig = new_figure("trace")
    ax = fig.add_subplot(1, 1, 1)
    step, loss, val = steps["step"], steps["loss"], steps["val_loss"]
    draw_phases(ax, steps)
    ok = np.isfinite(loss) & (loss > 0)
    ax.plot(step[ok], loss[ok], color="#1f77b4", lw=0.7, alpha=0.45, zorder=1,
            label="minibatch loss")
    ok = np.isfinite(val) & (val > 0)
    ax.plot(step[ok], val[ok], "o-", color="#d62728", ms=3, lw=1.2, zorder=5,
            label="validation loss")
    origins = fan_origins(steps, forecasts) if forecasts else []
    draw_fans(ax, steps, forecasts, origins)
    draw_events(ax, events, names)
    ax.set_yscale("log")
    ax.set_xlabel("training step (optimizer updates)")
    ax.set_ylabel("loss (cross-entropy, log scale)")
    if step.size:
        first = min(step[0], events["step"].min()) if len(events.get("step", [])) else step[0]
        last = max(step[-1], events["step"].max()) if len(events.get("step", [])) else step[-1]
        ax.set_xlim(first - 0.5, last + 0.5)
    ax.grid(True, which="both", alpha=0.25)
    problem = deck_value(f, "dataset", "style")
    final = val[np.isfinite(val)]
    title = (f"train trace {os.path.basename(path)}" + (f" ({problem})" if problem else "")
             + f": {step.size} steps, skip ratio {100 * skip_ratio(steps):.1f} %")
    if final.size:
        title += f", final validation loss {final[-1]:.4g}"
    ax.set_title(title)
    if origins:
        ax.text(0.01, 0.01, f"fans at {len(origins)} origin(s): "
                + ("predict block starts" if (steps["phase"] == PREDICT).any() else "evenly spaced"),
                transform=ax.transAxes, fontsize=8, va="bottom")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.09), fontsize=8, ncol=5, frameon=False)
    fig.tight_layout()
    return fig
