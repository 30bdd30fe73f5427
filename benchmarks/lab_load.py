"""Sustained load and faults on the lab (issue 10): nothing stops it, its memory levels off.

Starts the real ``contextlens lab --port 0 --no-browser`` in a subprocess (127.0.0.1 only),
loads GloVe and MiniLM once (warm-up, not timed), then, one after the other:

- **toy**: ``--toy-clients`` clients (one keep-alive connection each) for ``--seconds`` on
  ``POST /api/toy`` (alpha varying per request);
- **sentence**: ``--sentence-clients`` clients for ``--seconds`` on ``POST /api/layers``
  with ``minilm``, a new first sentence on every request (the encoding cache never
  answers, and fills: the server's memory must level off at its bound).

Reports errors (any non-200), p50 / p95 / max latency (ms), requests per second, and the
server's RSS at the start and end of each phase, sampled every ``--sample`` seconds.

Then the faults (``--faults``), each against a fresh server:

- **worker killed mid-request**: a UMAP projection is asked for; while its worker runs,
  every worker process is killed (SIGKILL): that request must get one JSON error, and the
  next projection a 200;
- **SIGTERM mid-request**: the same UMAP request, then SIGTERM to the server: how long it
  takes to exit, and that a new server serves at once (the lab keeps no state to lose);
- **two index builds on one db**: ``contextlens index build`` twice at the same time on one
  ``--db`` (``--corpus-lines`` lines of the Brown corpus, ``CONTEXTLENS_DATA``), then the
  usages stored against a clean build's, and again after re-running the build (resume).

    python benchmarks/lab_load.py [--json] [--seconds 60] [--toy-clients 32] [--sentence-clients 16]
        [--faults] [--only-faults] [--src PATH]

``--src``: the load phases against another checkout's code (its ``src/``, e.g. main's) as
the baseline; the faults need this checkout's lab (its workers, ``--port 0``).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

S1 = ("The bank approved my loan after a long talk about money rates and the future of {n} small shops "
      "in town.")
S2 = "We sat on the bank of the river and watched the water flow past the old mill in the quiet evening."
APP_SERVER = ("import uvicorn; from contextlens.web import create_app; "
              "uvicorn.run(create_app(threads=1), host='127.0.0.1', port={port}, log_level='warning')")
UMAP_BODY = {"sentences": ["The bank approved my loan.", "We sat on the bank of the river.",
                           "A bank of fog rolled in.",
                           "The bank raised its rates.", "Reeds grew along the bank.", "She robbed a bank."],
             "word": "bank", "encoder": "average", "projection": "umap"}


# ---- the server and its processes -------------------------------------------------------------
class Lab:
    """The lab in a subprocess: ``contextlens lab --port 0`` (``cli``), or ``create_app()`` under
    ``uvicorn.run`` on a free port (what any checkout, e.g. main's, can run); ``src``: the
    checkout's ``src/`` folder whose code it runs (default: the installed one)."""

    def __init__(self, src: str | None = None, cli: bool = True):
        env = {**os.environ, "COLUMNS": "200"}
        if src:
            env["PYTHONPATH"] = src
        if cli:
            cmd = [sys.executable, "-m", "contextlens", "lab", "--port", "0", "--no-browser"]
        else:
            self.port = free_port()
            cmd = [sys.executable, "-c", APP_SERVER.format(port=self.port)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, env=env)
        if cli:
            line = self.proc.stdout.readline()
            found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
            if not found:
                raise SystemExit(f"the lab did not start: {line}{self.proc.stdout.read()[-2000:]}")
            self.port = int(found.group(1))
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()  # drain its output
        deadline = time.monotonic() + 300
        while True:
            try:
                if request(self.conn(5), "GET", "/api/status")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise SystemExit("the lab did not answer in time")
            time.sleep(0.2)

    def conn(self, timeout: float = 120) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def rss_mb(self) -> float:
        return rss_mb(self.proc.pid)

    def workers(self) -> list[int]:
        """The worker processes: the children of the server's children (its forkserver)."""
        kids = children(self.proc.pid)
        return [g for k in kids for g in children(k)]

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def request(conn: http.client.HTTPConnection, method: str, path: str,
            body: dict | None = None) -> tuple[int, bytes]:
    conn.request(method, path, None if body is None else json.dumps(body),
                 {"Content-Type": "application/json"})
    resp = conn.getresponse()
    return resp.status, resp.read()


# ---- load ---------------------------------------------------------------------------------------
def toy_body(i: int) -> dict:
    return {"neighbours": [["loan", "money"], ["river", "water"]], "method": "average",
            "alpha": (i % 20) / 20}


def sentence_body(i: int) -> dict:
    return {"sentences": [S1.format(n=f"n{i}"), S2], "word": "bank", "encoder": "minilm"}


def run_load(lab: Lab, path: str, make_body, clients: int, seconds: float, sample: float) -> dict:
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds
    counter = iter(range(10**9))

    def client() -> None:
        conn, mine = lab.conn(), []
        while time.monotonic() < stop_at:
            with lock:
                i = next(counter)
            t0 = time.perf_counter()
            try:
                status, data = request(conn, "POST", path, make_body(i))
            except OSError as e:
                status, data = -1, repr(e).encode()
                conn = lab.conn()
            mine.append((time.perf_counter() - t0) * 1000)
            if status != 200:
                with lock:
                    errors.append(f"{status}: {data[:200]!r}")
        with lock:
            latencies.extend(mine)

    rss = [lab.rss_mb()]
    threads = [threading.Thread(target=client) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        time.sleep(min(sample, max(0.05, stop_at - time.monotonic() + 0.05)))
        if time.monotonic() < stop_at + sample / 2:
            rss.append(lab.rss_mb())
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    rss.append(lab.rss_mb())
    q = statistics.quantiles(latencies, n=100)
    return {"clients": clients, "seconds": seconds, "requests": len(latencies), "errors": len(errors),
            "first_error": errors[0] if errors else None, "p50_ms": round(statistics.median(latencies), 1),
            "p95_ms": round(q[94], 1), "max_ms": round(max(latencies), 1),
            "throughput_rps": round(len(latencies) / wall, 1), "rss_start_mb": rss[0], "rss_end_mb": rss[-1],
            "rss_max_mb": max(rss), "rss_samples_mb": rss, "sample_s": sample}


def load(args) -> dict:
    lab = Lab(args.src, cli=False)
    try:
        conn = lab.conn(600)
        t0 = time.perf_counter()
        for path, body in (("/api/toy", toy_body(0)), ("/api/layers", sentence_body(-1))):
            status, data = request(conn, "POST", path, body)
            if status != 200:
                raise SystemExit(f"warm-up {path} failed: {status} {data[:300]!r}")
        out = {"warmup_s": round(time.perf_counter() - t0, 1), "rss_after_warmup_mb": lab.rss_mb()}
        out["toy"] = run_load(lab, "/api/toy", toy_body, args.toy_clients, args.seconds, args.sample)
        out["sentence"] = run_load(lab, "/api/layers", sentence_body, args.sentence_clients,
                                   args.seconds, args.sample)
        status = json.loads(request(lab.conn(), "GET", "/api/status")[1])
        out["cache"] = status.get("cache")
    finally:
        lab.stop()
    return out


# ---- faults -------------------------------------------------------------------------------------
def ask_in_background(lab: Lab, body: dict) -> dict:
    box: dict = {}

    def ask() -> None:
        try:
            box["status"], data = request(lab.conn(900), "POST", "/api/explore", body)
            box["body"] = json.loads(data)
        except (OSError, ValueError) as err:
            box["status"] = repr(err)
        box["at"] = time.monotonic()

    threading.Thread(target=ask, daemon=True).start()
    return box


def wait_busy(lab: Lab, box: dict, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while json.loads(request(lab.conn(), "GET", "/api/status")[1])["workers"]["busy"] == 0:
        if "status" in box or time.monotonic() > deadline:
            raise SystemExit(f"the projection never ran in a worker: {box}")
        time.sleep(0.05)


def fault_worker_kill(src: str | None) -> dict:
    lab = Lab(src)
    try:
        request(lab.conn(600), "POST", "/api/tokens", {"sentences": ["warm"]})
        box = ask_in_background(lab, UMAP_BODY)
        wait_busy(lab, box)
        killed = lab.workers()
        t0 = time.monotonic()
        for pid in killed:
            os.kill(pid, signal.SIGKILL)
        while "status" not in box and time.monotonic() - t0 < 60:
            time.sleep(0.01)
        answered = round(box.get("at", float("nan")) - t0, 3)
        t1 = time.perf_counter()
        status, data = request(lab.conn(), "POST", "/api/explore", {**UMAP_BODY, "projection": "tsne"})
        return {"killed_workers": len(killed), "in_flight_status": box.get("status"),
                "in_flight_error": box.get("body", {}).get("error"), "answered_after_kill_s": answered,
                "next_request_status": status, "next_request_s": round(time.perf_counter() - t1, 2),
                "workers_after": len(lab.workers()), "server_alive": lab.proc.poll() is None}
    finally:
        lab.stop()


def fault_sigterm(src: str | None) -> dict:
    lab = Lab(src)
    request(lab.conn(600), "POST", "/api/tokens", {"sentences": ["warm"]})
    box = ask_in_background(lab, UMAP_BODY)
    wait_busy(lab, box)
    t0 = time.monotonic()
    lab.proc.send_signal(signal.SIGTERM)
    try:
        code = lab.proc.wait(120)
    except subprocess.TimeoutExpired:
        code = "still running after 120 s"
        lab.proc.kill()
    took = round(time.monotonic() - t0, 2)
    t1 = time.monotonic()
    again = Lab(src)
    try:
        status = request(again.conn(), "POST", "/api/explore", {**UMAP_BODY, "projection": "pca"})[0]
    finally:
        again.stop()
    return {"exit_s": took, "exit_code": code, "in_flight": box.get("status"),
            "restart_then_served": status, "restart_s": round(time.monotonic() - t1, 1)}


def index_usages(db: Path, src: str | None) -> int | str:
    env = {**os.environ, **({"PYTHONPATH": src} if src else {})}
    done = subprocess.run([sys.executable, "-m", "contextlens", "index", "stats", "--db", str(db), "--json"],
                          capture_output=True, text=True, env=env)
    if done.returncode:
        return f"stats failed: {done.stderr.strip()[-300:]}"
    return json.loads(done.stdout)["usages"]


def fault_two_builds(src: str | None, lines: int) -> dict:
    data = Path(os.environ.get("CONTEXTLENS_DATA", "")) / "corpora" / "brown_plain.txt"
    if not data.is_file():
        return {"skipped": f"{data} is missing (set CONTEXTLENS_DATA)"}
    env = {**os.environ, **({"PYTHONPATH": src} if src else {})}
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.txt"
        with data.open(encoding="utf-8") as f:
            corpus.write_text("".join(line for _, line in zip(range(lines), f)), encoding="utf-8")

        def build(db: Path) -> subprocess.Popen:
            return subprocess.Popen([sys.executable, "-m", "contextlens", "index", "build", str(corpus),
                                     "--db", str(db), "--words", "bank,state,time,man,house", "--json"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)

        clean = build(Path(tmp) / "clean.lance")
        clean.communicate()
        want = index_usages(Path(tmp) / "clean.lance", src)
        shared = Path(tmp) / "shared.lance"
        t0 = time.perf_counter()
        both = [build(shared), build(shared)]
        outs = [p.communicate() for p in both]
        took = round(time.perf_counter() - t0, 1)
        after = index_usages(shared, src)
        rerun = build(shared)
        rerun.communicate()
        return {"corpus_lines": lines, "clean_usages": want, "exit_codes": [p.returncode for p in both],
                "errors": [err.strip().splitlines()[-1][:300] if p.returncode else None
                           for p, (_, err) in zip(both, outs)],
                "usages_after_both": after, "rerun_exit_code": rerun.returncode,
                "usages_after_rerun": index_usages(shared, src), "seconds": took}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--seconds", type=float, default=60.0, help="length of each load phase")
    ap.add_argument("--toy-clients", type=int, default=32)
    ap.add_argument("--sentence-clients", type=int, default=16)
    ap.add_argument("--sample", type=float, default=5.0, help="seconds between RSS samples")
    ap.add_argument("--faults", action="store_true", help="also run the fault scenarios")
    ap.add_argument("--only-faults", action="store_true", help="only the fault scenarios")
    ap.add_argument("--corpus-lines", type=int, default=3000, help="Brown lines for the two-builds fault")
    ap.add_argument("--src", help="the load against another checkout's code (its src/ folder), e.g. main's")
    args = ap.parse_args()
    results: dict = {"src": args.src or "this checkout"}
    if not args.only_faults:
        results["load"] = load(args)
    if args.faults or args.only_faults:
        results["faults"] = {"worker_killed_mid_request": fault_worker_kill(args.src),
                             "sigterm_mid_request": fault_sigterm(args.src),
                             "two_index_builds_one_db": fault_two_builds(args.src, args.corpus_lines)}
    if args.json:
        print(json.dumps(results))
        return
    if "load" in results:
        r = results["load"]
        print(f"warm-up {r['warmup_s']} s, RSS after warm-up {r['rss_after_warmup_mb']} MB")
        print(f"{'endpoint':9} {'clients':>7} {'requests':>8} {'errors':>6} {'p50 ms':>8} {'p95 ms':>8} "
              f"{'max ms':>8} {'req/s':>7} {'RSS start':>9} {'RSS end':>8} {'RSS max':>8}")
        for name in ("toy", "sentence"):
            p = r[name]
            print(f"{name:9} {p['clients']:7d} {p['requests']:8d} {p['errors']:6d} {p['p50_ms']:8.1f} "
                  f"{p['p95_ms']:8.1f} {p['max_ms']:8.1f} {p['throughput_rps']:7.1f} "
                  f"{p['rss_start_mb']:9.1f} {p['rss_end_mb']:8.1f} {p['rss_max_mb']:8.1f}")
            samples = " ".join(f"{x:.0f}" for x in p["rss_samples_mb"])
            print(f"  RSS every {p['sample_s']:g} s (MB): {samples}")
        print(f"encoding cache at the end: {r['cache']}")
    for name, fault in results.get("faults", {}).items():
        print(f"{name}: {json.dumps(fault)}")


if __name__ == "__main__":
    main()
