"""Bad-input checks of nbs/03_privacy/06_centering.ipynb (where each function is explained), moved out of its reading
flow: the notebook's own calls and message fragments."""
import numpy as np
from fastcore import test as fct          # fct.test_fail: pytest would collect a bare test_fail

from dppca_nb.privacy.centering import location_table, plan_clipped_count, radius_grid, radius_grid_value


def test_radius_grid_refusals():
    a_g, w_g, K_g = radius_grid((0.5, 2.0))
    fct.test_fail(lambda: radius_grid_value(K_g + 1, (0.5, 2.0)), contains="j: expected a grid point 0..89")
    fct.test_fail(lambda: radius_grid((2.0, 1.0)), contains="bounds: expected lo < hi")


def test_location_table_refuses_a_foreign_grid():
    fct.test_fail(lambda: location_table(np.array([-1.0, 0.0, 2.0])), contains="grid: expected a location_grid")


def test_clipped_count_refuses_a_count_over_its_bound():
    pc_c = plan_clipped_count(10 ** 4, 0.01)
    fct.test_fail(lambda: pc_c.release(None, 0, count=10 ** 4 + 1), contains="count: expected a count of at most")
