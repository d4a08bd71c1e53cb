#!/usr/bin/env python3
"""Crash durability of placement-api (standard library only).

Starts BINARY on DATABASE, makes providers with inventory, then W writer
threads PUT allocations (new consumers, and new amounts for consumers
already written, with their consumer generation) until the server is
killed with SIGKILL after a random part of the run. The server is started
again on the same database and the script checks:

- every write answered 2xx is there: the consumer's allocations are the
  last acknowledged ones (or those of a write that was in flight at the
  kill, which may or may not have landed, but never anything else);
- no write answered 4xx/5xx left a trace (a refused new consumer has no
  allocations);
- per provider, the usages equal the sum of the allocations against it,
  do not exceed the capacity, and the provider generation is usable (an
  inventory update with the generation read succeeds);
- the sum of allocations over all consumers equals the sum of usages.

Prints a JSON report with the counts; exit status 1 on any failure.
"""
import argparse
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid

V = "placement 1.38"
PROJECT = str(uuid.uuid4())
USER = str(uuid.uuid4())


class Client:
    def __init__(self, port):
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)

    def call(self, method, path, body=None):
        headers = {"x-auth-token": "admin", "openstack-api-version": V,
                   "accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["content-type"] = "application/json"
        try:
            self.conn.request(method, path, body=data, headers=headers)
            r = self.conn.getresponse()
            text = r.read()
        except Exception:
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            raise
        return r.status, (json.loads(text) if text else None)


def start(args, log):
    proc = subprocess.Popen(
        [args.binary, "--bind", f"127.0.0.1:{args.port}", "--database", args.database,
         "--policy", "legacy", "--auth-strategy", "noauth2"], stdout=log, stderr=log)
    for _ in range(300):
        try:
            c = Client(args.port)
            if c.call("GET", "/")[0] == 200:
                return proc
        except Exception:
            pass
        if proc.poll() is not None:
            sys.exit(f"placement-api exited with {proc.returncode}")
        time.sleep(0.1)
    proc.kill()
    sys.exit("placement-api did not start")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--binary", required=True)
    p.add_argument("--database", required=True)
    p.add_argument("--port", type=int, default=18991)
    p.add_argument("--writers", type=int, default=16)
    p.add_argument("--providers", type=int, default=4)
    p.add_argument("--seconds", type=float, default=10, help="longest run before the kill")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--log", default=os.devnull)
    args = p.parse_args()
    rng = random.Random(args.seed)
    log = open(args.log, "ab")
    proc = start(args, log)
    c = Client(args.port)
    providers = []
    for i in range(args.providers):
        u = str(uuid.uuid4())
        s, _ = c.call("POST", "/resource_providers", {"name": f"crash-{u}", "uuid": u})
        assert s == 200, s
        s, _ = c.call("PUT", f"/resource_providers/{u}/inventories", {
            "resource_provider_generation": 0,
            "inventories": {"VCPU": {"total": 100000}, "MEMORY_MB": {"total": 10**9}}})
        assert s == 200, s
        providers.append(u)

    # consumer -> (acked allocations or None, generation, in-flight allocations or None)
    state = {}
    lock = threading.Lock()
    stop = threading.Event()
    refused_by = {}
    counts = {"acked": 0, "refused": 0, "errors_5xx": 0, "transport_errors": 0}

    def writer(seed):
        wr = random.Random(seed)
        cl = Client(args.port)
        mine = []
        while not stop.is_set():
            if mine and wr.random() < 0.3:
                consumer = wr.choice(mine)
                with lock:
                    acked, gen, _ = state[consumer]
            else:
                consumer, acked, gen = str(uuid.uuid4()), None, None
            rp = wr.choice(providers)
            alloc = {rp: {"VCPU": wr.randint(1, 4), "MEMORY_MB": wr.randint(1, 64)}}
            body = {"allocations": {k: {"resources": v} for k, v in alloc.items()},
                    "project_id": PROJECT, "user_id": USER,
                    "consumer_generation": gen, "consumer_type": "INSTANCE"}
            with lock:
                state[consumer] = (acked, gen, alloc)
            try:
                s, b = cl.call("PUT", f"/allocations/{consumer}", body)
            except Exception:
                with lock:
                    counts["transport_errors"] += 1
                if stop.is_set():
                    return  # the kill: this write stays in flight
                continue
            with lock:
                if 200 <= s < 300:
                    counts["acked"] += 1
                    state[consumer] = (alloc, (gen or 0) + 1 if gen is not None else 1, None)
                    if consumer not in mine:
                        mine.append(consumer)
                else:
                    counts["errors_5xx" if s >= 500 else "refused"] += 1
                    key = f"{s} {(b or {}).get('errors', [{}])[0].get('code', '')}".strip()
                    refused_by[key] = refused_by.get(key, 0) + 1
                    state[consumer] = (acked, gen, None)

    threads = [threading.Thread(target=writer, args=(rng.randrange(2**32),))
               for _ in range(args.writers)]
    for t in threads:
        t.start()
    run_for = rng.uniform(args.seconds / 2, args.seconds)
    time.sleep(run_for)
    stop.set()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    for t in threads:
        t.join()

    proc = start(args, log)
    c = Client(args.port)
    fails = []
    in_flight = sum(1 for a, g, f in state.values() if f is not None)
    landed_in_flight = 0
    totals = {}
    checked = 0
    for consumer, (acked, gen, flight) in state.items():
        s, b = c.call("GET", f"/allocations/{consumer}")
        got = {rp: a["resources"] for rp, a in (b or {}).get("allocations", {}).items()}
        want = acked or {}
        checked += 1
        if got == want:
            pass
        elif flight is not None and got == flight:
            landed_in_flight += 1
        else:
            fails.append(f"consumer {consumer}: has {got}, acked {acked}, in flight {flight}")
        if got and b.get("consumer_generation") is None:
            fails.append(f"consumer {consumer}: no consumer generation")
        for rp, res in got.items():
            for rc, n in res.items():
                totals[(rp, rc)] = totals.get((rp, rc), 0) + n
    generations = {}
    for rp in providers:
        s, b = c.call("GET", f"/resource_providers/{rp}/usages")
        usages = b["usages"]
        s2, allocs = c.call("GET", f"/resource_providers/{rp}/allocations")
        summed = {}
        for a in allocs["allocations"].values():
            for rc, n in a["resources"].items():
                summed[rc] = summed.get(rc, 0) + n
        if {k: v for k, v in usages.items() if v} != summed:
            fails.append(f"provider {rp}: usages {usages} but allocations sum to {summed}")
        for rc in ("VCPU", "MEMORY_MB"):
            if usages.get(rc, 0) != totals.get((rp, rc), 0):
                fails.append(f"provider {rp} {rc}: usage {usages.get(rc, 0)} but consumers "
                             f"written hold {totals.get((rp, rc), 0)}")
        if usages.get("VCPU", 0) > 100000:
            fails.append(f"provider {rp}: over capacity")
        gen = b["resource_provider_generation"]
        generations[rp] = gen
        s, _ = c.call("PUT", f"/resource_providers/{rp}/inventories", {
            "resource_provider_generation": gen,
            "inventories": {"VCPU": {"total": 100001}, "MEMORY_MB": {"total": 10**9}}})
        if s != 200:
            fails.append(f"provider {rp}: inventory update at generation {gen} got {s}")
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    report = {
        "database": args.database.split("://", 1)[0],
        "killed_after_s": round(run_for, 2),
        "writes_acked_2xx": counts["acked"],
        "writes_refused_4xx": counts["refused"],
        "writes_refused_by_status": refused_by,
        "writes_5xx": counts["errors_5xx"],
        "writes_in_flight_at_kill": in_flight,
        "in_flight_that_landed": landed_in_flight,
        "consumers_checked": checked,
        "providers_checked": len(providers),
        "lost_or_wrong": len(fails),
        "failures": fails[:20],
    }
    print(json.dumps(report, indent=1))
    bad = len(fails) + counts["errors_5xx"] + (0 if counts["acked"] else 1)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
