"""The load generator that runs on a real cluster (standard library only, shipped in a ConfigMap).

It offers the app's request mix at a constant rate and exposes, on ``:9100/metrics``,
the series the simulator's load generator exports and the live gates read:
``loadgen_requests_total{namespace,endpoint,method,status}`` (status ``0`` for a
transport failure) and the ``loadgen_request_duration_seconds`` histogram.
Prometheus adds ``job="loadgen"`` from its scrape job. The environment sets
``TARGET`` (base URL), ``NAMESPACE``, ``RPS``, ``PORT`` (9100) and ``REQUESTS`` (JSON list of
``[method, path_with_query, weight]``).
"""

import http.server
import json
import os
import random
import threading
import time
import urllib.error
import urllib.request

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
TARGET = os.environ.get("TARGET", "http://frontend:5000").rstrip("/")
NAMESPACE = os.environ.get("NAMESPACE", "default")
RPS = float(os.environ.get("RPS", "20"))
TIMEOUT = float(os.environ.get("TIMEOUT", "10"))
PORT = int(os.environ.get("PORT", "9100"))
REQUESTS = [(m, p, float(w)) for m, p, w in json.loads(os.environ.get("REQUESTS", '[["GET", "/", 1]]'))]

_lock = threading.Lock()
_counts = {}
_hist = {}


def _endpoint(path):
    return path.split("?", 1)[0]


def one():
    method, path, _ = random.choices(REQUESTS, weights=[w for _, _, w in REQUESTS])[0]
    t0 = time.monotonic()
    try:
        req = urllib.request.Request(TARGET + path, method=method, data=b"" if method == "POST" else None)
        with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
            resp.read()
            status = str(resp.status)
    except urllib.error.HTTPError as err:
        status = str(err.code)
    except Exception:
        status = "0"
    took = time.monotonic() - t0
    ep = (_endpoint(path), method)
    with _lock:
        _counts[ep + (status,)] = _counts.get(ep + (status,), 0) + 1
        h = _hist.setdefault(ep, [0] * (len(BUCKETS) + 2))
        for i, b in enumerate(BUCKETS):
            if took <= b:
                h[i] += 1
        h[-2] += took
        h[-1] += 1


def drive():
    interval = 1.0 / RPS
    nxt = time.monotonic()
    while True:
        threading.Thread(target=one, daemon=True).start()
        nxt += interval
        time.sleep(max(nxt - time.monotonic(), 0.0))


def exposition():
    lines = ["# TYPE loadgen_requests_total counter"]
    with _lock:
        for (ep, method, status), n in sorted(_counts.items()):
            lines.append(f'loadgen_requests_total{{namespace="{NAMESPACE}",endpoint="{ep}",method="{method}",status="{status}"}} {n}')
        lines.append("# TYPE loadgen_request_duration_seconds histogram")
        for (ep, method), h in sorted(_hist.items()):
            base = f'namespace="{NAMESPACE}",endpoint="{ep}",method="{method}"'
            for i, b in enumerate(BUCKETS):
                lines.append(f'loadgen_request_duration_seconds_bucket{{{base},le="{b}"}} {h[i]}')
            lines.append(f'loadgen_request_duration_seconds_bucket{{{base},le="+Inf"}} {h[-1]}')
            lines.append(f"loadgen_request_duration_seconds_sum{{{base}}} {h[-2]}")
            lines.append(f"loadgen_request_duration_seconds_count{{{base}}} {h[-1]}")
    return "\n".join(lines) + "\n"


class Metrics(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = exposition().encode()
        self.send_response(200 if self.path == "/metrics" else 404)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(body if self.path == "/metrics" else b"")

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    threading.Thread(target=drive, daemon=True).start()
    http.server.ThreadingHTTPServer(("", PORT), Metrics).serve_forever()
