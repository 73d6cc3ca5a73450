"""Bad-input checks of nbs/03_privacy/01_accounting.ipynb (where the ledger is explained), moved out of its reading
flow: the notebook's own calls and message fragments."""
from fastcore import test as fct          # fct.test_fail: pytest would collect a bare test_fail

from dppca_nb.privacy.accounting import PrivacyAccountant


def test_a_stated_budget_must_match_the_noise():
    fct.test_fail(lambda: PrivacyAccountant().spend(0.1, 1e-6, sigma=1.0, sensitivity=1.0), contains="is not (0.1, 1e-06)-DP")


def test_spend_contract_refuses_a_tuple():
    fct.test_fail(lambda: PrivacyAccountant().spend_contract((1.0, 1e-5)), contains="contract")


def test_profile_is_checked_where_the_contract_is_made():
    from dppca_nb.privacy.contract import Contract
    mk = lambda **kw: Contract("Gaussian steps", 1.0, 1e-5, noise="gaussian", **kw)
    fct.test_fail(lambda: mk(profile=0.5), contains="profile")
    fct.test_fail(lambda: mk(profile=(0.5, 0.1, 0.2)), contains="profile")
    fct.test_fail(lambda: mk(profile=(0.0, (0.1,))), contains="profile")
    fct.test_fail(lambda: mk(profile=(float("inf"), (0.1,))), contains="profile")
    fct.test_fail(lambda: mk(profile=(0.5, (-0.1,))), contains="profile")
    fct.test_fail(lambda: Contract("pure", 1.0, measure="pure", profile=(0.5, ())), contains="profile")
    c = mk(profile=(0.5, [0.1, 0.2]))
    assert c.profile == (0.5, (0.1, 0.2)) and all(type(x) is float for x in (c.profile[0], *c.profile[1]))
    assert c.as_dict()["profile"] == (0.5, (0.1, 0.2))


def test_a_profile_entry_round_trips_and_composes_with_plain_entries():
    import math, pickle
    from dppca_nb.privacy.accounting import Spend, compose, gaussian_after_pure, pure_gaussian_epsilon
    from dppca_nb.privacy.contract import Contract
    mu = gaussian_after_pure(1.0, 1e-5, [0.1])
    c = Contract("Gaussian steps", 1.0, 1e-5, noise="gaussian", profile=(mu, (0.1,)))
    led = PrivacyAccountant(None, 2e-5)
    s = led.spend_contract(c, "a")
    assert s.kind == "gaussian" and s.pure == (0.1,) and math.isclose(s.rho, mu * mu / 2)
    assert pickle.loads(pickle.dumps(s)) == s
    led.spend(0.3, 0.0, label="a pure count")                       # added plainly
    led.spend_contract(c, "b")                                       # two profiles: ratios in quadrature
    want = 0.3 + pure_gaussian_epsilon(2e-5, (0.1, 0.1), math.sqrt(2) * mu)
    assert math.isclose(led.spent(), want, rel_tol=1e-9) and led.spent() < 2.3
    # an old Spend (no `pure`) composes as before
    old = [Spend("g", math.inf, 0.0, rho=0.02), Spend("p", 0.2, 0.0)]
    assert compose(old, 1e-5) == compose([Spend("g", math.inf, 0.0, 0.02, ()), Spend("p", 0.2, 0.0)], 1e-5)


def test_many_distinct_pure_parts_fall_back_to_the_other_candidates():
    "A ledger of many profiles with distinct pure parts skips the exact candidate (its sum grows as 2^parts), still valid."
    import math
    from dppca_nb.privacy.accounting import Spend, compose, MAX_PURE_LOSSES, _losses_size
    many = [Spend(f"fit {i}", 1.0, 1e-6, 0.02, (0.01 + 0.001 * i, 0.02 + 0.001 * i)) for i in range(8)]
    assert _losses_size([a for s in many for a in s.pure]) > MAX_PURE_LOSSES
    eps = compose(many, 8e-6)
    assert math.isfinite(eps) and eps < 8.0                          # the zCDP / plain candidates still apply
    assert _losses_size([0.1, 0.1, 0.2]) == 6


def test_gaussian_after_pure_refuses_pure_parts_over_the_budget():
    from dppca_nb.privacy.accounting import gaussian_after_pure
    fct.test_fail(lambda: gaussian_after_pure(1.0, 1e-5, [0.6, 0.5]), contains="epsilon_pure")
