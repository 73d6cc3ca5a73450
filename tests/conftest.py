import os
import tempfile

import pytest

# One BLAS thread per test process: two competing OpenBLAS threads on a busy 2-core machine can slow
# small matrix products 10-100 times, and pytest-xdist already runs one process per core.
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
os.environ.setdefault("MPLBACKEND", "Agg")

# Studies cache their results under ~/.cache/dppca_nb by default: the tests use a fresh folder instead, so a
# run never reads results a previous version of the code left behind (and never writes into the home folder).
os.environ.setdefault("DPPCA_CACHE", tempfile.mkdtemp(prefix="dppca_test_cache_"))

# Property tests run a fixed (derandomized) set of examples, so a result does not depend on luck, on CI or
# anywhere else; DPPCA_HYPOTHESIS_EXPLORE=1 lets hypothesis explore fresh examples on every run instead.
try:
    from hypothesis import settings as _hsettings
    _hsettings.register_profile("fixed", derandomize=True, print_blob=True, database=None)
    if os.environ.get("DPPCA_HYPOTHESIS_EXPLORE") != "1":
        _hsettings.load_profile("fixed")
except ImportError:
    pass

# A hang must fail the test that hangs, with every thread's stack printed, not stall the whole run: each test
# (with its fixtures) gets a hard limit, far above its normal time on the 2-core machine (the slowest notebook
# takes about 25 s, the browser test about 30 s). The "thread" method works even inside a blocking C call: it
# prints the stacks and ends the worker process, and pytest-xdist reports the test and starts a new worker.
TIMEOUTS = {"test_notebooks.py": 900, "test_browser.py": 900}     # seconds; every other test file: 300


def pytest_collection_modifyitems(config, items):
    if not config.pluginmanager.hasplugin("timeout"):
        return
    for item in items:
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(TIMEOUTS.get(item.path.name, 300), method="thread"))
