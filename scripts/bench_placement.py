"""Seeds a Placement service through its API for scripts/bench-load.sh,
writes the wrk Lua script for PUT /allocations/{consumer}, and seeds,
asks and compares the allocation candidate rows.

    python3 bench_placement.py seed URL
    python3 bench_placement.py lua OUT.lua
    python3 bench_placement.py ids
    VENV/bin/python bench_placement.py forget-load DATABASE_URL
    python3 bench_placement.py seed-candidates ROW URL [--hosts N] [--width N] [--threads N]
    python3 bench_placement.py query ROW [--hosts N] [--width N]
    python3 bench_placement.py compare ROW UPSTREAM_URL OURS_URL [--hosts N] [--width N]
                                       [--max-candidates N]
    python3 bench_placement.py ask ROW URL [--hosts N] [--timeout SECONDS]

`forget-load` deletes, straight from the database (SQLAlchemy, from
upstream's venv), the consumers of LOAD_PROJECT and their allocations:
what the allocations row wrote. bench-load.sh runs it on both databases
after that row, so that the rows after it read the same data on both
sides rather than one more allocation per request each side answered.

Every UUID is derived from its index (uuid5), so two services seeded
with this script hold the same data. `seed`: 1,000 resource providers,
each with VCPU, MEMORY_MB and DISK_GB inventory, and 50 consumers of
project USAGE_PROJECT holding allocations (the placement part's rows).

The candidate rows (`--part candidates`), each on its own new database;
every tenth host holds a consumer's allocation, so that the summaries
have usage to show:

  a  HOSTS flat providers (default 1,000) with VCPU, MEMORY_MB and
     DISK_GB; Nova's request for the three classes, limit=1000;
  b  the same with 10,000 providers; limit a tenth of them (1,000);
  c  HOSTS hosts (1,000), each a root with DISK_GB, two NUMA children
     (HW_NUMA_ROOT; VCPU, MEMORY_MB) and under the first NUMA child a
     PCI child (HW_NIC_SRIOV, CUSTOM_PHYSNET_PHYS1; SRIOV_NET_VF); the
     request: DISK_GB unsuffixed, a _COMPUTE group (VCPU, MEMORY_MB,
     required HW_NUMA_ROOT) and a _NET group (SRIOV_NET_VF, required
     both PCI traits), same_subtree=_COMPUTE,_NET, group_policy=isolate,
     limit=1000: one candidate per host (the first NUMA child's subtree);
  d  HOSTS hosts (1,000) with VCPU and MEMORY_MB in 10 aggregates, each
     aggregate with a sharing provider (MISC_SHARES_VIA_AGGREGATE) of
     DISK_GB; Nova's three-class request, limit=1000: each host with its
     aggregate's sharing provider;
  e  HOSTS hosts (1) with VCPU, MEMORY_MB and DISK_GB and WIDTH (8) PCI
     children of one unit each (CUSTOM_PCI_8086_1572); the request: VCPU
     and MEMORY_MB unsuffixed and WIDTH groups of one PCI device each,
     group_policy=isolate, limit=1000 (8! = 40,320 candidates per host,
     bounded by the services' max_allocation_candidates).

`seed-candidates` seeds one row's data: the providers a host per thread
(default 4), their inventories in batches (POST /reshaper), traits and
aggregates a provider per thread, the allocations in batches (POST
/allocations); an answer of 500 (upstream on SQLite: "database is
locked" between its two workers) is retried. `query` prints the row's
request (path and query string, at 1.39). `compare` asks both services
the row's request, prints the seconds each took on stdout, and fails,
showing the first difference, unless the answers are the same:
allocation requests compared as sets (upstream's order is that of a
Python set of objects hashed from strings, so it changes from one
process to the next) and provider summaries as dicts. Where `limit` cut
the answer, both must hold as many requests, the unlimited answers must
be the same, and each limited answer must be part of its unlimited one
with the summaries of exactly the trees it uses. `ask` asks one service
the row's request once and prints the seconds it took and the number of
allocation requests answered, or `timeout SECONDS` when no answer came
within SECONDS (the scale rows: upstream at 100,000 providers). Rows listed in
bench-candidates-known-differences.txt may differ in which valid
candidates they hold, and only in that. Only the standard library is
used (forget-load aside); any answer other than 2xx (after the retries)
stops the seeding.
"""

import argparse
import concurrent.futures
import itertools
import json
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

NS = uuid.UUID("3b0a6c52-7f7c-4a8e-9b51-6d2f0c1e8a90")
PROVIDERS = 1000
USAGE_CONSUMERS = 50
USAGE_PROJECT = str(uuid.uuid5(NS, "project-usages"))
LOAD_PROJECT = str(uuid.uuid5(NS, "project-load"))
USER = str(uuid.uuid5(NS, "user"))
HEADERS = {
    "x-auth-token": "admin",
    "openstack-api-version": "placement 1.38",
    "content-type": "application/json",
    "accept": "application/json",
}


def provider(i):
    return str(uuid.uuid5(NS, f"rp-{i}"))


def call(base, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method, headers=HEADERS)
    with urllib.request.urlopen(req, timeout=60) as resp:
        resp.read()


def seed_provider(base, i):
    rp = provider(i)
    call(base, "POST", "/resource_providers", {"name": f"compute{i:04d}", "uuid": rp})
    call(
        base,
        "PUT",
        f"/resource_providers/{rp}/inventories",
        {
            "resource_provider_generation": 0,
            "inventories": {
                "VCPU": {"total": 10_000_000, "allocation_ratio": 16.0},
                "MEMORY_MB": {"total": 1_000_000_000},
                "DISK_GB": {"total": 1_000_000_000},
            },
        },
    )


def seed_consumer(base, i):
    consumer = str(uuid.uuid5(NS, f"consumer-{i}"))
    body = {
        "allocations": {
            provider(i): {"resources": {"VCPU": 2, "MEMORY_MB": 4096, "DISK_GB": 20}}
        },
        "project_id": USAGE_PROJECT,
        "user_id": USER,
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    call(base, "PUT", f"/allocations/{consumer}", body)


def seed(base):
    # One writer: upstream on SQLite answers concurrent writes with 500
    # ("database is locked").
    for i in range(PROVIDERS):
        seed_provider(base, i)
    for i in range(USAGE_CONSUMERS):
        seed_consumer(base, i)


LUA = """-- PUT /allocations/{consumer}: every request a new consumer (the run
-- number from the command line, the thread number and a counter in the
-- UUID), on one of the seeded providers chosen at random, so that every
-- request should succeed (204). Counts the answers by status and prints
-- them at the end ("statuses: 204=...").
--   wrk ... -s allocations.lua URL -- RUN_NUMBER
local providers = {%(providers)s}
local counter = 0
local run = 0
statuses = {}  -- global: done() reads it from each thread
local threads = {}
-- thread_id: a global set in each thread's state by setup().

function setup(thread)
  table.insert(threads, thread)
  thread:set("thread_id", #threads)
end

function init(args)
  run = tonumber(args[1] or "0")
  math.randomseed((thread_id or 0) * 7919 + run)
end

function request()
  counter = counter + 1
  local consumer = string.format("%%08x-%%04x-4000-8000-%%012x", thread_id, run, counter)
  local rp = providers[math.random(#providers)]
  local body = '{"allocations": {"' .. rp .. '": {"resources": {"VCPU": 1, "MEMORY_MB": 64}}}, ' ..
    '"project_id": "%(project)s", "user_id": "%(user)s", ' ..
    '"consumer_generation": null, "consumer_type": "INSTANCE"}'
  return wrk.format("PUT", "/allocations/" .. consumer, nil, body)
end

function response(status, headers, body)
  local key = tostring(status)
  statuses[key] = (statuses[key] or 0) + 1
end

function done(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
    local counts = thread:get("statuses") or {}
    for status, n in pairs(counts) do
      total[status] = (total[status] or 0) + n
    end
  end
  local parts = {}
  for status, n in pairs(total) do
    table.insert(parts, status .. "=" .. n)
  end
  table.sort(parts)
  io.write("statuses: " .. table.concat(parts, " ") .. "\\n")
end
"""


def forget_load(url):
    # Imported here: only this command needs more than the standard library.
    import sqlalchemy

    consumers = ("SELECT c.uuid FROM consumers c JOIN projects p ON p.id = c.project_id "
                 "WHERE p.external_id = :project")
    engine = sqlalchemy.create_engine(url)
    with engine.begin() as conn:
        # Read first: MySQL cannot delete from a table its subquery reads.
        uuids = [row[0] for row in conn.execute(sqlalchemy.text(consumers), {"project": LOAD_PROJECT})]
        for start in range(0, len(uuids), 1000):
            batch = uuids[start:start + 1000]
            for table, column in (("allocations", "consumer_id"), ("consumers", "uuid")):
                conn.execute(sqlalchemy.text(f"DELETE FROM {table} WHERE {column} IN :ids")
                             .bindparams(sqlalchemy.bindparam("ids", expanding=True)), {"ids": batch})
    engine.dispose()
    print(f"forgot {len(uuids)} consumers of the load project at {url.split('://')[0]}", file=sys.stderr)


def lua(path):
    providers = ", ".join(f'"{provider(i)}"' for i in range(PROVIDERS))
    with open(path, "w") as out:
        out.write(LUA % {"providers": providers, "project": LOAD_PROJECT, "user": USER})


# The candidate rows (--part candidates). Each row's data is a list of
# hosts, each a list of calls made in order; the hosts are seeded by a few
# threads at once, after the row's shared calls (classes, traits, sharing
# providers).

ROWS = ("a", "b", "c", "d", "e")
DEFAULT_HOSTS = {"a": 1000, "b": 10_000, "c": 1000, "d": 1000, "e": 1}
AGGREGATES = 10
PCI_CLASS = "CUSTOM_PCI_8086_1572"
PHYSNET = "CUSTOM_PHYSNET_PHYS1"
# Row e's children and groups (--width; bench-load.sh --check uses 5).
WIDE_CHILDREN = 8
# Hosts holding a consumer's allocation: one in ten.
USED_EVERY = 10
HOST_INVENTORY = {
    "VCPU": {"total": 64, "allocation_ratio": 4.0},
    "MEMORY_MB": {"total": 262_144, "reserved": 512},
    "DISK_GB": {"total": 2000},
}
NOVA_REQUEST = "resources=VCPU:1,MEMORY_MB:512,DISK_GB:1"


def row_uuid(row, name):
    return str(uuid.uuid5(NS, f"{row}-{name}"))


class Seeder:
    """Calls one service, retrying answers of 500 (upstream on SQLite
    answers concurrent writes with "database is locked")."""

    def __init__(self, base):
        self.base = base
        self.lock = threading.Lock()
        self.retries = 0
        self.calls = 0

    def call(self, method, path, body=None, version="1.38"):
        headers = dict(HEADERS, **{"openstack-api-version": f"placement {version}"})
        data = None if body is None else json.dumps(body).encode()
        with self.lock:
            self.calls += 1
        for attempt in range(60):
            req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=300) as resp:
                    return json.loads(resp.read() or b"null")
            except urllib.error.HTTPError as e:
                text = e.read().decode(errors="replace")
                # A retried write may have been done by the try that
                # failed: its conflict is that success.
                if e.code == 409 and attempt > 0:
                    return None
                if e.code != 500:
                    raise SystemExit(f"{method} {path}: {e.code} {text[:500]}") from None
                with self.lock:
                    self.retries += 1
                time.sleep(0.02 * (attempt + 1))
        raise SystemExit(f"{method} {path}: still 500 after 60 tries")


class Data:
    """A row's data: providers by host (each host's in creation order,
    parents first) and consumers' allocations."""

    def __init__(self):
        self.hosts = []
        self.consumers = {}
        self.shared = []

    def host(self):
        self.hosts.append([])
        return self.hosts[-1]


def provider_entry(rp, name, inventories, parent=None, traits=(), aggregates=()):
    return {"uuid": rp, "name": name, "parent": parent, "inventories": inventories,
            "traits": sorted(traits), "aggregates": sorted(aggregates)}


def consumer_entry(data, row, i, allocations):
    data.consumers[row_uuid(row, f"consumer-{i}")] = {
        "allocations": {rp: {"resources": res} for rp, res in allocations.items()},
        "project_id": USAGE_PROJECT,
        "user_id": USER,
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }


def row_data(row, hosts):
    data = Data()
    if row == "d":
        for k in range(AGGREGATES):
            data.shared.append(provider_entry(
                row_uuid(row, f"share-{k}"), f"share{k:02d}", {"DISK_GB": {"total": 100_000}},
                traits=["MISC_SHARES_VIA_AGGREGATE"], aggregates=[row_uuid(row, f"aggregate-{k}")]))
    for i in range(hosts):
        h = data.host()
        used = i % USED_EVERY == 0
        if row in ("a", "b"):
            rp = provider(i)
            h.append(provider_entry(rp, f"compute{i:05d}", HOST_INVENTORY))
            if used:
                consumer_entry(data, row, i, {rp: {"VCPU": 2, "MEMORY_MB": 4096, "DISK_GB": 20}})
        elif row == "c":
            root = row_uuid(row, f"host-{i}")
            numa = [row_uuid(row, f"host-{i}-numa{j}") for j in range(2)]
            pci = row_uuid(row, f"host-{i}-pci")
            h.append(provider_entry(root, f"numa-host{i:05d}", {"DISK_GB": {"total": 2000}}))
            for j, rp in enumerate(numa):
                h.append(provider_entry(
                    rp, f"numa-host{i:05d}-numa{j}",
                    {"VCPU": {"total": 32, "allocation_ratio": 4.0}, "MEMORY_MB": {"total": 131_072}},
                    parent=root, traits=["HW_NUMA_ROOT"]))
            h.append(provider_entry(pci, f"numa-host{i:05d}-pci", {"SRIOV_NET_VF": {"total": 8}},
                                    parent=numa[0], traits=["HW_NIC_SRIOV", PHYSNET]))
            if used:
                consumer_entry(data, row, i, {root: {"DISK_GB": 20}, numa[1]: {"VCPU": 2, "MEMORY_MB": 2048},
                                              pci: {"SRIOV_NET_VF": 1}})
        elif row == "d":
            rp = row_uuid(row, f"host-{i}")
            k = i % AGGREGATES
            h.append(provider_entry(rp, f"shared-host{i:05d}",
                                    {"VCPU": HOST_INVENTORY["VCPU"], "MEMORY_MB": HOST_INVENTORY["MEMORY_MB"]},
                                    aggregates=[row_uuid(row, f"aggregate-{k}")]))
            if used:
                consumer_entry(data, row, i, {rp: {"VCPU": 2, "MEMORY_MB": 4096},
                                              row_uuid(row, f"share-{k}"): {"DISK_GB": 20}})
        else:
            root = row_uuid(row, f"host-{i}")
            h.append(provider_entry(root, f"wide-host{i:05d}", HOST_INVENTORY))
            for j in range(WIDE_CHILDREN):
                h.append(provider_entry(row_uuid(row, f"host-{i}-pci{j}"), f"wide-host{i:05d}-pci{j}",
                                        {PCI_CLASS: {"total": 1}}, parent=root))
            if used:
                consumer_entry(data, row, i, {root: {"VCPU": 2, "MEMORY_MB": 4096}})
    return data


def chunks(items, n):
    return [items[k:k + n] for k in range(0, len(items), n)]


def seed_candidates(row, base, hosts, threads):
    """Providers created a host per thread, their inventories set in
    batches (POST /reshaper, one transaction per 500 providers), then
    traits and aggregates a provider per thread, then the allocations in
    batches (POST /allocations)."""
    s = Seeder(base)
    data = row_data(row, hosts)
    start = time.monotonic()
    if row == "c":
        s.call("PUT", f"/traits/{PHYSNET}")
    if row == "e":
        s.call("PUT", f"/resource_classes/{PCI_CLASS}")
    every = data.shared + [p for h in data.hosts for p in h]

    def create(entries):
        for p in entries:
            body = {"name": p["name"], "uuid": p["uuid"]}
            if p["parent"]:
                body["parent_provider_uuid"] = p["parent"]
            s.call("POST", "/resource_providers", body)

    def tag(p):
        generation = generations[p["uuid"]]
        if p["traits"]:
            s.call("PUT", f"/resource_providers/{p['uuid']}/traits",
                   {"resource_provider_generation": generation, "traits": p["traits"]})
            generation += 1
        if p["aggregates"]:
            s.call("PUT", f"/resource_providers/{p['uuid']}/aggregates",
                   {"resource_provider_generation": generation, "aggregates": p["aggregates"]})

    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        for f in [pool.submit(create, h) for h in [data.shared] + data.hosts]:
            f.result()
        for batch in chunks([p for p in every if p["inventories"]], 500):
            s.call("POST", "/reshaper", {
                "inventories": {p["uuid"]: {"resource_provider_generation": 0, "inventories": p["inventories"]}
                                for p in batch},
                "allocations": {}})
        # The generations the reshaper left (upstream's moves by two).
        generations = {p["uuid"]: p["generation"]
                       for p in s.call("GET", "/resource_providers")["resource_providers"]}
        for f in [pool.submit(tag, p) for p in every if p["traits"] or p["aggregates"]]:
            f.result()
    for batch in chunks(list(data.consumers.items()), 100):
        s.call("POST", "/allocations", dict(batch))
    print(f"seeded row {row} ({hosts} hosts, {len(every)} providers) at {base} in "
          f"{time.monotonic() - start:.0f} s: {s.calls} requests, {s.retries} answers of 500 retried",
          file=sys.stderr)


def query(row, hosts):
    """The row's request: path and query string."""
    if row in ("a", "d"):
        q = f"{NOVA_REQUEST}&limit=1000"
    elif row == "b":
        q = f"{NOVA_REQUEST}&limit={max(1, min(1000, hosts // 10))}"
    elif row == "c":
        q = ("resources=DISK_GB:20"
             "&resources_COMPUTE=VCPU:2,MEMORY_MB:2048&required_COMPUTE=HW_NUMA_ROOT"
             f"&resources_NET=SRIOV_NET_VF:1&required_NET=HW_NIC_SRIOV,{PHYSNET}"
             "&same_subtree=_COMPUTE,_NET&group_policy=isolate&limit=1000")
    else:
        groups = "".join(f"&resources{j}={PCI_CLASS}:1" for j in range(1, WIDE_CHILDREN + 1))
        q = f"resources=VCPU:1,MEMORY_MB:512{groups}&group_policy=isolate&limit=1000"
    return f"/allocation_candidates?{q}"


def get(base, path, timeout=600):
    headers = dict(HEADERS, **{"openstack-api-version": "placement 1.39"})
    req = urllib.request.Request(base + path, headers=headers)
    start = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read()), time.monotonic() - start
    except urllib.error.HTTPError as e:
        raise SystemExit(f"GET {base}{path}: {e.code} {e.read().decode(errors='replace')[:500]}") from None


def canonical_request(areq):
    """An allocation request as a comparable string: keys sorted, and the
    mappings' provider lists sorted."""
    areq = dict(areq)
    areq["mappings"] = {k: sorted(v) for k, v in areq.get("mappings", {}).items()}
    return json.dumps(areq, sort_keys=True)


def canonical_summaries(doc):
    out = {}
    for rp, summary in doc["provider_summaries"].items():
        summary = dict(summary)
        summary["traits"] = sorted(summary.get("traits", []))
        out[rp] = summary
    return out


def roots_of(doc, requests):
    """The root providers of the trees the allocation requests use."""
    summaries = doc["provider_summaries"]
    return {summaries[rp]["root_provider_uuid"]
            for areq in requests for rp in json.loads(areq)["allocations"]}


def same_answers(label, up, ours):
    """Both answers as sets of requests and dicts of summaries; the
    first difference, or None."""
    up_r = {canonical_request(a) for a in up["allocation_requests"]}
    ours_r = {canonical_request(a) for a in ours["allocation_requests"]}
    for name, doc, keys in (("upstream", up, up_r), ("ours", ours, ours_r)):
        if len(keys) != len(doc["allocation_requests"]):
            return f"{label}: {name} answers the same allocation request more than once"
    if up_r != ours_r:
        only_up, only_ours = sorted(up_r - ours_r), sorted(ours_r - up_r)
        first = (f"only upstream has {only_up[0]}" if only_up else f"only ours has {only_ours[0]}")
        return (f"{label}: the allocation requests differ (upstream {len(up_r)}, ours {len(ours_r)}; "
                f"{len(only_up)} only upstream's, {len(only_ours)} only ours); {first}")
    return same_summaries(label, canonical_summaries(up), canonical_summaries(ours))


def same_summaries(label, up_s, ours_s, names=("upstream", "ours")):
    for rp in sorted(set(up_s) | set(ours_s)):
        if up_s.get(rp) != ours_s.get(rp):
            return (f"{label}: the provider summary of {rp} differs: "
                    f"{names[0]} {json.dumps(up_s.get(rp), sort_keys=True)}, "
                    f"{names[1]} {json.dumps(ours_s.get(rp), sort_keys=True)}")
    return None


def limited_part(label, name, limited, full, limit):
    """A limited answer: `limit` requests of the unlimited answer, with
    the unlimited summaries of exactly the trees they use."""
    requests = {canonical_request(a) for a in limited["allocation_requests"]}
    every = {canonical_request(a) for a in full["allocation_requests"]}
    if len(limited["allocation_requests"]) != limit or len(requests) != limit:
        return f"{label}: {name} answers {len(limited['allocation_requests'])} requests for limit={limit}"
    extra = sorted(requests - every)
    if extra:
        return f"{label}: {name}'s limited answer has a request its unlimited one has not: {extra[0]}"
    roots = roots_of(full, requests)
    expected = {rp: s for rp, s in canonical_summaries(full).items() if s["root_provider_uuid"] in roots}
    return same_summaries(label, expected, canonical_summaries(limited),
                          (f"{name}'s unlimited answer", f"{name}'s limited answer"))


def known_differences():
    """ROW -> reason, from bench-candidates-known-differences.txt."""
    path = __file__.rsplit("/", 1)[0] + "/bench-candidates-known-differences.txt"
    known = {}
    with open(path) as lines:
        for line in lines:
            if line.strip() and not line.startswith("#"):
                row, reason = line.strip().split(" ", 1)
                known[row] = reason
    return known


def valid_requests(row, hosts):
    """Every allocation request the row's data allows for its request,
    canonical (only for row e: each host's 8! ways to give its 8
    children to the 8 groups)."""
    if row != "e":
        return None
    out = set()
    for i in range(hosts):
        root = row_uuid(row, f"host-{i}")
        children = [row_uuid(row, f"host-{i}-pci{j}") for j in range(WIDE_CHILDREN)]
        for order in itertools.permutations(children):
            allocations = {root: {"resources": {"VCPU": 1, "MEMORY_MB": 512}}}
            mappings = {"": [root]}
            for g, child in enumerate(order, 1):
                allocations[child] = {"resources": {PCI_CLASS: 1}}
                mappings[str(g)] = [child]
            out.add(canonical_request({"allocations": allocations, "mappings": mappings}))
    return out


def known_difference(row, hosts, up, ours):
    """The weaker comparison of a listed row: as many requests, the same
    summaries, every request valid. The first difference, or None."""
    valid = valid_requests(row, hosts)
    if valid is None:
        return f"row {row}: no check of valid requests for this row"
    for name, doc in (("upstream", up), ("ours", ours)):
        requests = {canonical_request(a) for a in doc["allocation_requests"]}
        if len(requests) != len(doc["allocation_requests"]):
            return f"row {row}: {name} answers the same allocation request more than once"
        wrong = sorted(requests - valid)
        if wrong:
            return f"row {row}: {name} answers a request the data does not allow: {wrong[0]}"
    if len(up["allocation_requests"]) != len(ours["allocation_requests"]):
        return (f"row {row}: upstream answers {len(up['allocation_requests'])} requests, "
                f"ours {len(ours['allocation_requests'])}")
    return same_summaries(f"row {row}", canonical_summaries(up), canonical_summaries(ours))


def compare(row, up_base, ours_base, hosts, max_candidates):
    path = query(row, hosts)
    label = f"row {row}: GET {path}"
    up, up_time = get(up_base, path)
    ours, ours_time = get(ours_base, path)
    print(f"row {row}: upstream {len(up['allocation_requests'])} requests in {up_time:.2f} s, "
          f"ours {len(ours['allocation_requests'])} in {ours_time:.3f} s", file=sys.stderr)
    # On stdout, for bench-load.sh: each side's time for the request alone,
    # upstream's asked again where a cold first answer could mislead
    # (bench-load.sh tells slow rows from the others at 0.3125 s).
    if 0.15 < up_time < 3:
        up_time = get(up_base, path)[1]
    print(f"{up_time:.3f} {ours_time:.3f}")
    params = urllib.parse.parse_qsl(path.split("?", 1)[1])
    limit = int(dict(params).get("limit", 0))
    counts = (len(up["allocation_requests"]), len(ours["allocation_requests"]))
    cut = limit and max(counts) >= limit
    bounded = max_candidates >= 0 and max(counts) >= max_candidates
    if not cut or bounded:
        # Without a cut by limit, or where the generation bound cuts (a
        # request without limit would be cut the same), the whole answers.
        problem = same_answers(label, up, ours)
    else:
        # limit cut the answer: which part each side keeps is its order's.
        unlimited = "/allocation_candidates?" + urllib.parse.urlencode(
            [(k, v) for k, v in params if k != "limit"], safe=",:")
        up_full, up_full_time = get(up_base, unlimited)
        ours_full, ours_full_time = get(ours_base, unlimited)
        print(f"row {row} without limit: upstream {len(up_full['allocation_requests'])} requests in "
              f"{up_full_time:.2f} s, ours {len(ours_full['allocation_requests'])} in {ours_full_time:.3f} s",
              file=sys.stderr)
        problem = (same_answers(f"row {row}: GET {unlimited}", up_full, ours_full)
                   or limited_part(label, "upstream", up, up_full, limit)
                   or limited_part(label, "ours", ours, ours_full, limit))
    # A listed difference is one of which candidates a cut keeps.
    known = known_differences().get(row) if cut or bounded else None
    if known and not problem:
        print(f"row {row}: the same answers, but the row is listed in "
              f"bench-candidates-known-differences.txt: remove its line", file=sys.stderr)
    elif known:
        weaker = known_difference(row, hosts, up, ours)
        if weaker:
            sys.exit(f"the answers differ beyond the known difference ({known}): {weaker}")
        shown = problem if len(problem) < 500 else problem[:500] + " ..."
        print(f"row {row}: KNOWN DIFFERENCE ({known}): {shown}", file=sys.stderr)
        print(f"row {row}: otherwise the same answers (as many requests, each valid, the same summaries)",
              file=sys.stderr)
        return
    if problem:
        sys.exit(f"the answers differ: {problem}")
    print(f"row {row}: the same answers", file=sys.stderr)


def ask(row, base, hosts, timeout):
    try:
        doc, seconds = get(base, query(row, hosts), timeout)
    except TimeoutError:
        print(f"timeout {timeout}")
        return
    print(f"{seconds:.3f} {len(doc['allocation_requests'])}")


def main():
    parser = argparse.ArgumentParser(description="Seeds and asks Placement services for scripts/bench-load.sh.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("seed").add_argument("url")
    sub.add_parser("lua").add_argument("out")
    sub.add_parser("ids")
    sub.add_parser("forget-load").add_argument("url")
    p = sub.add_parser("seed-candidates")
    p.add_argument("row", choices=ROWS)
    p.add_argument("url")
    p.add_argument("--hosts", type=int)
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--width", type=int, help="row e: children and groups (default 8)")
    p = sub.add_parser("query")
    p.add_argument("row", choices=ROWS)
    p.add_argument("--hosts", type=int)
    p.add_argument("--width", type=int, help="row e: children and groups (default 8)")
    p = sub.add_parser("compare")
    p.add_argument("row", choices=ROWS)
    p.add_argument("upstream")
    p.add_argument("ours")
    p.add_argument("--hosts", type=int)
    p.add_argument("--width", type=int, help="row e: children and groups (default 8)")
    p.add_argument("--max-candidates", type=int, default=-1,
                   help="the services' [placement] max_allocation_candidates")
    p = sub.add_parser("ask")
    p.add_argument("row", choices=ROWS)
    p.add_argument("url")
    p.add_argument("--hosts", type=int)
    p.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    global WIDE_CHILDREN
    WIDE_CHILDREN = getattr(args, "width", None) or WIDE_CHILDREN
    hosts = getattr(args, "hosts", None)
    if hasattr(args, "row") and hosts is None:
        hosts = DEFAULT_HOSTS[args.row]
    if args.command == "seed":
        seed(args.url.rstrip("/"))
    elif args.command == "lua":
        lua(args.out)
    elif args.command == "ids":
        print(provider(0), USAGE_PROJECT)
    elif args.command == "forget-load":
        forget_load(args.url)
    elif args.command == "seed-candidates":
        seed_candidates(args.row, args.url.rstrip("/"), hosts, args.threads)
    elif args.command == "query":
        print(query(args.row, hosts))
    elif args.command == "ask":
        ask(args.row, args.url.rstrip("/"), hosts, args.timeout)
    else:
        compare(args.row, args.upstream.rstrip("/"), args.ours.rstrip("/"), hosts, args.max_candidates)


if __name__ == "__main__":
    main()
