"""Latency of the lab's API under a bounded load.

Starts ``contextlens.web.create_app()`` with uvicorn in a subprocess on 127.0.0.1 (a free
port), loads MiniLM and the table once (warm-up, not timed), then from this process runs
``--clients`` concurrent clients (one keep-alive connection each) x ``--requests`` requests
against two endpoints, one after the other:

- toy: ``POST /api/toy`` (two toy sentences, the alpha varies per request);
- sentence: ``POST /api/layers`` with ``minilm`` for two 20-word sentences; one word of the
  first sentence changes with every request, so the server's encoding cache never answers
  and every request runs the model.

Reports p50 / p95 / max latency (ms), throughput and the number of errors (any non-200).
Goals: toy p95 < 20 ms, sentence p95 < 300 ms.

    python benchmarks/lab_latency.py [--json] [--clients 4] [--requests 200] [--threads 1]
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import statistics
import subprocess
import sys
import threading
import time

SERVER = ("import uvicorn; from contextlens.web import create_app; "
          "uvicorn.run(create_app(threads={threads}), host='127.0.0.1', port={port}, log_level='warning')")
S1 = ("The bank approved my loan after a long talk about money rates and the future of {n} small shops "
      "in town.")
S2 = "We sat on the bank of the river and watched the water flow past the old mill in the quiet evening."
GOALS = {"toy": 20.0, "sentence": 300.0}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(conn: http.client.HTTPConnection, path: str, body: dict) -> tuple[int, bytes]:
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    return resp.status, resp.read()


def wait_ready(port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with code {proc.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/api/status")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the server did not start in time")


def toy_body(i: int) -> dict:
    return {"neighbours": [["loan", "money"], ["river", "water"]], "method": "average",
            "alpha": (i % 20) / 20}


def sentence_body(i: int) -> dict:
    return {"sentences": [S1.format(n=f"n{i}"), S2], "word": "bank", "encoder": "minilm"}


def run_load(port: int, path: str, make_body, clients: int, requests: int) -> dict:
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def client(c: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        mine = []
        for r in range(requests):
            t0 = time.perf_counter()
            try:
                status, data = post(conn, path, make_body(c * requests + r))
            except OSError as e:
                status, data = -1, str(e).encode()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            mine.append((time.perf_counter() - t0) * 1000)
            if status != 200:
                with lock:
                    errors.append(f"{status}: {data[:200]!r}")
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    q = statistics.quantiles(latencies, n=100)
    return {"requests": len(latencies), "errors": len(errors), "first_error": errors[0] if errors else None,
            "p50_ms": round(statistics.median(latencies), 2), "p95_ms": round(q[94], 2),
            "max_ms": round(max(latencies), 2), "throughput_rps": round(len(latencies) / wall, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--requests", type=int, default=200, help="requests per client and endpoint")
    ap.add_argument("--threads", type=int, default=1, help="the server's torch threads (0: every core)")
    args = ap.parse_args()
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", SERVER.format(port=port, threads=args.threads or None)])
    try:
        wait_ready(port, proc)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        t0 = time.perf_counter()
        for i in range(3):  # warm-up: loads the table and MiniLM once
            for path, body in (("/api/toy", toy_body(i)), ("/api/layers", sentence_body(-1 - i))):
                status, data = post(conn, path, body)
                if status != 200:
                    raise SystemExit(f"warm-up {path} failed: {status} {data[:300]!r}")
        warm = time.perf_counter() - t0
        results = {
            "threads": args.threads or "all", "clients": args.clients, "requests_per_client": args.requests,
            "warmup_s": round(warm, 1),
            "toy": run_load(port, "/api/toy", toy_body, args.clients, args.requests),
            "sentence": run_load(port, "/api/layers", sentence_body, args.clients, args.requests),
        }
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    for name, goal in GOALS.items():
        results[name]["goal_p95_ms"] = goal
        results[name]["meets_goal"] = results[name]["p95_ms"] < goal and results[name]["errors"] == 0
    if args.json:
        print(json.dumps(results))
        return
    print(f"{args.clients} clients x {args.requests} requests per endpoint (warm-up {results['warmup_s']} s)")
    print(f"{'endpoint':10} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'req/s':>7} {'errors':>6}  goal p95")
    for name in GOALS:
        r = results[name]
        print(f"{name:10} {r['p50_ms']:8.1f} {r['p95_ms']:8.1f} {r['max_ms']:8.1f} "
              f"{r['throughput_rps']:7.1f} {r['errors']:6d}  < {r['goal_p95_ms']:.0f} ms: "
              f"{'yes' if r['meets_goal'] else 'NO'}")


if __name__ == "__main__":
    main()
