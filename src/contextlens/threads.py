"""How many CPU threads an engine runs on: the cores this process may use, and how busy they are.

A machine's core count is not what a process gets. Three things cut it down, and each is read:

- the **affinity** mask (``os.sched_getaffinity``: ``taskset``, a batch scheduler, a
  container's ``--cpuset-cpus``);
- the **cgroup CPU quota** (``docker --cpus=1.5``, Kubernetes' CPU limit): cgroup v2's
  ``cpu.max`` (``"150000 100000"``: 1.5 CPUs; ``"max 100000"``: none) or v1's
  ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us`` (``-1``: none), the tightest along the path
  from the process's cgroup up to the root; a quota of 1.5 CPUs gives 2 threads at most;
- the **load**: other processes' runnable threads (the 1-minute load average, spread over
  the machine's cores).

The two engines answer the load differently, as measured on this project's shared 2-core
machine (``benchmarks/RESULTS.md``, "Extraction engines", the settings sweep at load 8-16):

- **torch** (:data:`LOAD`): its intra-op threads meet at a barrier after every operation,
  and a thread the busy machine has descheduled holds up the others; one thread per
  process was **1.91×** faster than two there, and encoding 2,000 words alone took 1.7 s of
  CPU with one torch thread against 4.1 s with two at load 15 (torch's sentence pooling
  waiting on its threads). So torch gets the cores the load leaves free:
  ``round(usable × (1 − load / machine cores))``, at least 1;
- **onnxruntime** (:data:`CORES`): its threads do not spin (``session_options``), and one
  thread was *slower* there (0.79×); it gets every usable core.

``CONTEXTLENS_THREADS`` (a whole number) overrides the choice for both engines, and so does
an explicit ``threads=`` argument. :func:`choose_threads` is the rule as a pure function;
:func:`thread_choice` reads the machine, applies it, and remembers the choice of each policy
(:func:`last_choice`) so that an encoder can say in its metadata what it runs on and why.

>>> choose_threads(usable=2, load=0.3, machine=2, policy=LOAD)  # a quiet machine: both cores
2
>>> choose_threads(usable=2, load=15.0, machine=2, policy=LOAD)  # a busy one: one thread
1
>>> choose_threads(usable=2, load=15.0, machine=2, policy=CORES)
2
>>> usable_cores(affinity=8, quota=1.5)
2
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import NamedTuple

from .errors import check_choice, check_int

__all__ = ["ENV", "CORES", "LOAD", "POLICIES", "ThreadChoice", "choose_threads", "usable_cores",
           "cgroup_quota", "affinity_cores", "load_average", "thread_choice", "last_choice",
           "describe_threads"]

ENV = "CONTEXTLENS_THREADS"
# every usable core (onnxruntime) | the usable cores the load leaves free (torch)
CORES, LOAD = "cores", "load"
POLICIES = (CORES, LOAD)
MAX_THREADS = 1024
_last: dict[str, ThreadChoice] = {}


class ThreadChoice(NamedTuple):
    """A thread count and what it was chosen from."""

    threads: int
    source: str  # "argument" | "CONTEXTLENS_THREADS" | "automatic"
    policy: str  # CORES | LOAD
    affinity: int | None  # the cores the affinity mask allows (None: unknown)
    quota: float | None  # the cgroup CPU quota in CPUs (None: none)
    load: float | None  # the 1-minute load average (None: unknown)
    machine: int  # the machine's cores (os.cpu_count)

    def as_dict(self) -> dict:
        """The choice as JSON data (an encoder's ``meta["threads"]``)."""
        return {**self._asdict(), "why": describe_threads(self)}


def usable_cores(affinity: int | None, quota: float | None, machine: int | None = None) -> int:
    """The threads that can run at once: the affinity's cores, no more than the quota rounded up.

    >>> usable_cores(4, None), usable_cores(4, 0.5), usable_cores(None, 3.0, machine=64)
    (4, 1, 3)
    """
    cores = affinity or machine or os.cpu_count() or 1
    if quota is not None:
        cores = min(cores, max(1, math.ceil(quota - 1e-9)))
    return max(1, int(cores))


def choose_threads(usable: int, load: float | None, machine: int, policy: str) -> int:
    """The thread count for ``usable`` cores under a 1-minute ``load`` on a ``machine`` of
    that many cores: every usable core (``policy=CORES``), or (``LOAD``) the share of them
    the load leaves free, rounded, at least 1 (an unknown load counts as none).

    >>> [choose_threads(2, load, 2, LOAD) for load in (0.0, 0.4, 0.6, 1.0, 18.0)]
    [2, 2, 1, 1, 1]
    >>> choose_threads(4, 16.0, 64, LOAD)  # 4 cores of a 64-core machine a quarter busy
    3
    """
    check_choice("policy", policy, POLICIES)
    if policy == CORES or load is None:
        return usable
    free = usable * max(0.0, 1.0 - load / max(machine, 1))
    return max(1, min(usable, math.floor(free + 0.5)))


def affinity_cores() -> int | None:
    """The cores this process may run on (None where the platform cannot say)."""
    try:
        return len(os.sched_getaffinity(0)) or None
    except (AttributeError, OSError):
        return None


def _v2_quota(text: str) -> float | None:
    """CPUs of a cgroup v2 ``cpu.max`` line.

    >>> _v2_quota("150000 100000"), _v2_quota("max 100000")
    (1.5, None)
    """
    parts = text.split()
    if len(parts) != 2 or parts[0] == "max":
        return None
    quota, period = int(parts[0]), int(parts[1])
    return quota / period if quota > 0 and period > 0 else None


def _v1_quota(folder: Path) -> float | None:
    try:
        quota = int((folder / "cpu.cfs_quota_us").read_text())
        period = int((folder / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None


def _ancestors(root: Path, relative: str) -> list[Path]:
    """``root / relative`` and each of its parents up to ``root``."""
    parts = [p for p in relative.strip().split("/") if p]
    return [root.joinpath(*parts[:n]) for n in range(len(parts), -1, -1)]


def cgroup_quota(root: str | os.PathLike = "/sys/fs/cgroup",
                 self_cgroup: str | os.PathLike = "/proc/self/cgroup") -> float | None:
    """The tightest CPU quota, in CPUs, on this process's cgroup and its parents (v2 or v1),
    or None when there is none (or no cgroup file system). Paths are parameters so that a
    test can give a fake tree."""
    root = Path(root)
    try:
        lines = Path(self_cgroup).read_text().splitlines()
    except OSError:
        return None
    found = []
    for line in lines:
        _, controllers, relative = (line.split(":", 2) + ["", ""])[:3]
        if controllers == "":  # v2: "0::/path"
            for folder in _ancestors(root, relative):
                try:
                    found.append(_v2_quota((folder / "cpu.max").read_text()))
                except (OSError, ValueError):
                    continue
        elif "cpu" in controllers.split(","):  # v1: "4:cpu,cpuacct:/path"
            for mount in (root / controllers, root / "cpu", root / "cpu,cpuacct"):
                for folder in _ancestors(mount, relative):
                    found.append(_v1_quota(folder))
    quotas = [q for q in found if q is not None]
    return min(quotas) if quotas else None


def load_average() -> float | None:
    """The 1-minute load average (None where the platform has none)."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return None


def _from_env() -> int | None:
    env = os.environ.get(ENV, "").strip()
    if not env:
        return None
    value = int(env) if env.lstrip("-").isdigit() else env
    return check_int(ENV, value, low=1, high=MAX_THREADS,
                     hint="unset it to let contextlens choose from the cores and the load")


def thread_choice(threads: int | None = None, policy: str = CORES, *, affinity: int | None = None,
                  quota: float | None = None, load: float | None = None, machine: int | None = None,
                  read_machine: bool = True) -> ThreadChoice:
    """The threads for an engine: ``threads`` when given, else ``CONTEXTLENS_THREADS``, else
    :func:`choose_threads` over this machine's affinity, cgroup quota and load
    (``read_machine=False``: only the values given, for tests). Remembered as
    :func:`last_choice` of ``policy``.

    >>> thread_choice(3).threads, thread_choice(3).source
    (3, 'argument')
    >>> thread_choice(policy=LOAD, affinity=2, load=9.0, machine=2, read_machine=False).threads
    1
    """
    check_choice("policy", policy, POLICIES)
    machine = machine or os.cpu_count() or 1
    if read_machine:
        affinity = affinity if affinity is not None else affinity_cores()
        quota = quota if quota is not None else cgroup_quota()
        load = load if load is not None else load_average()
    if threads is not None:
        count = check_int("threads", threads, low=1, high=MAX_THREADS,
                          hint="torch CPU threads" if policy == LOAD else "onnxruntime CPU threads")
        source = "argument"
    elif (env := _from_env()) is not None:
        count, source = env, ENV
    else:
        count = choose_threads(usable_cores(affinity, quota, machine), load, machine, policy)
        source = "automatic"
    choice = ThreadChoice(count, source, policy, affinity, quota, None if load is None else round(load, 2),
                          machine)
    _last[policy] = choice
    return choice


def last_choice(policy: str) -> ThreadChoice | None:
    """The last :func:`thread_choice` of ``policy`` in this process (None: none yet)."""
    return _last.get(check_choice("policy", policy, POLICIES))


def describe_threads(choice: ThreadChoice) -> str:
    """Why an engine runs on this many threads, in one line.

    >>> describe_threads(ThreadChoice(1, "automatic", LOAD, 2, None, 15.1, 2))
    '1 thread: 2 usable cores (affinity 2, no CPU quota), load 15.1 on 2 cores'
    >>> describe_threads(ThreadChoice(2, "automatic", CORES, 8, 1.5, 3.0, 8))
    '2 threads: 2 usable cores (affinity 8, CPU quota 1.5)'
    >>> describe_threads(ThreadChoice(4, "CONTEXTLENS_THREADS", LOAD, 2, None, 1.0, 2))
    '4 threads: set by CONTEXTLENS_THREADS'
    """
    n = f"{choice.threads} thread{'s' if choice.threads != 1 else ''}"
    if choice.source != "automatic":
        return f"{n}: set by {'the threads argument' if choice.source == 'argument' else choice.source}"
    usable = usable_cores(choice.affinity, choice.quota, choice.machine)
    quota = "no CPU quota" if choice.quota is None else f"CPU quota {choice.quota:g}"
    affinity = "unknown" if choice.affinity is None else choice.affinity
    text = f"{n}: {usable} usable core{'s' if usable != 1 else ''} (affinity {affinity}, {quota})"
    if choice.policy == LOAD and choice.load is not None:
        text += f", load {choice.load:g} on {choice.machine} cores"
    return text
