#!/usr/bin/env python3
"""Mixed-version load against a running placement-api (standard library only).

N connections (threads, each one keep-alive HTTP/1.1 connection) send a
total of R requests, each with a random microversion request: a valid
version (1.0..1.39, plain, in a multi-service header or with an upper-case
service type), `latest`, no header, a malformed version, or a well-formed
version out of range (1.40, 2.0, 0.9, ...), on read paths (GET /,
/resource_providers, /resource_classes, /traits, /usages) and write paths
(PUT /resource_providers/{uuid}, PUT /traits/{name}, PUT
/resource_classes/{name}). The expected status of each request is computed
from the microversion rules of the Placement profile: malformed -> 400,
out of range (including 0.x) -> 406, else the route's own answer at the
served version (404 below the version that added it).

It counts and requires zero of: a version header differing from the
version that should serve the request (asked, minimum when absent,
maximum for latest; none on a 400/406 version error), a 5xx, a 400 where
406 was due or the reverse, any other status than the expected one,
a transport error. Prints a JSON report; exit status 1 on any failure.
"""
import argparse
import http.client
import json
import random
import sys
import threading
import time
import uuid

MIN, MAX = (1, 0), (1, 39)
MALFORMED = ["1.01", "01.1", "1", "1.", "1.2.3", "-1.5", "1.a", "pony.horse",
             "123456789012345678901234567890.1", "1.123456789012345678901234567890",
             "LATEST", "Latest", "latest1", "1 .5", "v1.5", "1.5a", "\u00bd.1",
             # Overflow of a number is a parse error (400), never a panic.
             "4294967296.0", "1.4294967296"]
OUT_OF_RANGE = ["1.40", "1.41", "1.999", "2.0", "2.1", "0.9", "0.0", "0.1", "3.14",
                "65535.65535"]


def vstr(v):
    return f"{v[0]}.{v[1]}"


def pick_version(rng):
    """(header value or None, kind, served version or None)."""
    k = rng.random()
    if k < 0.45:
        v = (1, rng.randint(0, 39))
        form = rng.random()
        if form < 0.7:
            return f"placement {vstr(v)}", "valid", v
        if form < 0.85:
            return f"compute 2.{rng.randint(1, 90)}, placement {vstr(v)}", "valid", v
        return f"PLACEMENT {vstr(v)}", "valid", v
    if k < 0.6:
        return "placement latest", "latest", MAX
    if k < 0.7:
        return (None if rng.random() < 0.5 else "compute 2.1"), "absent", MIN
    if k < 0.85:
        return f"placement {rng.choice(MALFORMED)}", "malformed", None
    return f"placement {rng.choice(OUT_OF_RANGE)}", "out_of_range", None


def pick_op(rng, providers):
    """(method, path, body or None, fn(served version) -> set of statuses, kind)."""
    k = rng.randrange(8)
    if k == 0:
        return "GET", "/", None, lambda v: {200}, "read"
    if k == 1:
        return "GET", "/resource_providers", None, lambda v: {200}, "read"
    if k == 2:
        return "GET", "/resource_classes", None, lambda v: {200} if v >= (1, 2) else {404}, "read"
    if k == 3:
        return "GET", "/traits", None, lambda v: {200} if v >= (1, 6) else {404}, "read"
    if k == 4:
        return ("GET", f"/usages?project_id={uuid.uuid4()}", None,
                lambda v: {200} if v >= (1, 9) else {404}, "read")
    if k == 5:
        i = rng.randrange(len(providers))
        body = {"name": f"load-{providers[i]}-{rng.randrange(10**9)}"}
        return "PUT", f"/resource_providers/{providers[i]}", body, lambda v: {200}, "write"
    if k == 6:
        return ("PUT", f"/traits/CUSTOM_LOAD_{rng.randrange(200)}", None,
                lambda v: {201, 204} if v >= (1, 6) else {404}, "write")
    # A bodiless PUT of a resource class is 1.7+; 1.2-1.6 want a JSON body
    # (415 for no content type, as upstream).
    return ("PUT", f"/resource_classes/CUSTOM_LOAD_{rng.randrange(200)}", None,
            lambda v: {201, 204} if v >= (1, 7) else ({415} if v >= (1, 2) else {404}), "write")


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}
        self.failures = {}
        self.examples = []

    def add(self, key, n=1):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + n

    def fail(self, key, example):
        with self.lock:
            self.failures[key] = self.failures.get(key, 0) + 1
            if len(self.examples) < 20:
                self.examples.append(example)


def worker(args, n, seed, providers, stats, deadline):
    rng = random.Random(seed)
    previous = None
    conn = http.client.HTTPConnection(args.host, args.port, timeout=30)
    for _ in range(n):
        if time.monotonic() > deadline:
            stats.add("not_sent_time_limit")
            continue
        header, vkind, served = pick_version(rng)
        method, path, body, expect, okind = pick_op(rng, providers)
        headers = {"x-auth-token": "admin", "accept": "application/json"}
        if header is not None:
            headers["openstack-api-version"] = header
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["content-type"] = "application/json"
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            payload = resp.read()
            status = resp.status
            got = resp.getheader("openstack-api-version")
        except Exception as e:  # noqa: BLE001 - counted, then a new connection
            stats.fail("transport_error", f"{method} {path} [{header}]: {e!r} after {previous}")
            conn.close()
            conn = http.client.HTTPConnection(args.host, args.port, timeout=30)
            continue
        previous = (method, path, header, status, resp.getheader("connection"))
        stats.add(f"{okind}/{vkind}")
        stats.add(f"status_{status}")
        ex = f"{method} {path} [{header}] -> {status} {got!r} {payload[:200]!r}"
        if status >= 500:
            stats.fail("5xx", ex)
            continue
        if vkind == "malformed":
            want = {400}
        elif vkind == "out_of_range":
            want = {406}
        else:
            want = expect(served)
        if status not in want:
            if status == 400 and 406 in want:
                stats.fail("400_instead_of_406", ex)
            elif status == 406 and 400 in want:
                stats.fail("406_instead_of_400", ex)
            else:
                stats.fail("unexpected_status", ex)
            continue
        if served is None:
            if got is not None:
                stats.fail("version_header_on_version_error", ex)
        elif got != f"placement {vstr(served)}":
            stats.fail("wrong_version_header", ex)
        if status in (400, 406) and b'"errors"' not in payload:
            stats.fail("error_without_errors_body", ex)
    conn.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", default="http://127.0.0.1:8778")
    p.add_argument("--connections", type=int, default=64)
    p.add_argument("--requests", type=int, default=100000)
    p.add_argument("--max-seconds", type=float, default=900)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    hostport = args.url.split("://", 1)[1].rstrip("/")
    args.host, _, port = hostport.partition(":")
    args.port = int(port or 80)

    # Providers for the write path, made at the start.
    providers = []
    conn = http.client.HTTPConnection(args.host, args.port, timeout=30)
    for i in range(16):
        u = str(uuid.uuid4())
        conn.request("POST", "/resource_providers",
                     body=json.dumps({"name": f"load-{i}-start-{u}", "uuid": u}),
                     headers={"x-auth-token": "admin", "content-type": "application/json",
                              "openstack-api-version": "placement 1.20"})
        r = conn.getresponse()
        r.read()
        if r.status != 200:
            sys.exit(f"cannot create a provider: {r.status}")
        providers.append(u)
    conn.close()

    stats = Stats()
    start = time.monotonic()
    deadline = start + args.max_seconds
    per = [args.requests // args.connections] * args.connections
    for i in range(args.requests % args.connections):
        per[i] += 1
    threads = [threading.Thread(target=worker,
                                args=(args, per[i], args.seed * 1000 + i, providers, stats, deadline))
               for i in range(args.connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    answered = sum(v for k, v in stats.counts.items() if k.startswith("status_"))
    report = {
        "connections": args.connections,
        "requests": args.requests,
        "answered": answered,
        "seconds": round(elapsed, 1),
        "req_per_s": round(answered / elapsed, 1) if elapsed else None,
        "by_kind": {k: v for k, v in sorted(stats.counts.items()) if "/" in k},
        "by_status": {k: v for k, v in sorted(stats.counts.items()) if k.startswith("status_")},
        "failures": {k: stats.failures.get(k, 0) for k in [
            "wrong_version_header", "version_header_on_version_error", "5xx",
            "400_instead_of_406", "406_instead_of_400", "unexpected_status",
            "error_without_errors_body", "transport_error"]},
        "not_sent_time_limit": stats.counts.get("not_sent_time_limit", 0),
        "examples": stats.examples,
    }
    print(json.dumps(report, indent=1))
    bad = sum(report["failures"].values()) + report["not_sent_time_limit"]
    print(f"load: {answered} answered in {elapsed:.1f}s, {bad} failures", file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
