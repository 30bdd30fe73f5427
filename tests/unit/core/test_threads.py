"""The thread choice (contextlens.threads) from a faked affinity, cgroup quota and load."""

from __future__ import annotations

import os

import pytest

from contextlens import threads as th
from contextlens.errors import InputError


@pytest.fixture(autouse=True)
def no_env(monkeypatch):
    monkeypatch.delenv(th.ENV, raising=False)


def fake_machine(monkeypatch, *, affinity: int, load: float, machine: int, quota: float | None = None):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(affinity)), raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load), raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: machine)
    monkeypatch.setattr(th, "cgroup_quota", lambda: quota)


def test_torch_gets_one_thread_on_a_busy_machine_and_every_core_on_a_quiet_one(monkeypatch):
    fake_machine(monkeypatch, affinity=2, load=15.0, machine=2)
    busy = th.thread_choice(policy=th.LOAD)
    assert (busy.threads, busy.source, busy.load, busy.affinity) == (1, "automatic", 15.0, 2)
    fake_machine(monkeypatch, affinity=2, load=0.2, machine=2)
    assert th.thread_choice(policy=th.LOAD).threads == 2


def test_onnxruntime_keeps_every_usable_core_whatever_the_load(monkeypatch):
    fake_machine(monkeypatch, affinity=2, load=15.0, machine=2)
    assert th.thread_choice(policy=th.CORES).threads == 2


def test_affinity_and_quota_cap_the_cores(monkeypatch):
    fake_machine(monkeypatch, affinity=3, load=0.0, machine=64)  # taskset to 3 of 64 cores
    assert th.thread_choice(policy=th.CORES).threads == 3
    fake_machine(monkeypatch, affinity=64, load=0.0, machine=64, quota=1.5)  # docker --cpus=1.5
    choice = th.thread_choice(policy=th.CORES)
    assert choice.threads == 2 and choice.quota == 1.5
    assert "CPU quota 1.5" in choice.as_dict()["why"]


def test_load_is_spread_over_the_machine_not_only_our_cores(monkeypatch):
    # 8 of 64 cores, the machine half busy: half of ours are free
    fake_machine(monkeypatch, affinity=8, load=32.0, machine=64)
    assert th.thread_choice(policy=th.LOAD).threads == 4


def test_the_setting_and_the_argument_override_the_choice(monkeypatch):
    fake_machine(monkeypatch, affinity=2, load=15.0, machine=2)
    monkeypatch.setenv(th.ENV, "2")
    choice = th.thread_choice(policy=th.LOAD)
    assert (choice.threads, choice.source) == (2, th.ENV)
    assert th.thread_choice(3, th.LOAD).source == "argument"
    monkeypatch.setenv(th.ENV, "two")
    with pytest.raises(InputError, match="CONTEXTLENS_THREADS must be a whole number.*got 'two'"):
        th.thread_choice(policy=th.LOAD)
    monkeypatch.setenv(th.ENV, "0")
    with pytest.raises(InputError, match="CONTEXTLENS_THREADS"):
        th.thread_choice(policy=th.CORES)


def test_cgroup_v2_quota_is_the_tightest_on_the_path(tmp_path):
    (tmp_path / "proc").write_text("0::/user.slice/job\n")
    root = tmp_path / "cg"
    (root / "user.slice" / "job").mkdir(parents=True)
    (root / "cpu.max").write_text("max 100000\n")
    (root / "user.slice" / "cpu.max").write_text("300000 100000\n")
    (root / "user.slice" / "job" / "cpu.max").write_text("max 100000\n")
    assert th.cgroup_quota(root, tmp_path / "proc") == 3.0
    (root / "user.slice" / "job" / "cpu.max").write_text("50000 100000\n")
    assert th.cgroup_quota(root, tmp_path / "proc") == 0.5


def test_cgroup_v1_quota_and_none(tmp_path):
    (tmp_path / "proc").write_text("4:memory:/x\n3:cpu,cpuacct:/docker/abc\n0::/\n")
    folder = tmp_path / "cg" / "cpu,cpuacct" / "docker" / "abc"
    folder.mkdir(parents=True)
    (folder / "cpu.cfs_quota_us").write_text("150000\n")
    (folder / "cpu.cfs_period_us").write_text("100000\n")
    assert th.cgroup_quota(tmp_path / "cg", tmp_path / "proc") == 1.5
    (folder / "cpu.cfs_quota_us").write_text("-1\n")
    assert th.cgroup_quota(tmp_path / "cg", tmp_path / "proc") is None
    assert th.cgroup_quota(tmp_path / "nothing", tmp_path / "no-proc") is None


def test_models_helpers_use_the_choice_and_report_it(monkeypatch):
    torch = pytest.importorskip("torch")
    from contextlens.encoders import models

    fake_machine(monkeypatch, affinity=2, load=15.0, machine=2)
    before = torch.get_num_threads()
    try:
        assert models.set_threads() == 1 and torch.get_num_threads() == 1
        used = models.threads_in_use()
        assert used["engine"] == "torch" and used["threads"] == 1 and used["source"] == "automatic"
        assert "load 15 on 2 cores" in used["why"]
        assert models.thread_count() == 2  # onnxruntime: every usable core

        class Runner:
            threads = 2
        assert models.threads_in_use(Runner())["policy"] == th.CORES
        torch.set_num_threads(2)  # set by someone else: said so, not explained by our last choice
        assert models.threads_in_use()["why"] == "set outside contextlens"
    finally:
        torch.set_num_threads(before)
