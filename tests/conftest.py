import faulthandler
import os
import sys
import tempfile
import threading

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

# A hang must fail the test that hangs, not stall the whole run: each test (with its fixtures) gets a limit far
# above its normal time on the 2-core machine (the slowest notebook takes about 25 s, the browser test about 30 s).
# At the limit pytest-timeout interrupts the test with a signal, and the failure report shows where it was stuck.
# A wait that a signal cannot interrupt (inside a C call) meets a second, hard limit HARD_EXTRA_S later:
# faulthandler prints the stacks and ends the worker process, and pytest-xdist names the test and starts a new one.
TIMEOUTS = {"test_notebooks.py": 900, "test_browser.py": 900}     # seconds; every other test file: 300
HARD_EXTRA_S = 120


def _limit(item):
    return TIMEOUTS.get(item.path.name, 300)


def pytest_collection_modifyitems(config, items):
    if not config.pluginmanager.hasplugin("timeout"):
        return
    for item in items:
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(_limit(item), method="signal"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    faulthandler.dump_traceback_later(_limit(item) + HARD_EXTRA_S, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


# And a limit on the whole run, for a hang outside any single test (a worker that never exits, say): after
# WATCHDOG_S seconds the controller prints every thread's stack and ends the run with status 3, well before CI's
# own limit, so that the log says where it stuck. The whole suite takes about 3 minutes on 2 cores.
WATCHDOG_S = 40 * 60


def pytest_configure(config):
    if hasattr(config, "workerinput"):            # a pytest-xdist worker: the controller watches the run
        return

    def expire():
        capman = config.pluginmanager.getplugin("capturemanager")
        try:
            capman.suspend_global_capture(in_=True)
        except Exception:
            pass
        sys.stderr.write(f"\n*** the test run passed {WATCHDOG_S} s: stopping it; the controller's threads:\n")
        sys.stderr.flush()
        faulthandler.dump_traceback(all_threads=True)
        os._exit(3)

    timer = threading.Timer(WATCHDOG_S, expire)
    timer.daemon = True
    timer.start()
    config._dppca_watchdog = timer


def pytest_unconfigure(config):
    timer = getattr(config, "_dppca_watchdog", None)
    if timer is not None:
        timer.cancel()
