"""Seeds a Placement service through its API for scripts/bench-load.sh,
and writes the wrk Lua script for PUT /allocations/{consumer}.

    python3 bench_placement.py seed URL
    python3 bench_placement.py lua OUT.lua

Every UUID is derived from its index (uuid5), so two services seeded
with this script hold the same data: 1,000 resource providers, each with
VCPU, MEMORY_MB and DISK_GB inventory, and 50 consumers of project
USAGE_PROJECT holding allocations. Only the standard library is used; any
answer other than 2xx stops the seeding.
"""

import json
import sys
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


def lua(path):
    providers = ", ".join(f'"{provider(i)}"' for i in range(PROVIDERS))
    with open(path, "w") as out:
        out.write(LUA % {"providers": providers, "project": LOAD_PROJECT, "user": USER})


def main():
    if sys.argv[1] == "seed":
        seed(sys.argv[2].rstrip("/"))
    elif sys.argv[1] == "lua":
        lua(sys.argv[2])
    elif sys.argv[1] == "ids":
        print(provider(0), USAGE_PROJECT)
    else:
        sys.exit(f"unknown command {sys.argv[1]} (expected seed, lua or ids)")


if __name__ == "__main__":
    main()
