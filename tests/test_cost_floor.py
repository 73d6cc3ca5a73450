"""benchmarks/cost_floor.py: its fused pass makes the package's sums, its prototype leaves the package as it was, and
its report is computed from the rows it is given."""
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import cost_floor  # noqa: E402


def test_fused_pass_makes_the_package_sums():
    from dppca_nb.backends.statistics import second_moment_sums, clipped_row_sums
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30_000, 7)) * 0.3 + 0.2           # several sub-blocks, about half the rows clipped
    c = np.full(7, 0.15)
    v, G = cost_floor.fused_pass(X, c, 0.9, 0.7)
    Gx = second_moment_sums(X, radius=0.7, center=c)["M"]
    vx = clipped_row_sums(X, radius=0.9, center=c)["row_sum"]
    assert np.abs(G - Gx).max() <= 1e-12 * np.abs(Gx).max()
    assert np.abs(v - vx).max() <= 1e-12 * np.abs(vx).max()


def test_prototype_is_undone_and_keeps_the_budget():
    from dppca_nb.privacy import centering as C
    from dppca_nb.estimators import AnalyzeGaussPCA
    X = np.random.default_rng(1).standard_normal((20_000, 5)) * 0.2
    before = C._release_two_passes
    with cost_floor.clipped_once_around_location():
        assert C._release_two_passes is not before
        e = AnalyzeGaussPCA(2, epsilon=1.0, delta=1e-5, random_state=0).fit(X)
    assert C._release_two_passes is before
    ref = AnalyzeGaussPCA(2, epsilon=1.0, delta=1e-5, random_state=0).fit(X)
    assert e.privacy_["epsilon_spent"] == ref.privacy_["epsilon_spent"]       # the same plan, so the same spend
    assert not np.array_equal(e.components_, ref.components_)                # another release path


def test_report_reads_its_rows():
    rows = [dict(section="scaling", n=n, label=lab, seconds=a + b * x, xtx_seconds=x)
            for n, x in ((10**5, 0.002), (10**6, 0.02), (2 * 10**6, 0.04))
            for lab, a, b in (("defaults", 0.02, 2.5), (list(cost_floor.FITS)[1], 0.003, 1.6))]
    md = cost_floor.report(rows)
    assert "a fixed 20.0 ms" in md and "plus 2.50x one X'X per row volume" in md
    assert "the defaults cost 3.50x one X'X" in md
