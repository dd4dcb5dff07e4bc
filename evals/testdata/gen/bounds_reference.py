#!/usr/bin/python3
"""Writes evals/testdata/bounds_reference.jsonl.gz: for random inputs, what
scipy and statsmodels give for each bound in evals/bounds.go, so that
bounds_test.go checks the Go code against an independent implementation.

    /usr/bin/python3 evals/testdata/gen/bounds_reference.py

Seeded: the output reproduces. 10,000 cases per kind.
- wilson: statsmodels proportion_confint(method="wilson") at alpha = 2(1-c)
- cluster: the Korn-Graubard effective n with scipy's t quantile, written
  here from the paper's formulas (no library computes it)
- tango: Tango (1998)'s score bound for paired proportions, solved here
  from its definition: the constrained maximum-likelihood estimate of
  p01 found by maximising the log-likelihood numerically (not by the
  quadratic the Go code solves), then the score equation by bisection in
  floating point. The draws of the earlier newcombe kind are kept, so that the
  mean cases after them reproduce.
- mean: the t quantile from mpmath (see t_ppf) and numpy's sd (ddof=1)
"""
import gzip, json, math, random
import numpy as np
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

import mpmath
mpmath.mp.dps = 40


def profile_q(x, y, n, d):
    """The p01 that maximises x log(p01 + d) + y log p01 + (n-x-y) log(1 - 2 p01 - d)
    (p10 = p01 + d), by bisection on the derivative, which falls in p01."""
    lo, hi = max(0.0, -d), (1 - d) / 2
    def slope(q):
        s = 0
        if x: s += x / (q + d)
        if y: s += y / q
        if n - x - y: s -= 2 * (n - x - y) / (1 - 2 * q - d)
        return s
    for _ in range(64):
        mid = (lo + hi) / 2
        if slope(mid) > 0: lo = mid
        else: hi = mid
    return (lo + hi) / 2


def tango_low(x, y, n, c):
    """The lower root of (x - y - n d) / sqrt(n (2 q(d) + d (1 - d))) = z."""
    z = float(mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(c) - 1))
    est = (x - y) / n
    if est <= -1:
        return -1.0
    lo, hi = -1.0, est
    for _ in range(64):
        mid = (lo + hi) / 2
        v = n * (2 * profile_q(x, y, n, mid) + mid * (1 - mid))
        if v <= 0 or (x - y - n * mid) / math.sqrt(v) > z: lo = mid
        else: hi = mid
    return float((lo + hi) / 2)


def t_ppf(c, df):
    """Student's t quantile for c > 1/2, solved with mpmath to 40 digits:
    scipy 1.10's t.ppf (cephes stdtrit) is off by ~5e-9 relative, and its
    root, put back into mpmath's CDF, misses c by ~7e-10."""
    def upper(t):
        return mpmath.betainc(df / 2, 0.5, 0, df / (df + t * t), regularized=True) / 2 - (1 - c)
    return float(mpmath.findroot(upper, mpmath.mpf(stats.t.ppf(c, df))))


rng = random.Random(27)
N = 10000
out = []
for _ in range(N):
    c = rng.choice([0.8, 0.9, 0.95, 0.975, 0.99])
    n = rng.randint(1, 500)
    k = rng.randint(0, n)
    lo, hi = proportion_confint(k, n, alpha=2 * (1 - c), method="wilson")
    out.append({"kind": "wilson", "c": c,
                "k": k, "n": n, "low": lo, "high": hi})
for _ in range(N):
    c = rng.choice([0.8, 0.9, 0.95, 0.99])
    n = rng.randint(2, 60)
    K = rng.randint(2, 5)
    q = rng.random()
    cases = []
    for i in range(n):
        r = rng.choice([K, rng.randint(0, K)]) if rng.random() < q else rng.randint(0, K)
        cases.append([r, K])
    passed = sum(r for r, _ in cases); total = n * K
    p = passed / total
    v = sum((r - p * m) ** 2 for r, m in cases) / (n * (n - 1) * K * K)
    neff = total
    if v > 0 and 0 < p < 1:
        neff = min(neff, p * (1 - p) / v)
    z = t_ppf(c, n - 1)
    z2 = z * z
    center = (p + z2 / (2 * neff)) / (1 + z2 / neff)
    half = z / (1 + z2 / neff) * math.sqrt(p * (1 - p) / neff + z2 / (4 * neff * neff))
    lo, hi = max(0, center - half), min(1, center + half)
    if p == 0: lo = 0
    if p == 1: hi = 1
    out.append({"kind": "cluster", "c": c, "cases": cases, "low": lo, "high": hi})
for _ in range(N):
    c = rng.choice([0.8, 0.9, 0.95, 0.99])
    n = rng.randint(1, 80)
    pc, pb = rng.random(), rng.random()
    cand = [1 if rng.random() < pc else 0 for _ in range(n)]
    base = [x if rng.random() < 0.5 else (1 if rng.random() < pb else 0) for x in cand]
    a = sum(1 for x, y in zip(cand, base) if x and y); b = sum(1 for x, y in zip(cand, base) if x and not y)
    cc = sum(1 for x, y in zip(cand, base) if y and not x); d = n - a - b - cc
    out.append({"kind": "tango", "c": c, "cand": cand, "base": base, "low": tango_low(b, cc, n, c)})
for _ in range(N):
    c = rng.choice([0.8, 0.9, 0.95, 0.99])
    n = rng.randint(2, 50)
    xs = [round(rng.gauss(rng.uniform(-5, 5), rng.uniform(0.01, 3)), 6) for _ in range(n)]
    arr = np.array(xs)
    half = t_ppf(c, n - 1) * arr.std(ddof=1) / math.sqrt(n)
    out.append({"kind": "mean", "c": c, "x": xs, "low": float(arr.mean() - half), "high": float(arr.mean() + half)})
with gzip.open("evals/testdata/bounds_reference.jsonl.gz", "wt") as f:
    for o in out:
        f.write(json.dumps(o) + "\n")
