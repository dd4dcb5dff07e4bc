#!/usr/bin/python3
"""Writes evals/testdata/scipy_pvalues.jsonl.gz: p-values that scipy
computes for random cases of the tests evals implements, read by
TestAgainstScipy so that CI needs no Python.

Run from the repository root with Debian's Python and scipy
(apt-get install python3-scipy; scipy 1.10.1 on Debian 12):

    /usr/bin/python3 evals/testdata/gen/scipy_reference.py

Each line is one case: {"kind": ..., the inputs, "p": {alternative: p}}
with the p-value of each alternative ("two-sided", "less", "greater").
The kinds, and the scipy call that gives their p-values:

  binom        k, n, q: scipy.stats.binomtest(k, n, q, alternative)
  mcnemar      higher, lower: binomtest on the discordant pairs, the
               alternative "less" being the candidate lower:
               binomtest(lower, higher + lower, 0.5, "greater")
  wilcox_exact d without ties among the non-zero |d| (zeros allowed):
               scipy.stats.wilcoxon(d[d != 0], method="exact"); scipy's
               exact method refuses zeros, and evals drops them before
               ranking (zero_method="wilcox"), so scipy gets the
               non-zero differences
  wilcox_ties  d with ties and zeros, n <= 15: the exact conditional
               distribution of the signed-rank statistic, by
               scipy.stats.permutation_test over every sign assignment
               (n_resamples=inf) of the non-zero differences, statistic
               r_plus on scipy.stats.rankdata mid-ranks
  wilcox_approx d with more than 100 non-zero differences, ties and
               zeros: scipy.stats.wilcoxon(d, zero_method="wilcox",
               correction=True, method="approx")

In the Wilcoxon cases a difference may be +Inf or -Inf, which is how
Compare ranks a row where one side has no value: above every finite |d|,
tied among themselves. scipy gets instead a finite value larger than every
other |d| (big), which ranks the same.
"""

import gzip
import json
import math
import os
import sys

import numpy as np
import scipy
from scipy import stats

ALTERNATIVES = ("two-sided", "less", "greater")
rng = np.random.default_rng(16)


def out_path():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "..", "scipy_pvalues.jsonl.gz")


def finite_for_scipy(d, big):
    return [big if x == math.inf else -big if x == -math.inf else x for x in d]


def encode(d):
    # JSON has no Inf: write it as the strings "+Inf" and "-Inf".
    return [("+Inf" if x > 0 else "-Inf") if math.isinf(x) else (int(x) if float(x).is_integer() else x) for x in d]


def binom_cases(n_cases):
    for _ in range(n_cases):
        n = int(rng.choice([rng.integers(0, 11), rng.integers(0, 60), rng.integers(0, 400)]))
        k = int(rng.integers(0, n + 1))
        q = 0.5 if rng.random() < 0.6 else round(float(rng.uniform(0.01, 0.99)), 3)
        if n == 0:
            continue
        yield {"kind": "binom", "k": k, "n": n, "q": q,
               "p": {a: float(stats.binomtest(k, n, q, alternative=a).pvalue) for a in ALTERNATIVES}}


def mcnemar_cases(n_cases):
    for _ in range(n_cases):
        scale = int(rng.choice([6, 30, 200]))
        higher, lower = int(rng.integers(0, scale)), int(rng.integers(0, scale))
        n = higher + lower
        if n == 0:
            p = {a: 1.0 for a in ALTERNATIVES}
        else:
            p = {
                "two-sided": float(stats.binomtest(higher, n, 0.5).pvalue),
                "less": float(stats.binomtest(lower, n, 0.5, alternative="greater").pvalue),
                "greater": float(stats.binomtest(higher, n, 0.5, alternative="greater").pvalue),
            }
        yield {"kind": "mcnemar", "higher": higher, "lower": lower, "p": p}


def wilcox_exact_cases(n_cases):
    for _ in range(n_cases):
        n = int(rng.choice([rng.integers(1, 11), rng.integers(1, 101)]))
        # Distinct magnitudes: a permutation of 1..3n, scaled, random signs.
        mags = rng.permutation(np.arange(1, 3 * n + 1))[:n] / 8
        d = list(mags * rng.choice([-1, 1], size=n))
        zeros = int(rng.integers(0, 4)) if rng.random() < 0.3 else 0
        d = d + [0.0] * zeros
        rng.shuffle(d)
        nonzero = np.array([x for x in d if x != 0])
        p = {a: float(stats.wilcoxon(nonzero, alternative=a, method="exact").pvalue) for a in ALTERNATIVES}
        yield {"kind": "wilcox_exact", "d": encode(d), "p": p}


def signed_rank_permutation(d):
    x = np.array([v for v in d if v != 0], dtype=float)
    ranks = stats.rankdata(np.abs(x))

    def r_plus(sample, axis):
        return np.sum(ranks * (sample > 0), axis=axis)

    p = {}
    for a in ALTERNATIVES:
        res = stats.permutation_test((x,), r_plus, permutation_type="samples", vectorized=True,
                                     n_resamples=np.inf, alternative=a)
        p[a] = float(res.pvalue)
    return p


def wilcox_ties_cases(n_cases):
    for _ in range(n_cases):
        n = int(rng.integers(1, 16))
        d = [float(v) for v in rng.integers(-4, 5, size=n)]
        if rng.random() < 0.3:
            for i in rng.choice(n, size=int(rng.integers(1, min(n, 3) + 1)), replace=False):
                d[i] = math.inf if rng.random() < 0.5 else -math.inf
        if sum(x != 0 for x in d) < 2:
            continue  # permutation_test wants two observations; wilcox_exact covers one
        big = 1000.0
        yield {"kind": "wilcox_ties", "d": encode(d), "p": signed_rank_permutation(finite_for_scipy(d, big))}


def wilcox_approx_cases(n_cases):
    for _ in range(n_cases):
        nonzero = int(rng.integers(101, 301))
        spread = int(rng.choice([3, 20, 1000]))
        d = [float(v) for v in rng.integers(1, spread + 1, size=nonzero) * rng.choice([-1, 1], size=nonzero)]
        # A shift, so that some cases are significant.
        if rng.random() < 0.5:
            d = [x + 1 if x > 0 else x for x in d] if rng.random() < 0.5 else [x - 1 if x < 0 else x for x in d]
        d += [0.0] * int(rng.integers(0, 20))
        if rng.random() < 0.3:
            for i in rng.choice(len(d), size=int(rng.integers(1, 10)), replace=False):
                if d[i] != 0:
                    d[i] = math.inf if d[i] > 0 else -math.inf
        rng.shuffle(d)
        big = 10.0 * (spread + 2)
        finite = np.array(finite_for_scipy(d, big))
        p = {a: float(stats.wilcoxon(finite, zero_method="wilcox", correction=True, alternative=a, method="approx").pvalue)
             for a in ALTERNATIVES}
        yield {"kind": "wilcox_approx", "d": encode(d), "p": p}


def main():
    cases = []
    for gen, count in ((binom_cases, 2500), (mcnemar_cases, 2500), (wilcox_exact_cases, 3000),
                       (wilcox_ties_cases, 2000), (wilcox_approx_cases, 1000)):
        cases.extend(gen(count))
        print(f"{gen.__name__}: {len(cases)} cases so far", file=sys.stderr)
    header = {"kind": "header", "scipy": scipy.__version__, "numpy": np.__version__, "seed": 16, "cases": len(cases)}
    with gzip.GzipFile(out_path(), "wb", mtime=0) as f:
        for case in [header] + cases:
            f.write((json.dumps(case, separators=(",", ":")) + "\n").encode())


if __name__ == "__main__":
    main()
