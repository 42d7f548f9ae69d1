#!/usr/bin/python3
"""Reference values of the learned level forecaster's features (src/forecast/level_features.cpp),
computed here by an independent NumPy implementation of their definitions (docs/method.md),
for tests/unit/test_level_features.cpp.

  tests/data/level-features/make_reference.py     (writes curves.csv and features.csv beside it)

curves.csv: three seeded synthetic curves in hpt's CSV layout (run,step,loss,lr): a noisy power law
under a cosine schedule logged every step; a curve logged every 5 steps under a warmup-stable-decay
schedule; a plateau with a spike under a step schedule. features.csv: per (run, n, h, with_lr) the
level `last` and the 38 features, with the history the first n entries and with_lr = 0 meaning the
learning rates are withheld.
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def lmean(x):
    return float(np.log(max(np.mean(np.maximum(x, 1e-12)), 1e-12)))


def loglin_line(steps, loss, n, window=100):
    """(value at the newest step, slope per step) of the least-squares line of log loss over the
    entries with step in (t - window, t] among the first n; `last` and 0 with fewer than two."""
    t = steps[n - 1]
    sel = (steps[:n] > t - window)
    if sel.sum() < 2:
        return lmean(loss[max(0, n - 10):n]), 0.0
    b1, b0 = np.polyfit((steps[:n][sel] - t).astype(float), np.log(np.maximum(loss[:n][sel], 1e-12)), 1)
    return float(b0), float(b1)


def loglin_skill(steps, loss, n, lag):
    """e_last² / (e_last² + e_loglin²) of forecasts lag steps ahead from four backtest origins."""
    t = steps[n - 1]
    e_last = e_loglin = 0.0
    for j in range(4):
        at = int(np.sum(steps[:n] <= t - lag - (j * lag) // 4))
        if at < 20:
            break
        to = int(np.sum(steps[:n] <= steps[at - 1] + lag))
        target = lmean(loss[max(0, to - 10):to])
        b0, b1 = loglin_line(steps, loss, at)
        e_last += (lmean(loss[max(0, at - 10):at]) - target) ** 2
        e_loglin += (b0 + b1 * (steps[to - 1] - steps[at - 1]) - target) ** 2
    return e_last / (e_last + e_loglin) if e_last + e_loglin > 0 else 0.0


def persistence(a, b):
    """a·b / max(a², b²), at least 0 (0 when both are 0)."""
    m = max(a * a, b * b)
    return max(a * b / m, 0.0) if m > 0 else 0.0


def features(steps, loss, lr, n, h):
    t, s0 = steps[n - 1], steps[0]
    last = lmean(loss[max(0, n - 10):n])

    def window(a, b):
        return max(0, n - b), max(0, n - a)

    def W(a, b):
        lo, hi = window(a, b)
        return lmean(loss[lo:hi])

    def C(a, b):
        lo, hi = window(a, b)
        return float(np.mean(steps[lo:hi]))

    m50, m200 = W(0, 50), W(0, 200)
    tr50 = (m50 - W(50, 100)) / (C(0, 50) - C(50, 100)) * h if n >= 100 else 0.0
    tr200 = (m200 - W(200, 400)) / (C(0, 200) - C(200, 400)) * h if n >= 400 else 0.0
    def slope(k):  # d log loss / d log(step - first + 1) over the newest k entries
        x = np.log(steps[n - k:n] - s0 + 1.0)
        y = np.log(np.maximum(loss[n - k:n], 1e-12))
        xm = x.mean()
        return float(np.sum((x - xm) * (y - y.mean())) / np.sum((x - xm) ** 2))

    ahead_log = np.log((t - s0 + 1.0 + h) / (t - s0 + 1.0))
    trlog = slope(n // 2) * ahead_log if n >= 40 else 0.0
    trlog_all = slope(n) * ahead_log if n >= 40 else 0.0
    trlog_quarter = slope(n // 4) * ahead_log if n >= 80 else 0.0
    s50, s200 = tr50 / h, tr200 / h
    sl_half = slope(n // 2) if n >= 40 else 0.0
    sl_all = slope(n) if n >= 40 else 0.0
    sl_quarter = slope(n // 4) if n >= 80 else 0.0
    b0, b1 = loglin_line(steps, loss, n)
    ll_change = min(max(b0 + b1 * h - last, -1.0), 1.0)
    straight = persistence(b1, loglin_line(steps, loss, n, 400)[1])
    q50, q200 = loglin_skill(steps, loss, n, 50), loglin_skill(steps, loss, n, 200)

    def noise(w):
        if n <= 5:
            return 0.0
        y = np.log(np.maximum(loss[max(0, n - w):n], 1e-12))
        return float(np.std(np.diff(y)) / np.sqrt(2))

    sd, sd200 = noise(51), noise(201)

    def above_recent(w):  # blocks of 10 counted back from the newest, inside the newest w
        means = [lmean(loss[max(0, n - 10):n])]
        j = n - 20
        while j >= max(0, n - w):
            means.append(lmean(loss[j:j + 10]))
            j -= 10
        return last - min(means)

    best = min(lmean(loss[j:min(j + 10, n)]) for j in range(0, max(1, n - 9), 10))
    lh = np.log(h)
    known, now, end, anneal, ahead, change = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    if lr is not None and steps[-1] >= t + h:
        fut = lr[(steps > t) & (steps <= t + h)]
        if len(fut):
            peak = max(float(np.max(lr[:n])), 1e-30)
            lnow = float(lr[n - 1])
            known = 1.0
            now, end = lnow / peak, float(fut[-1]) / peak
            anneal = float(np.mean(np.maximum(lnow - fut, 0))) / peak
            ahead = float(np.sum(fut)) / max(float(np.sum(lr[:n])), 1e-30)
            change = max(np.log(max(float(fut[-1]), 1e-30) / lnow), -7.0) if lnow > 0 else 0.0
    d50, d200 = m50 - last, m200 - last
    f = [1.0, d50, d200, d50 * lh / 5, tr50, tr200, trlog, sd, sd * lh, last - best, anneal,
         anneal * sd * 10, change * sd, ahead, ahead * trlog, now, end, anneal * lh, known, lh / 5,
         np.log(t - s0 + 1.0) / 8, min(tr50, 0.0), min(trlog, 0.0), W(0, 20) - last, sd200,
         above_recent(50), above_recent(100), above_recent(200), trlog_all, trlog_quarter,
         tr50 * persistence(s50, s200), trlog * persistence(sl_quarter, sl_half),
         trlog_all * persistence(sl_half, sl_all), ll_change,
         ll_change * q50, ll_change * q200, ll_change * q50 * straight, ll_change * q200 * straight]
    return last, f


def curves():
    rng = np.random.default_rng(7)
    out = {}
    s = np.arange(1, 601)
    lr = 0.1 * np.where(s <= 20, s / 20, 0.5 * (1 + np.cos(np.pi * (s - 20) / 580)))
    out["cosine"] = (s, (0.3 + 2.0 * s ** -0.5) * np.exp(0.1 * rng.standard_normal(len(s))), lr)
    s = np.arange(3, 2003, 5)
    lr = 0.01 * np.where(s < 1600, 1.0, np.maximum(0.0, (2003 - s) / 403))
    out["sparse wsd"] = (s, (0.1 + 1.5 * (s + 1.0) ** -0.7) * np.exp(0.05 * rng.standard_normal(len(s))), lr)
    s = np.arange(0, 500)
    loss = 1.2 + 0.02 * rng.standard_normal(len(s))
    loss[200:215] *= 3.0
    lr = 0.5 * np.where(s < 250, 1.0, np.where(s < 375, 0.1, 0.01))
    out["plateau, spike"] = (s, np.abs(loss), lr)
    return out


def main():
    cs = curves()
    with open(os.path.join(HERE, "curves.csv"), "w") as f:
        f.write("run,step,loss,lr\n")
        for name, (s, loss, lr) in cs.items():
            for i in range(len(s)):
                f.write(f"\"{name}\",{s[i]},{float(loss[i])!r},{float(lr[i])!r}\n")
    with open(os.path.join(HERE, "features.csv"), "w") as f:
        f.write("run,n,h,with_lr,last," + ",".join(f"f{j}" for j in range(38)) + "\n")
        for name, (s, loss, lr) in cs.items():
            # Values as the CSV holds them (repr round-trips exactly).
            for n in (1, 6, 9, 10, 39, 40, 99, 100, 150, 250, 399, 400, len(s)):
                if n > len(s):
                    continue
                for h in (5, 10, 50, 200):
                    for with_lr in (1, 0):
                        last, feats = features(s, loss, lr if with_lr else None, n, h)
                        f.write(f"\"{name}\",{n},{h},{with_lr},{float(last)!r}," +
                                ",".join(repr(float(v)) for v in feats) + "\n")


if __name__ == "__main__":
    main()
