"""The cost of NoisyPowerPCA against one X.T @ X (writes benchmarks/noisy_power_cost.md).

Design: `defaults._reference(n, p=20, k=5)` (n = 1e6 rows, p = 20), k = 5, epsilon 1, delta 1e-4, random_state 0.
Rows: the estimator at its defaults, with order_share=0.0 (no ordering step), at a public bound (radius=1.0,
centering="none", with and without the ordering step), and the textbook loop at that bound (a clipped copy of X, then 2 L products with it: the formula
the notebook's tests write out). BLAS limited to one thread by threadpoolctl; each row is the best of `--repeat`
interleaved rounds (`defaults._interleaved`), divided by the best X.T @ X of the same rounds.

The second table backs `gram_affordable`'s rule: at k = 5, the best of 2 runs of forming n A by `second_moment_sums`
(radius 1) against one blocked product `_blocked_products` (the path above the rule's bound), on 16e6 entries
(n = 16e6 / p rows of Gaussian entries of norm about 1), for p from 100 to 1600.

    OPENBLAS_NUM_THREADS=1 python benchmarks/noisy_power_cost.py [--n 1000000] [--repeat 3]
"""
import argparse
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import defaults as D  # noqa: E402


def textbook(X, k, seed=0, L=10, radius=1.0, epsilon=1.0, delta=1e-4):
    from dppca_nb.algorithms.noisy_power import noisy_power_sigma
    from dppca_nb.backends.clipping import clip_rows
    from dppca_nb.core.linalg import random_orthonormal, orthonormalize
    n, p = X.shape
    sig = noisy_power_sigma(n, epsilon, delta, L, radius)[1]
    rng = np.random.default_rng(seed)
    Xc = clip_rows(X, radius)[0]
    Y = random_orthonormal(p, k, rng)
    for _ in range(L):
        Y = orthonormalize(Xc.T @ (Xc @ Y) / n + sig * rng.standard_normal((p, k)))
    return Y


def crossover(ps=(100, 200, 400, 800, 1600), k=5, entries=16_000_000, repeat=2):
    "Rows (p, n, seconds to form n A, seconds of one blocked product, their ratio)."
    from dppca_nb.algorithms.noisy_power import _blocked_products
    from dppca_nb.backends.moments import second_moment_sums
    rng, rows = np.random.default_rng(0), []
    for p in ps:
        n = entries // p
        X = rng.standard_normal((n, p)) / np.sqrt(p)
        Y = np.linalg.qr(rng.standard_normal((p, k)))[0]
        prod = _blocked_products(X, 1.0, None)[0]
        best = D._interleaved([("gram", lambda X=X: second_moment_sums(X, radius=1.0)), ("product", lambda prod=prod, Y=Y: prod(Y))], repeat)[0]
        rows.append((p, n, best["gram"], best["product"], best["gram"] / best["product"]))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    from threadpoolctl import threadpool_limits
    from dppca_nb.estimators import NoisyPowerPCA
    X = D._reference(a.n, p=20, k=5)[0]
    kw = dict(n_components=5, epsilon=1.0, delta=1e-4, random_state=0)
    fns = [("X.T @ X", lambda: X.T @ X),
           ("NoisyPowerPCA defaults", lambda: NoisyPowerPCA(**kw).fit(X)),
           ("NoisyPowerPCA order_share=0.0", lambda: NoisyPowerPCA(**kw, order_share=0.0).fit(X)),
           ('NoisyPowerPCA radius=1.0, centering="none"', lambda: NoisyPowerPCA(**kw, radius=1.0, centering="none").fit(X)),
           ('NoisyPowerPCA radius=1.0, centering="none", order_share=0.0',
            lambda: NoisyPowerPCA(**kw, radius=1.0, centering="none", order_share=0.0).fit(X)),
           ("textbook loop at radius 1 (clipped copy, 2L products)", lambda: textbook(X, 5))]
    with threadpool_limits(limits=1, user_api="blas"):
        best, cpu = D._interleaved(fns, a.repeat)
        cross = crossover()
    ref = best["X.T @ X"]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = ["# NoisyPowerPCA: cost against one X.T @ X", "",
             f"Written by `benchmarks/noisy_power_cost.py` on commit {commit}: n = {a.n:,}, p = 20, k = 5, epsilon 1, "
             "delta 1e-4, random_state 0, the reference design (`defaults._reference`). One BLAS thread (threadpoolctl, "
             "OPENBLAS_NUM_THREADS=1), a machine of 2 shared cores; each figure is the best wall time of "
             f"{a.repeat} interleaved rounds divided by the best X.T @ X of the same rounds. The defaults include the "
             "ordering step (order_share 0.1), as does the public bound's first row; the textbook loop is the formula the notebook's tests write out.", "",
             "| what | best wall (s) | x one X.T @ X |", "|---|---:|---:|"]
    lines += [f"| {name} | {best[name]:.3f} | {best[name] / ref:.1f} |" for name, _ in fns]
    lines += ["", "## The rule of `gram_affordable`", "",
              "Forming n A once (`second_moment_sums`, radius 1) against one blocked product sum y y^T Y (k = 5), best of "
              "2 interleaved runs on 16e6 entries, one BLAS thread. The p x p path is the cheaper one while the ratio is "
              "below L: at L = 10, up to p of about 800, the rule's bound 16 L max(k, 5).", "",
              "| p | n | form n A (s) | one product (s) | ratio |", "|---:|---:|---:|---:|---:|"]
    lines += [f"| {p} | {n:,} | {g:.3f} | {b:.3f} | {r:.1f} |" for p, n, g, b, r in cross]
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "noisy_power_cost.md")
    open(out, "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
