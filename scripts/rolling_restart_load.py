"""Steady allocation traffic through a load balancer, for
scripts/rolling-restart.sh: each worker owns a provider and, until the
stop file appears, writes a new consumer's allocation, reads the
provider's usages and deletes the allocation, on one keep-alive
connection. Every answer must be the success the request expects; a
connection error, a timeout or any other status is a failure.

    rolling_restart_load.py URL STOP_FILE [--workers N]

Prints one JSON line: requests, failures (the first ones, described),
and the statuses seen. Exit status 0 when nothing failed.
"""

import argparse
import http.client
import json
import os
import threading
import time
import urllib.parse
import uuid

HEADERS = {
    "X-Auth-Token": "admin",
    "OpenStack-API-Version": "placement 1.39",
    "Content-Type": "application/json",
    "Accept": "application/json",
}


class Worker(threading.Thread):
    def __init__(self, url, stop_file, results):
        super().__init__(daemon=True)
        parsed = urllib.parse.urlsplit(url)
        self.host, self.port = parsed.hostname, parsed.port
        self.stop_file = stop_file
        self.results = results
        self.conn = None

    def request(self, method, path, body, expected):
        """Sends one request; records its outcome; returns the body or None."""
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        data = None if body is None else json.dumps(body)
        try:
            self.conn.request(method, path, body=data, headers=HEADERS)
            response = self.conn.getresponse()
            text = response.read()
            status = response.status
        except (OSError, http.client.HTTPException) as e:
            self.conn.close()
            self.conn = None
            self.results.record(f"{method} {path}: {type(e).__name__}: {e}", None)
            return None
        if status != expected:
            self.results.record(
                f"{method} {path}: {status} (expected {expected}): {text[:200]!r}", status
            )
            return None
        self.results.record(None, status)
        return json.loads(text) if text else {}

    def run(self):
        rp = str(uuid.uuid4())
        if self.request("POST", "/resource_providers",
                        {"name": f"rolling-{rp}", "uuid": rp}, 200) is None:
            return
        inventory = {"resource_provider_generation": 0,
                     "inventories": {"VCPU": {"total": 1000}}}
        if self.request("PUT", f"/resource_providers/{rp}/inventories",
                        inventory, 200) is None:
            return
        while not os.path.exists(self.stop_file):
            consumer = str(uuid.uuid4())
            allocation = {
                "allocations": {rp: {"resources": {"VCPU": 1}}},
                "project_id": str(uuid.uuid4()),
                "user_id": str(uuid.uuid4()),
                "consumer_generation": None,
                "consumer_type": "INSTANCE",
            }
            self.request("PUT", f"/allocations/{consumer}", allocation, 204)
            self.request("GET", f"/resource_providers/{rp}/usages", None, 200)
            self.request("DELETE", f"/allocations/{consumer}", None, 204)


class Results:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests = 0
        self.failures = []
        self.failed = 0
        self.statuses = {}

    def record(self, failure, status):
        with self.lock:
            self.requests += 1
            key = str(status) if status is not None else "no answer"
            self.statuses[key] = self.statuses.get(key, 0) + 1
            if failure is not None:
                self.failed += 1
                if len(self.failures) < 10:
                    self.failures.append(f"{time.strftime('%H:%M:%S')} {failure}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("stop_file")
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    results = Results()
    workers = [Worker(args.url, args.stop_file, results) for _ in range(args.workers)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print(json.dumps({"requests": results.requests, "failed": results.failed,
                      "statuses": results.statuses, "failures": results.failures}))
    return 1 if results.failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
