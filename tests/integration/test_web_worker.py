"""The lab's worker pool: a native crash, a kill mid-call, a timeout and a stop each end the call
with one clear error, and the next call is served by a fresh worker."""

from __future__ import annotations

import ctypes
import os
import signal
import threading
import time

import numpy as np
import pytest

from contextlens.analysis.projection import project
from contextlens.errors import InputError, UnknownWordError
from contextlens.web.worker import (
    LabClosingError,
    WorkerCrashedError,
    WorkerPool,
    WorkerTimeoutError,
    _portable,
)


@pytest.fixture
def pool():
    p = WorkerPool(workers=1, timeout=60)
    yield p
    p.close()


@pytest.mark.parametrize("workers", [0, 2.5, True, "2"])
def test_a_pool_needs_a_whole_number_of_workers(workers):
    with pytest.raises(InputError,
                       match="workers must be a whole number >= 1, got .*at least 1 worker process"):
        WorkerPool(workers=workers)


def wait_busy(pool: WorkerPool, timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    while not pool.pids(busy=True):
        assert time.monotonic() < deadline, "the worker never got the call"
        time.sleep(0.02)
    return pool.pids(busy=True)[0]


def in_thread(fn):
    box = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as err:  # noqa: BLE001 - the test reads it
            box["error"] = err
        box["at"] = time.monotonic()

    t = threading.Thread(target=target)
    t.start()
    return t, box


def test_results_and_library_errors_come_back(pool):
    x = np.random.default_rng(0).normal(size=(5, 4))
    np.testing.assert_array_equal(pool.run(project, x, "pca"), project(x, "pca"))
    x[2, 0] = np.nan
    with pytest.raises(InputError, match=r"points \[2\] have NaN"):
        pool.run(project, x, "tsne")
    assert pool.pids() and pool.pids() != [os.getpid()]


def test_an_error_that_does_not_pickle_back_keeps_its_message():
    err = UnknownWordError("bnak", ["bank"])  # its __init__ takes the word, not the message
    back = _portable(err)
    assert type(back) is InputError and str(back) == "'bnak' is not in the table; close keys: bank"
    assert _portable(InputError("plain")).__class__ is InputError


def test_a_native_crash_is_one_error_and_the_next_call_gets_a_new_worker(pool):
    first = pool.run(os.getpid)
    with pytest.raises(WorkerCrashedError, match="worker process died of SIGSEGV during string_at"):
        pool.run(ctypes.string_at, 0)  # reads address 0: a real segmentation fault
    assert pool.run(os.getpid) != first


def test_a_worker_killed_mid_call_ends_that_call_at_once(pool):
    t, box = in_thread(lambda: pool.run(time.sleep, 60))
    pid = wait_busy(pool)
    killed_at = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    t.join(30)
    assert isinstance(box.get("error"), WorkerCrashedError) and "SIGKILL" in str(box["error"])
    assert box["at"] - killed_at < 5
    assert pool.run(divmod, 9, 4) == (2, 1)


def test_a_worker_killed_while_idle_is_replaced_without_an_error(pool):
    pid = pool.run(os.getpid)
    os.kill(pid, signal.SIGKILL)
    assert pool.run(os.getpid) != pid  # the task never reached the dead one: sent again


def test_a_call_over_the_timeout_is_stopped():
    pool = WorkerPool(workers=1, timeout=0.5)
    try:
        pool.run(os.getpid)  # started (the forkserver's imports are not timed)
        t0 = time.monotonic()
        with pytest.raises(WorkerTimeoutError, match="sleep took longer than 0.5 s and was stopped"):
            pool.run(time.sleep, 30)
        assert time.monotonic() - t0 < 10
        assert pool.run(divmod, 7, 2) == (3, 1)
    finally:
        pool.close()


def test_close_ends_running_and_waiting_calls(pool):
    t, box = in_thread(lambda: pool.run(time.sleep, 60))
    wait_busy(pool)
    waiting, waited = in_thread(lambda: pool.run(os.getpid))  # no free worker: it waits
    time.sleep(0.2)
    closed_at = time.monotonic()
    pool.close()
    t.join(10)
    waiting.join(10)
    assert isinstance(box.get("error"), LabClosingError) and box["at"] - closed_at < 5
    assert isinstance(waited.get("error"), LabClosingError)
    with pytest.raises(LabClosingError):
        pool.run(os.getpid)
    assert pool.pids() == []
