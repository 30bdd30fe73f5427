"""The lab's worker processes: projections and clustering run outside the server process.

t-SNE, UMAP and the clustering are native code (scikit-learn, numba, scipy); one input that
crashed them used to take the whole lab down (issue 10: t-SNE on identical points, SIGSEGV).
The library now answers those inputs itself, and the lab adds a safety net for the ones
nobody has found yet: the numeric step of a request (arrays in, arrays out, never a model)
runs in a small pool of worker processes, through ``run(fn, *args, **kwargs)``, the hook the
analyses take (:func:`contextlens.analysis.projection.run_here` is the in-process default).

- A worker that dies (SIGSEGV, SIGKILL, out of memory) is replaced on the next call; the
  request it was serving gets :class:`WorkerCrashedError` (HTTP 500, one line).
- A step that outlives ``timeout`` seconds is stopped the same way: :class:`WorkerTimeoutError`
  (HTTP 503).
- :meth:`WorkerPool.close` (the lab stopping) kills the workers at once, so a long UMAP
  cannot hold the server past SIGTERM; waiting requests get :class:`LabClosingError` (503).

Workers are forked from a *forkserver* that has imported numpy, scipy and scikit-learn once
(about 10 s on a busy machine): a replacement starts in milliseconds instead of a fresh
interpreter's import time. Each worker uses one thread (BLAS, OpenMP, numba), as
:func:`~contextlens.analysis.projection.project` explains for t-SNE; UMAP is imported and
compiled (numba) in a worker on its first use.

>>> pool = WorkerPool(workers=1)
>>> pool.run(divmod, 7, 2)
(3, 1)
>>> pool.close()
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import queue
import signal
import threading
from collections.abc import Callable
from typing import Any

from ..errors import ContextLensError, InputError, check_int

__all__ = ["WorkerPool", "WorkerError", "WorkerCrashedError", "WorkerTimeoutError", "LabClosingError"]

log = logging.getLogger(__name__)
#: imported once by the forkserver, so every worker starts with them
PRELOAD = ("__main__", "numpy", "scipy.cluster.hierarchy", "sklearn.manifold", "sklearn.metrics",
           "threadpoolctl",
           "contextlens.analysis.projection", "contextlens.analysis.senses", "contextlens.web.worker")


class WorkerError(Exception):
    """The lab's numeric step failed for a reason outside the request; ``status`` is its HTTP code."""

    status = 500


class WorkerCrashedError(WorkerError):
    """The worker process died while serving the request (a native crash, or killed)."""


class WorkerTimeoutError(WorkerError):
    """The numeric step took longer than the pool's timeout; the worker was stopped."""

    status = 503


class LabClosingError(WorkerError):
    """The lab is stopping and takes no new work."""

    status = 503


def _portable(err: BaseException) -> BaseException:
    """``err`` as it can travel back to the server: itself when it pickles back to the same
    message, else an :class:`InputError` (ours) or a RuntimeError (anything else) with it."""
    try:
        back = pickle.loads(pickle.dumps(err))
        if type(back) is type(err) and str(back) == str(err):
            return err
    except Exception:  # noqa: BLE001 - any pickling problem: fall back below
        pass
    if isinstance(err, ContextLensError):
        return InputError(str(err))
    return RuntimeError(f"{type(err).__name__}: {err}")


def _serve(conn) -> None:  # pragma: no cover - runs in the worker process
    """A worker's loop: receive ``(fn, args, kwargs)``, send back ``(ok, value or error)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C reaches the whole group: the server decides
    os.environ["NUMBA_NUM_THREADS"] = "1"
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    while True:
        try:
            fn, args, kwargs = conn.recv()
            conn.send(None)  # taken: from here a death is this task's
        except (EOFError, OSError):
            return
        try:
            reply = (True, fn(*args, **kwargs))
        except BaseException as err:  # noqa: BLE001 - every error goes back to the request
            reply = (False, _portable(err))
        conn.send(reply)


def _death(code: int | None) -> str:
    if code is None:
        return "did not answer"
    if code < 0:
        try:
            return f"died of {signal.Signals(-code).name}"
        except ValueError:
            return f"died of signal {-code}"
    return f"exited with code {code}"


class _Worker:
    """One worker process and the pipe to it; started on first use, restarted after a death."""

    def __init__(self, ctx, closed: threading.Event):
        self._ctx = ctx
        self._closed = closed  # the pool's: once set, no process is started
        self.proc = None
        self._conn = None
        self.running = False  # a task taken and not finished

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(target=_serve, args=(child,), daemon=True, name="contextlens-lab-worker")
        proc.start()
        child.close()
        self.proc, self._conn = proc, parent
        log.info("lab worker %d started", proc.pid)

    def _hand_over(self, task: tuple) -> bool:
        """Send ``task``; True once the worker says it took it, False if it was dead already."""
        if self._closed.is_set():
            raise LabClosingError("the lab is stopping")
        if self.proc is None or not self.proc.is_alive():
            self.stop()
            self._start()
        try:
            self._conn.send(task)
            return self._conn.recv() is None
        except (EOFError, OSError):
            self.stop()
            return False

    def call(self, fn: Callable, args: tuple, kwargs: dict, timeout: float | None) -> Any:
        # a worker killed while idle never took the task: the next one gets it
        if not self._hand_over((fn, args, kwargs)) and not self._hand_over((fn, args, kwargs)):
            raise WorkerCrashedError("the lab's worker process could not be started twice in a row; see the "
                                     "server log")
        self.running = True
        try:
            return self._result(fn, timeout)
        finally:
            self.running = False

    def _result(self, fn: Callable, timeout: float | None) -> Any:
        try:
            if not self._conn.poll(timeout):
                self.stop()
                raise WorkerTimeoutError(
                    f"{fn.__name__} took longer than {timeout:g} s and was stopped; try fewer sentences or "
                    "projection pca")
            ok, value = self._conn.recv()
        except (EOFError, OSError) as err:
            code = self.stop()
            raise WorkerCrashedError(
                f"the lab's worker process {_death(code)} during {fn.__name__}; it has been replaced, so the "
                "lab keeps serving: try again, or another projection (pca) if this input crashes it again"
            ) from err
        if ok:
            return value
        raise value

    def stop(self) -> int | None:
        """Kill the process (if any) and return its exit code."""
        proc, conn, self.proc, self._conn = self.proc, self._conn, None, None
        if conn is not None:
            conn.close()
        if proc is None:
            return None
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        return proc.exitcode


class WorkerPool:
    """``workers`` worker processes that run ``fn(*args, **kwargs)`` for the lab's requests;
    a call waits for a free worker. ``timeout``: seconds a call may run (None: no limit)."""

    def __init__(self, workers: int = 2, timeout: float | None = 300.0, preload=PRELOAD):
        check_int("workers", workers, low=1, hint="the lab needs at least 1 worker process")
        self.timeout = timeout
        self._ctx = multiprocessing.get_context("forkserver")
        self._ctx.set_forkserver_preload(list(preload))
        self._closed = threading.Event()
        self._workers = [_Worker(self._ctx, self._closed) for _ in range(workers)]
        self._idle: queue.Queue[_Worker] = queue.Queue()
        for w in self._workers:
            self._idle.put(w)

    def run(self, fn: Callable, /, *args, **kwargs) -> Any:
        """``fn(*args, **kwargs)`` in a worker (``fn`` and its arguments must pickle)."""
        worker = self._take()
        try:
            return worker.call(fn, args, kwargs, self.timeout)
        except WorkerError:
            if self._closed.is_set():
                raise LabClosingError("the lab is stopping") from None
            raise
        finally:
            self._idle.put(worker)

    def _take(self) -> _Worker:
        while True:
            if self._closed.is_set():
                raise LabClosingError("the lab is stopping")
            try:
                return self._idle.get(timeout=0.2)
            except queue.Empty:
                continue

    def pids(self, busy: bool | None = None) -> list[int]:
        """The process ids of the live workers (``busy``: only those running a task, or idle)."""
        out = []
        for w in self._workers:
            proc = w.proc
            if proc is not None and proc.is_alive() and (busy is None or w.running == busy):
                out.append(proc.pid)
        return out

    def open(self) -> None:
        """Take calls again after :meth:`close` (an app's lifespan may start more than once)."""
        self._closed.clear()

    def warm(self) -> threading.Thread:
        """Start the forkserver and every worker in the background (the lab does it at start,
        so the first projection does not wait for the imports); returns the thread."""

        def start() -> None:
            for _ in self._workers:
                try:
                    self.run(os.getpid)
                except WorkerError as err:
                    log.warning("a lab worker did not start: %s", err)
                    return

        thread = threading.Thread(target=start, name="lab-workers-warm", daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        """Stop every worker now: their calls end with :class:`LabClosingError`. Safe to call
        from a signal handler (no lock is taken)."""
        self._closed.set()
        procs = [w.proc for w in self._workers if w.proc is not None]
        for proc in procs:
            if proc.is_alive():
                proc.kill()
        for proc in procs:
            proc.join(1)
