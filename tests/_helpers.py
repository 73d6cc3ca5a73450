"""Shared by the privacy tests: run a registered algorithm and read what it publishes, compare published values
exactly, and derive the option variants to test from the registry's parameter descriptions.

Everything here is read from `dppca_nb.algorithms.registry.algorithms()`: a newly registered mechanism is covered by
every test that parametrizes over `ALGORITHMS` without editing a test file.
"""
import math
import warnings

import numpy as np

from dppca_nb.algorithms.registry import algorithms, parameter
from dppca_nb.privacy.contract import Release

EPS, DLT = 1.0, 1e-5

ALGORITHMS = sorted(algorithms().values(), key=lambda a: a.key)
KEYS = [a.key for a in ALGORITHMS]


def budget(alg, epsilon=EPS, delta=DLT) -> tuple:
    "(epsilon, delta) to run `alg` with: delta = 0 for a pure algorithm."
    return epsilon, (0.0 if alg.measure == "pure" else delta)


def run(alg, X, k=2, *, seed=0, epsilon=EPS, delta=DLT, **options) -> Release:
    "The `Release` of `alg` on X with its quick options (for a fast run), then `options`, under the seed `seed`."
    eps, dlt = budget(alg, epsilon, delta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")              # PrivacyWarnings of deliberately weak settings
        return alg.run(X, k, eps, dlt, random_state=seed, **{**alg.quick, **options})


def plan(alg, n, p, k=2, *, epsilon=EPS, delta=DLT, **options):
    "The `Plan` of `alg` for an n x p data set (no data read)."
    eps, dlt = budget(alg, epsilon, delta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return alg.plan(n, p, None if alg.output == "covariance" else k, eps, dlt, **{**alg.quick, **options})


def published(release: Release) -> dict:
    """What a release publishes besides its value: the contract's fields (as plain data) and the extras (further
    released values). The diagnostics are curator-only and left out."""
    assert isinstance(release, Release), type(release)
    return {"contract": release.contract.as_dict(), "extras": dict(release.extras)}


# --- exact comparison ------------------------------------------------------------------------------------------

def diff(a, b, path=""):
    "Paths at which a and b differ (exact comparison: floats bit-equal up to NaN == NaN, arrays element-wise)."
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}.{k}: only in one ({'first' if k in a else 'second'})" for k in set(a) ^ set(b)]
        for k in a.keys() & b.keys():
            out += diff(a[k], b[k], f"{path}.{k}" if path else str(k))
        return out
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        A, B = np.asarray(a), np.asarray(b)
        if A.shape != B.shape or A.dtype != B.dtype: return [f"{path}: {A.dtype}{A.shape} != {B.dtype}{B.shape}"]
        same = (A == B) | (np.isnan(A) & np.isnan(B)) if A.dtype.kind in "fc" else A == B
        return [] if np.all(same) else [f"{path}: arrays differ ({int((~np.asarray(same)).sum())} entries)"]
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if type(a) is not type(b) or len(a) != len(b): return [f"{path}: {a!r} != {b!r}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in diff(x, y, f"{path}[{i}]")]
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b): return []
    if hasattr(a, "__dict__") and type(a) is type(b) and not isinstance(a, type):
        return diff(vars(a), vars(b), path)          # a record (a ledger's Spend, ...): field by field
    try:
        same = bool(a == b) and type(a) is type(b)
    except Exception:
        same = False
    return [] if same else [f"{path}: {a!r} != {b!r}"]


def random_keys(outputs: list) -> set:
    """Top-level keys (of dicts, or `extras` of `published` dicts) whose values differ between runs on the SAME data
    under different seeds: noisy releases (or post-processing of them). The other keys are deterministic, so on
    neighbouring data they must be identical."""
    first, out = outputs[0], set()
    for other in outputs[1:]:
        out |= {k for k in first.keys() | other.keys() if diff(first.get(k), other.get(k))}
    return out


def public_differences(runs_x: list, runs_y: list) -> list:
    """Differences between what neighbours publish under the same seeds (`runs_x[i]`, `runs_y[i]`: dicts of
    published values of seed i) at keys that are not random on either data set (see `random_keys`)."""
    noisy = random_keys(runs_x) | random_keys(runs_y)
    out = []
    for a, b in zip(runs_x, runs_y):
        out += diff({k: v for k, v in a.items() if k not in noisy}, {k: v for k, v in b.items() if k not in noisy})
    return sorted(set(out))


# --- the option variants to test, from the parameter descriptions -------------------------------------------

def _choices(alg, name) -> list:
    "The values an option accepts that are not its default: every allowed string, the other bool, a radius of 2."
    par, default = parameter(name, alg.parameters), alg.options[name]
    out = [v for a in par.accepts if isinstance(a, tuple) for v in a]
    if "bool" in par.accepts and isinstance(default, bool): out.append(not default)
    if name == "radius": out.append(2.0)                  # a bound other than the default 1
    return [v for v in out if not (type(v) is type(default) and v == default)]


def _plans(alg, options, n, p, k) -> bool:
    try:
        plan(alg, n, p, k, **options)
        return True
    except (ValueError, TypeError):
        return False


def variants(alg, n=40, p=5, k=2, skip=("progress",)) -> list:
    """Option dicts to run `alg` with: the defaults, then each value an option accepts besides its default (alone, or
    with the first other variant that makes it valid, e.g. a private winsorization radius with winsorized pairs)."""
    singles = [{o: v} for o in alg.options if o not in skip for v in _choices(alg, o)]
    good = [s for s in singles if _plans(alg, s, n, p, k)]
    out = [{}] + good
    for s in singles:
        if s in good: continue
        for g in good:
            if set(g) != set(s) and _plans(alg, {**g, **s}, n, p, k):
                out.append({**g, **s})
                break
    return out


def variant_id(alg, options) -> str:
    return alg.key + ("" if not options else "[" + ",".join(f"{k}={v}" for k, v in options.items()) + "]")
