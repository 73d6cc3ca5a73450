"""benchmarks/location_rows.py: at the package's factor its subsample rows are the package's, and the package is left
as it was."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import location_rows  # noqa: E402


def test_factor_4_is_the_package_rule_and_is_undone():
    from dppca_nb.privacy import centering as C
    from dppca_nb.privacy.grid_releases import fit_subsample_rows
    before = C.fit_subsample_rows
    cases = [(10 ** 5, 40, 0.1, 0.05), (10 ** 6, 100, 0.1, None), (5000, 20, None, 0.05), (10 ** 7, 300, 0.02, 0.01)]
    with location_rows.factor_of(4) as rows:
        assert C.fit_subsample_rows is rows
        for n, p, el, er in cases:
            assert rows(n, p, location_epsilon=el, radius_epsilon=er) == fit_subsample_rows(n, p, location_epsilon=el, radius_epsilon=er)
    with location_rows.factor_of(1) as rows:
        assert rows(10 ** 7, 300, location_epsilon=0.02) < fit_subsample_rows(10 ** 7, 300, location_epsilon=0.02)
    assert C.fit_subsample_rows is before
