#!/usr/bin/env python3
"""Bad-input sweep over every write endpoint of placement-api (standard
library only; psql for PostgreSQL).

Starts BINARY on a fresh DATABASE with a small body limit, makes a fixture
(a provider with inventory, a custom resource class, a custom trait, an
aggregate, an allocation), dumps every table, then sends each write
endpoint (POST/PUT/DELETE of resource providers, inventories, resource
classes, traits, provider traits, aggregates, allocations, POST
/allocations, POST /reshaper) a set of bad requests: invalid JSON, non-object
bodies, invalid UTF-8, deep nesting, missing and unknown fields, every field
replaced by values of the wrong type, over-long strings, unicode and NUL,
SQL metacharacters, invalid UUIDs in the path and the body, an oversized
body, a wrong content type. Every one must get a 4xx with an errors body;
then the dump must be unchanged. Prints a JSON report; exit 1 on failure.
"""
import argparse
import http.client
import json
import os
import subprocess
import sys
import time
import uuid

LIMIT = 65536
V = "placement latest"
BAD_UUIDS = ["not-a-uuid", "1234", "'%20OR%20'1'='1", "%27%3B%20DROP%20TABLE%20traits%3B--",
             "%E2%80%AE%F0%9F%98%80", "%00", "x" * 300, "00000000-0000-0000-0000-00000000000g"]
BAD_NAMES = ["lowercase", "CUSTOM_lower", "CUSTOM_" + "A" * 300, "CUSTOM_%27%3B--",
             "CUSTOM_%E2%98%83", "CUSTOM_%00", "%F0%9F%98%80", "VCPU%27%20OR%201=1"]
WRONG = [None, True, 1.5, -1, 2**70, "text", [], {}, [1, "a"], {"a": {"b": None}},
         "' OR 1=1; DROP TABLE resource_providers; --", "\u202e\U0001F600\u0000", "x" * 300,
         "00000000-0000-0000-0000-00000000000g"]
RAW = [b"{", b'{"a": ', b"", b"null", b"[]", b'"x"', b"1", b"tru", b'{"a": 1,}',
       b"\xff\xfe{}", b'{"\\ud800": 1}', b"[" * 100000 + b"]" * 100000, b"1e999",
       b'{"a": 1e999999}', b"{" * 5000]


def dump(args):
    tables = ["resource_classes", "resource_providers", "inventories", "allocations",
              "resource_provider_aggregates", "placement_aggregates", "traits",
              "resource_provider_traits", "projects", "users", "consumers", "consumer_types"]
    out = {}
    if args.database.startswith("sqlite"):
        import sqlite3
        path = args.database.split(":///", 1)[1]
        db = sqlite3.connect(path)
        for t in tables:
            out[t] = sorted(repr(r) for r in db.execute(f"SELECT * FROM {t}"))
        db.close()
    elif args.database.startswith("mysql"):
        from urllib.parse import urlparse
        u = urlparse(args.database)
        cmd = ["mysql", "--protocol=TCP", "-h", u.hostname, "-P", str(u.port or 3306),
               "-u", u.username or "root", "-B", "-N", u.path.lstrip("/")]
        if u.password:
            cmd.append(f"-p{u.password}")
        for t in tables:
            r = subprocess.run(cmd + ["-e", f"SELECT * FROM {t}"],
                               capture_output=True, text=True, check=True)
            out[t] = sorted(r.stdout.splitlines())
    else:
        url = args.database.replace("postgresql+psycopg2://", "postgresql://")
        for t in tables:
            r = subprocess.run(["psql", url, "-X", "-q", "-A", "-t", "-c",
                                f"SELECT row_to_json(x)::text FROM {t} x"],
                               capture_output=True, text=True, check=True)
            out[t] = sorted(r.stdout.splitlines())
    return out


class Client:
    def __init__(self, port):
        self.port = port
        self.conn = None

    def call(self, method, path, body=None, ctype="application/json", version=V):
        headers = {"x-auth-token": "admin", "openstack-api-version": version,
                   "accept": "application/json"}
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            if ctype:
                headers["content-type"] = ctype
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            try:
                self.conn.request(method, path, body=data, headers=headers)
                r = self.conn.getresponse()
                text = r.read()
                if r.getheader("connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                return r.status, text
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise


def mutations(body):
    """Bodies derived from a valid one: missing, unknown and wrong-typed
    fields, down to depth 3."""
    def walk(node, path):
        if isinstance(node, dict):
            for k in list(node):
                yield path + [k], "missing"
                yield from walk(node[k], path + [k])
            yield path + ["unknown_field"], "unknown"
        if path:
            for w in WRONG:
                yield path, ("value", w)

    for path, what in walk(body, []):
        if len(path) > 4:
            continue
        b = json.loads(json.dumps(body))
        node = b
        for k in path[:-1]:
            node = node[k]
        last = path[-1]
        if what == "missing":
            del node[last]
        elif what == "unknown":
            node[last] = 1
        else:
            if node.get(last) == what[1]:
                continue
            node[last] = what[1]
        yield "/".join(path), what if isinstance(what, str) else f"value {what[1]!r}"[:60], b


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--binary", required=True)
    p.add_argument("--database", required=True)
    p.add_argument("--port", type=int, default=18992)
    p.add_argument("--log", default=os.devnull)
    args = p.parse_args()
    log = open(args.log, "ab")
    proc = subprocess.Popen([args.binary, "--bind", f"127.0.0.1:{args.port}", "--database",
                             args.database, "--policy", "legacy", "--max-body-size", str(LIMIT),
                             "--auth-strategy", "noauth2"],
                            stdout=log, stderr=log)
    try:
        return run(args, proc)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run(args, proc):
    c = Client(args.port)
    for _ in range(300):
        try:
            if c.call("GET", "/")[0] == 200:
                break
        except OSError:
            c.conn = None
        if proc.poll() is not None:
            sys.exit("placement-api exited")
        time.sleep(0.1)
    rp, rp2, consumer = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    project, user, agg = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())

    def ok(method, path, body=None, want=(200, 201, 204)):
        s, t = c.call(method, path, body)
        assert s in want, (method, path, s, t)
        return json.loads(t) if t else None

    ok("POST", "/resource_providers", {"name": "bad-input-rp", "uuid": rp})
    ok("POST", "/resource_providers", {"name": "bad-input-rp2", "uuid": rp2})
    ok("POST", "/resource_classes", {"name": "CUSTOM_BAD_INPUT"})
    ok("PUT", f"/resource_providers/{rp}/inventories",
       {"resource_provider_generation": 0,
        "inventories": {"VCPU": {"total": 8}, "DISK_GB": {"total": 100}, "CUSTOM_BAD_INPUT": {"total": 1}}})
    ok("PUT", "/traits/CUSTOM_BAD_INPUT")
    ok("PUT", f"/resource_providers/{rp}/traits",
       {"resource_provider_generation": 1, "traits": ["CUSTOM_BAD_INPUT"]})
    ok("PUT", f"/resource_providers/{rp}/aggregates",
       {"resource_provider_generation": 2, "aggregates": [agg]})
    ok("PUT", f"/allocations/{consumer}",
       {"allocations": {rp: {"resources": {"VCPU": 1}}}, "project_id": project, "user_id": user,
        "consumer_generation": None, "consumer_type": "INSTANCE"})
    gen = ok("GET", f"/resource_providers/{rp}")["generation"]
    before = dump(args)

    # More than the provider has: refused whatever else is changed.
    alloc_body = {"allocations": {rp: {"resources": {"VCPU": 100000}}}, "project_id": project,
                  "user_id": user, "consumer_generation": 1, "consumer_type": "INSTANCE"}
    new_consumer = str(uuid.uuid4())
    # Each body below is valid but for a stale or conflicting part, so that
    # every mutation of it must be refused too: the generations are wrong
    # or the names already taken.
    endpoints = [
        ("POST", "/resource_providers", {"name": "bad-input-rp", "uuid": rp}),
        ("PUT", f"/resource_providers/{rp2}", {"name": "bad-input-rp", "parent_provider_uuid": rp2}),
        ("PUT", f"/resource_providers/{rp}/inventories",
         {"resource_provider_generation": gen + 100, "inventories": {"VCPU": {"total": 9, "reserved": 0, "min_unit": 1, "max_unit": 8, "step_size": 1, "allocation_ratio": 1.0}}}),
        ("POST", f"/resource_providers/{rp}/inventories", {"resource_class": "VCPU", "total": 8}),
        ("PUT", f"/resource_providers/{rp}/inventories/VCPU",
         {"resource_provider_generation": gen + 100, "total": 9}),
        ("POST", "/resource_classes", {"name": "CUSTOM_BAD_INPUT"}),
        ("PUT", f"/resource_providers/{rp}/traits",
         {"resource_provider_generation": gen + 100, "traits": ["CUSTOM_BAD_INPUT"]}),
        ("PUT", f"/resource_providers/{rp}/aggregates",
         {"resource_provider_generation": gen + 100, "aggregates": [agg]}),
        ("PUT", f"/allocations/{consumer}", dict(alloc_body, consumer_generation=7)),
        ("PUT", f"/allocations/{new_consumer}", dict(alloc_body, consumer_generation=3)),
        ("POST", "/allocations", {consumer: dict(alloc_body, consumer_generation=7)}),
        ("POST", "/reshaper", {"inventories": {rp: {"resource_provider_generation": gen + 100,
                                                    "inventories": {"VCPU": {"total": 8}}}},
                                "allocations": {consumer: dict(alloc_body, consumer_generation=7)}}),
    ]
    cases = []
    for method, path, body in endpoints:
        cases.append((method, path, body, "application/json", "stale/conflicting"))
        for raw in RAW:
            cases.append((method, path, raw, "application/json", f"raw {raw[:12]!r}"))
        for where, what, b in mutations(body):
            cases.append((method, path, b, "application/json", f"{where}: {what}"))
        cases.append((method, path, b"{" + b" " * (LIMIT + 10) + b"}", "application/json", "oversized"))
        cases.append((method, path, body, "text/plain", "wrong content type"))
        cases.append((method, path, json.dumps(body).encode(), None, "no content type"))
    paths = []
    for bad in BAD_UUIDS:
        paths += [("PUT", f"/resource_providers/{bad}", {"name": "x"}),
                  ("DELETE", f"/resource_providers/{bad}", None),
                  ("PUT", f"/resource_providers/{bad}/inventories",
                   {"resource_provider_generation": 0, "inventories": {}}),
                  ("DELETE", f"/resource_providers/{bad}/inventories", None),
                  ("DELETE", f"/resource_providers/{bad}/inventories/VCPU", None),
                  ("PUT", f"/resource_providers/{bad}/traits",
                   {"resource_provider_generation": 0, "traits": []}),
                  ("DELETE", f"/resource_providers/{bad}/traits", None),
                  ("PUT", f"/resource_providers/{bad}/aggregates",
                   {"resource_provider_generation": 0, "aggregates": []}),
                  ("PUT", f"/allocations/{bad}", alloc_body),
                  ("DELETE", f"/allocations/{bad}", None)]
    for bad in BAD_NAMES:
        paths += [("PUT", f"/resource_classes/{bad}", None),
                  ("DELETE", f"/resource_classes/{bad}", None),
                  ("PUT", f"/traits/{bad}", None),
                  ("DELETE", f"/traits/{bad}", None),
                  ("PUT", f"/resource_providers/{rp}/inventories/{bad}",
                   {"resource_provider_generation": gen, "total": 1}),
                  ("DELETE", f"/resource_providers/{rp}/inventories/{bad}", None)]
    # Standard classes and traits cannot be changed; in-use things cannot go.
    paths += [("DELETE", "/resource_classes/VCPU", None), ("PUT", "/resource_classes/VCPU", None),
              ("DELETE", "/traits/HW_CPU_X86_AVX", None),
              ("DELETE", "/resource_classes/CUSTOM_BAD_INPUT", None),
              ("DELETE", "/traits/CUSTOM_BAD_INPUT", None),
              ("DELETE", f"/resource_providers/{rp}", None),
              ("DELETE", f"/resource_providers/{rp}/inventories/VCPU", None),
              ("DELETE", f"/resource_providers/{rp}/inventories", None)]
    for method, path, body in paths:
        cases.append((method, path, body, "application/json", "bad path"))

    counts = {}
    fails = []
    for method, path, body, ctype, label in cases:
        try:
            s, text = c.call(method, path, body, ctype)
        except Exception as e:  # noqa: BLE001
            fails.append(f"{method} {path} [{label}]: {e!r}")
            if c.conn is not None:
                c.conn.close()
            c.conn = None
            continue
        counts[s] = counts.get(s, 0) + 1
        if not 400 <= s < 500:
            fails.append(f"{method} {path[:80]} [{label}]: {s} {text[:200]!r}")
            continue
        try:
            errors = json.loads(text)["errors"]
            assert errors and errors[0]["status"] == s
        except Exception:  # noqa: BLE001
            fails.append(f"{method} {path[:80]} [{label}]: {s} without an errors body: {text[:200]!r}")
    after = dump(args)
    changed = [t for t in before if before[t] != after[t]]
    alive = proc.poll() is None
    report = {"database": args.database.split("://", 1)[0], "requests": len(cases),
              "by_status": {str(k): v for k, v in sorted(counts.items())},
              "not_4xx_or_no_errors_body": len(fails), "tables_changed": changed,
              "server_alive": alive, "failures": fails[:30]}
    print(json.dumps(report, indent=1))
    return 1 if fails or changed or not alive else 0


if __name__ == "__main__":
    sys.exit(main())
