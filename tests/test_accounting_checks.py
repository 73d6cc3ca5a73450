"""Bad-input checks of nbs/03_privacy/01_accounting.ipynb (where the ledger is explained), moved out of its reading
flow: the notebook's own calls and message fragments."""
from fastcore import test as fct          # fct.test_fail: pytest would collect a bare test_fail

from dppca_nb.privacy.accounting import PrivacyAccountant


def test_a_stated_budget_must_match_the_noise():
    fct.test_fail(lambda: PrivacyAccountant().spend(0.1, 1e-6, sigma=1.0, sensitivity=1.0), contains="is not (0.1, 1e-06)-DP")


def test_spend_contract_refuses_a_tuple():
    fct.test_fail(lambda: PrivacyAccountant().spend_contract((1.0, 1e-5)), contains="contract")
