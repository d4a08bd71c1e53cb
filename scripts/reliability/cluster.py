#!/usr/bin/env python3
"""Racing allocation writes over several placement-api instances on one
database (standard library only).

The instances (--url, once each) share one database: PostgreSQL, MySQL,
or a Galera cluster with one instance per node. The script makes a few
providers with a small inventory through the first instance, then W
writer threads, each request sent to an instance picked at random, write
allocations for the same providers: new consumers, and new amounts for
consumers any thread wrote before (read first, from a random instance,
for their consumer generation), so that writes race for the same
providers' capacity and for the same consumers' generations. A 409
`placement.concurrent_update` is retried (the consumer read again, from
another instance) until it is resolved or --retries run out; any other
409 is a refusal (not enough capacity) and is not retried.

With --kill-cmd, the command is run after --kill-after seconds (it kills
the database node under the instance --killed-url): that instance may
answer 503 until --rejoin-cmd has run and the instance answers again;
the time to its first 503 and the longest request of each instance are
reported. A write answered 503 may or may not have landed ("in doubt").

At the end (all nodes back) it checks, through every instance and with
every --sql command (one per database node: a command that reads SQL on
stdin and prints tab-separated rows without a header):

- every acknowledged write is there: each consumer holds its last
  acknowledged allocations at their generation, or those of a later
  write in doubt, never anything else;
- no provider is over-allocated: for every inventory, the sum of the
  allocations is at most (total - reserved) * allocation_ratio;
- per provider, the usages equal the sum of the consumers' allocations
  (no allocation that no client wrote);
- no 5xx but the killed instance's 503s during the outage, every
  conflict resolved by a retry, no dropped connection.

Prints a JSON report; exit status 1 on any failure.
"""
import argparse
import http.client
import json
import random
import shlex
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid

V = "placement 1.38"
PROJECT = str(uuid.uuid4())
USER = str(uuid.uuid4())
# Each provider: 60 VCPU to hand out, 48,384 MB of memory (ratio 1.5).
INVENTORY = {"VCPU": {"total": 64, "reserved": 4, "allocation_ratio": 1.0},
             "MEMORY_MB": {"total": 32768, "reserved": 512, "allocation_ratio": 1.5}}


class Client:
    """One keep-alive connection to one instance."""

    def __init__(self, url, timeout):
        u = urllib.parse.urlsplit(url)
        self.url, self.host, self.port, self.timeout = url, u.hostname, u.port, timeout
        self.conn = None

    def call(self, method, path, body=None):
        headers = {"x-auth-token": "admin", "openstack-api-version": V,
                   "accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["content-type"] = "application/json"
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            self.conn.request(method, path, body=data, headers=headers)
            r = self.conn.getresponse()
            text = r.read()
        except Exception:
            self.conn.close()
            self.conn = None
            raise
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = {"unparsed": text[:200].decode("utf-8", "replace")}
        return r.status, parsed


def code_of(body):
    try:
        return body["errors"][0].get("code", "")
    except (TypeError, KeyError, IndexError):
        return ""


class Run:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.providers = []
        # consumer -> [generation after the last acknowledged write, allocations]
        self.acked = {}
        # consumer -> [(generation it would have had, allocations)] of writes in doubt
        self.doubt = {}
        # every consumer written (acknowledged or in doubt), once each
        self.consumers = []
        self.known = set()
        self.counts = {"puts": 0, "gets": 0, "acked": 0, "refused_capacity": 0,
                       "conflicts_409": 0, "conflicted_writes": 0, "conflicted_writes_resolved": 0,
                       "conflicted_writes_unresolved": 0,
                       "unavailable_503": 0, "unexpected": 0, "transport_errors": 0,
                       "in_doubt": 0}
        self.statuses = {}
        self.failures = []
        self.latency = {u: [] for u in args.url}
        self.put_latency = []
        self.kill_at = None
        self.rejoined_at = None
        self.first_503_after_kill = None
        self.outage_503_until = None

    def fail(self, what):
        with self.lock:
            if len(self.failures) < 50:
                self.failures.append(what)

    def outage(self, url):
        """Whether 503s from url are allowed now (its node is down or rejoining)."""
        return (self.args.killed_url == url and self.kill_at is not None
                and (self.rejoined_at is None
                     or time.monotonic() < self.rejoined_at + self.args.rejoin_grace))

    def send(self, client, method, path, body=None):
        """One request; returns (status, body), or (None, None) on a dropped connection."""
        start = time.monotonic()
        try:
            status, parsed = client.call(method, path, body)
        except Exception as e:
            took = time.monotonic() - start
            with self.lock:
                self.latency[client.url].append((start, took))
                self.counts["transport_errors"] += 1
            self.fail(f"{method} {path} on {client.url}: {type(e).__name__}: {e} after {took:.1f} s")
            return None, None
        took = time.monotonic() - start
        with self.lock:
            self.latency[client.url].append((start, took))
            if method == "PUT":
                self.put_latency.append(took)
                self.counts["puts"] += 1
            else:
                self.counts["gets"] += 1
            key = str(status)
            self.statuses[key] = self.statuses.get(key, 0) + 1
            if status == 503:
                self.counts["unavailable_503"] += 1
                if (self.kill_at is not None and self.first_503_after_kill is None
                        and client.url == self.args.killed_url):
                    self.first_503_after_kill = time.monotonic() - self.kill_at
        if status == 503 and self.outage(client.url):
            with self.lock:
                self.outage_503_until = time.monotonic()
        elif status >= 500:
            self.fail(f"{method} {path} on {client.url}: {status} {json.dumps(parsed)[:300]}")
        return status, parsed

    def setup(self):
        c = Client(self.args.url[0], 30)
        for _ in range(self.args.providers):
            u = str(uuid.uuid4())
            s, b = c.call("POST", "/resource_providers", {"name": f"race-{u}", "uuid": u})
            if s != 200:
                sys.exit(f"creating a provider: {s} {b}")
            s, b = c.call("PUT", f"/resource_providers/{u}/inventories",
                          {"resource_provider_generation": 0, "inventories": INVENTORY})
            if s != 200:
                sys.exit(f"setting inventory: {s} {b}")
            self.providers.append(u)

    def writer(self, seed):
        rng = random.Random(seed)
        clients = [Client(u, self.args.request_timeout) for u in self.args.url]
        while not self.stop.is_set():
            with self.lock:
                existing = rng.choice(self.consumers) if self.consumers and rng.random() < 0.6 else None
            consumer = existing or str(uuid.uuid4())
            rps = rng.sample(self.providers, rng.choice((1, 1, 1, 2)))
            alloc = {rp: {"VCPU": rng.randint(1, 4), "MEMORY_MB": rng.choice((256, 512, 1024, 2048))}
                     for rp in rps}
            self.write(rng, clients, consumer, alloc, known_new=existing is None)

    def write(self, rng, clients, consumer, alloc, known_new):
        """Writes alloc for consumer, retrying conflicts and 503s."""
        gen = None
        read_first = not known_new
        conflicted = False
        for _ in range(self.args.retries):
            if self.stop.is_set() and not conflicted:
                return
            if read_first:
                client = rng.choice(clients)
                s, b = self.send(client, "GET", f"/allocations/{consumer}")
                if s != 200:
                    if s == 503 or s is None:
                        continue
                    self.fail(f"GET /allocations/{consumer}: {s}")
                    return
                gen = b.get("consumer_generation")
            read_first = True
            client = rng.choice(clients)
            body = {"allocations": {rp: {"resources": r} for rp, r in alloc.items()},
                    "project_id": PROJECT, "user_id": USER,
                    "consumer_generation": gen, "consumer_type": "INSTANCE"}
            s, b = self.send(client, "PUT", f"/allocations/{consumer}", body)
            after = (gen or 0) + 1
            if s is not None and 200 <= s < 300:
                with self.lock:
                    self.counts["acked"] += 1
                    if conflicted:
                        self.counts["conflicted_writes_resolved"] += 1
                    prev = self.acked.get(consumer)
                    if prev is None or prev[0] < after:
                        self.acked[consumer] = [after, alloc]
                    if consumer not in self.known:
                        self.known.add(consumer)
                        self.consumers.append(consumer)
                return
            if s == 409 and code_of(b) == "placement.concurrent_update":
                with self.lock:
                    self.counts["conflicts_409"] += 1
                    if not conflicted:
                        self.counts["conflicted_writes"] += 1
                conflicted = True
                continue
            if s == 409:
                with self.lock:
                    self.counts["refused_capacity"] += 1
                    if conflicted:
                        self.counts["conflicted_writes_resolved"] += 1
                return
            if s == 503 or s is None:
                with self.lock:
                    self.counts["in_doubt"] += 1
                    self.doubt.setdefault(consumer, []).append((after, alloc))
                    if consumer not in self.known:
                        self.known.add(consumer)
                        self.consumers.append(consumer)
                continue
            with self.lock:
                self.counts["unexpected"] += 1
            self.fail(f"PUT /allocations/{consumer} on {client.url}: {s} {json.dumps(b)[:300]}")
            return
        if conflicted:
            with self.lock:
                self.counts["conflicted_writes_unresolved"] += 1
            self.fail(f"PUT /allocations/{consumer}: conflicts not resolved in {self.args.retries} tries")

    def run_shell(self, cmd):
        done = subprocess.run(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
        if done.returncode != 0:
            self.fail(f"{cmd}: exit {done.returncode}: {done.stderr[-500:]}")

    def wait_answering(self, url, limit):
        """Until url answers a database read (not 503), up to limit seconds."""
        c = Client(url, 10)
        end = time.monotonic() + limit
        while time.monotonic() < end:
            try:
                s, _ = c.call("GET", "/resource_providers?name=none")
                if s == 200:
                    return True
            except Exception:
                pass
            time.sleep(0.1)
        return False

    def check(self):
        """The checks of the docstring, through every instance and SQL command."""
        checked = 0
        for url in self.args.url:
            c = Client(url, 30)
            totals = {}
            for consumer in self.consumers:
                s, b = c.call("GET", f"/allocations/{consumer}")
                if s != 200:
                    self.fail(f"check GET /allocations/{consumer} on {url}: {s}")
                    continue
                got = {rp: a["resources"] for rp, a in b.get("allocations", {}).items()}
                gen = b.get("consumer_generation")
                acked = self.acked.get(consumer)
                fine = acked is not None and gen == acked[0] and got == acked[1]
                fine = fine or any(gen == g and got == a for g, a in self.doubt.get(consumer, []))
                fine = fine or (acked is None and not got and consumer in self.doubt)
                if not fine:
                    self.fail(f"consumer {consumer} on {url}: has {got} at generation {gen}, "
                              f"acknowledged {acked}, in doubt {self.doubt.get(consumer)}")
                for rp, res in got.items():
                    for rc, n in res.items():
                        totals[(rp, rc)] = totals.get((rp, rc), 0) + n
                checked += 1
            for rp in self.providers:
                s, b = c.call("GET", f"/resource_providers/{rp}/usages")
                for rc in INVENTORY:
                    used = b["usages"].get(rc, 0)
                    if used != totals.get((rp, rc), 0):
                        self.fail(f"provider {rp} {rc} on {url}: usage {used}, consumers hold "
                                  f"{totals.get((rp, rc), 0)}")
                    inv = INVENTORY[rc]
                    if used > (inv["total"] - inv["reserved"]) * inv["allocation_ratio"]:
                        self.fail(f"provider {rp} {rc} on {url}: over-allocated, {used} used")
        over = []
        for cmd in self.args.sql:
            rows = sql_rows(cmd, OVER_ALLOCATION_SQL)
            if rows is None:
                self.fail(f"the SQL check could not run: {cmd}")
                continue
            for row in rows:
                over.append(f"{cmd.split()[0]}: {row}")
            mine = sql_rows(cmd, USED_SQL)
            if not mine:
                self.fail(f"{cmd}: no allocations found by SQL")
        for row in over:
            self.fail(f"over-allocated (SQL): {row}")
        return checked, len(over)


# Every inventory whose allocations exceed (total - reserved) * ratio.
OVER_ALLOCATION_SQL = """
SELECT rp.uuid, i.resource_class_id, i.total, i.reserved, i.allocation_ratio, SUM(a.used)
FROM inventories i
JOIN resource_providers rp ON rp.id = i.resource_provider_id
JOIN allocations a ON a.resource_provider_id = i.resource_provider_id
  AND a.resource_class_id = i.resource_class_id
GROUP BY rp.uuid, i.resource_class_id, i.total, i.reserved, i.allocation_ratio
HAVING SUM(a.used) > (i.total - i.reserved) * i.allocation_ratio;
"""
USED_SQL = "SELECT COUNT(*) FROM allocations HAVING COUNT(*) > 0;"


def sql_rows(cmd, sql):
    done = subprocess.run(shlex.split(cmd), input=sql, capture_output=True, text=True)
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
        return None
    return [line.split("\t") for line in done.stdout.splitlines() if line.strip()]


def percentile(values, p):
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, int(len(values) * p))] * 1000, 1)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", action="append", required=True, help="an instance (repeat)")
    p.add_argument("--sql", action="append", default=[],
                   help="a command reading SQL on stdin, printing tab-separated rows (repeat)")
    p.add_argument("--writers", type=int, default=16)
    p.add_argument("--providers", type=int, default=4)
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--retries", type=int, default=30)
    p.add_argument("--request-timeout", type=float, default=60)
    p.add_argument("--max-request-seconds", type=float, default=30,
                   help="the longest any request may take")
    p.add_argument("--max-killed-seconds", type=float, default=5,
                   help="the longest a request to the killed node's instance may take "
                        "while the node is down")
    p.add_argument("--kill-cmd")
    p.add_argument("--kill-after", type=float, default=5)
    p.add_argument("--killed-url")
    p.add_argument("--rejoin-cmd")
    p.add_argument("--down-seconds", type=float, default=3,
                   help="how long the node stays down before --rejoin-cmd")
    p.add_argument("--rejoin-grace", type=float, default=2,
                   help="seconds after the rejoin during which 503s are still allowed")
    p.add_argument("--seed", type=int)
    args = p.parse_args()
    if args.kill_cmd and (not args.killed_url or not args.rejoin_cmd):
        p.error("--kill-cmd needs --killed-url and --rejoin-cmd")
    rng = random.Random(args.seed)
    run = Run(args)
    run.setup()
    threads = [threading.Thread(target=run.writer, args=(rng.randrange(2**32),))
               for _ in range(args.writers)]
    started = time.monotonic()
    for t in threads:
        t.start()
    kill_report = {}
    if args.kill_cmd:
        time.sleep(args.kill_after)
        with run.lock:
            run.kill_at = time.monotonic()
        run.run_shell(args.kill_cmd)
        time.sleep(args.down_seconds)
        rejoin_start = time.monotonic()
        run.run_shell(args.rejoin_cmd)
        back = run.wait_answering(args.killed_url, 60)
        with run.lock:
            run.rejoined_at = time.monotonic()
        kill_report = {"rejoin_s": round(run.rejoined_at - rejoin_start, 2),
                       "killed_instance_answers_again": back}
        if not back:
            run.fail(f"{args.killed_url} does not answer after the rejoin")
    remaining = args.seconds - (time.monotonic() - started)
    if remaining > 0:
        time.sleep(remaining)
    run.stop.set()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    checked, over = run.check()
    c = run.counts
    if c["transport_errors"]:
        pass  # each is already a failure
    if not c["acked"]:
        run.fail("no write acknowledged")
    if args.kill_cmd:
        if run.first_503_after_kill is None:
            run.fail("the killed node's instance never answered 503")
        kill_report["first_503_after_kill_s"] = (round(run.first_503_after_kill, 3)
                                                 if run.first_503_after_kill is not None else None)
        kill_report["last_503_after_kill_s"] = (round(run.outage_503_until - run.kill_at, 2)
                                                if run.outage_503_until else None)
    # The longest request of each instance, before the kill, from the kill
    # until the killed node's instance answered again, and after.
    phases = {}
    for u, samples in run.latency.items():
        by_phase = {}
        for start, took in samples:
            if run.kill_at is None or start < run.kill_at:
                phase = "before_kill"
            elif run.rejoined_at is None or start < run.rejoined_at:
                phase = "outage"
            else:
                phase = "after_rejoin"
            by_phase[phase] = max(by_phase.get(phase, 0), took)
        phases[u] = {k: round(v, 3) for k, v in by_phase.items()}
        for phase, t in by_phase.items():
            bound = args.max_request_seconds
            if u == args.killed_url and phase == "outage":
                bound = args.max_killed_seconds
            if t > bound:
                run.fail(f"a request to {u} ({phase}) took {t:.1f} s (bound {bound} s)")
    longest = phases
    report = {
        "instances": len(args.url),
        "writers": args.writers,
        "providers": args.providers,
        "seconds": round(elapsed, 1),
        "requests": c["puts"] + c["gets"],
        "requests_per_s": round((c["puts"] + c["gets"]) / elapsed, 1),
        "puts_per_s": round(c["puts"] / elapsed, 1),
        "put_p50_ms": percentile(run.put_latency, 0.5),
        "put_p99_ms": percentile(run.put_latency, 0.99),
        "longest_request_s": longest,
        "counts": c,
        "statuses": run.statuses,
        "consumers_checked": checked,
        "over_allocated_sql": over,
        "kill": kill_report or None,
        "failures": run.failures,
    }
    print(json.dumps(report, indent=1))
    sys.exit(1 if run.failures else 0)


if __name__ == "__main__":
    main()
