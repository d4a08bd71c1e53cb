"""The requests of scripts/interop-db.sh: fill a Placement service through
its API, read it back with a fixed set of GETs, compare two readings.

    python interop_db.py fill URL [--skip-pending]
    python interop_db.py gets URL OUT.json [--skip-pending]
    python interop_db.py compare A.json B.json BACKEND

Every request is made as the admin of noauth2 (legacy policy). Each step
and GET belongs to an area (resource classes, providers, allocations,
candidates); scripts/interop-pending.txt lists the areas placement-api
does not serve yet, which --skip-pending leaves out and compare skips.
scripts/interop-known-differences.txt lists the GETs known to differ.

A reading records, for each GET, the status and the JSON body. compare
finds them equal when the statuses are and the bodies are equal as JSON
values, the order of list items aside (upstream does not order some
lists, such as traits): the texts of error details must be the same to
the byte; only their request ids are left out.
"""

import json
import os
import sys

import requests

HERE = os.path.dirname(os.path.abspath(__file__))

RP1 = "0a0b0c0d-0000-4000-8000-000000000001"
RP2 = "0a0b0c0d-0000-4000-8000-000000000002"
RP3 = "0a0b0c0d-0000-4000-8000-000000000003"
AGG1 = "0a0b0c0d-0000-4000-8000-0000000000a1"
AGG2 = "0a0b0c0d-0000-4000-8000-0000000000a2"
C1 = "0a0b0c0d-0000-4000-8000-0000000000c1"
C2 = "0a0b0c0d-0000-4000-8000-0000000000c2"
# The candidates area: a compute node with two NUMA nodes, a PF under the
# first one.
CN2 = "0a0b0c0d-0000-4000-8000-000000000004"
NUMA0 = "0a0b0c0d-0000-4000-8000-000000000005"
NUMA1 = "0a0b0c0d-0000-4000-8000-000000000006"
PF0 = "0a0b0c0d-0000-4000-8000-000000000007"
PROJECT = "0a0b0c0d-0000-4000-8000-0000000000e1"
USER = "0a0b0c0d-0000-4000-8000-0000000000f1"


def pending():
    areas = {}
    with open(os.path.join(HERE, "interop-pending.txt")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                area, _, reason = line.partition(" ")
                areas[area] = reason.strip()
    return areas


class Api:
    def __init__(self, url):
        self.url = url.rstrip("/")
        self.session = requests.Session()

    def call(self, method, path, version, body=None):
        headers = {"x-auth-token": "admin", "accept": "application/json"}
        if version:
            headers["openstack-api-version"] = "placement %s" % version
        if body is not None:
            headers["content-type"] = "application/json"
        return self.session.request(method, self.url + path, headers=headers,
                                    data=None if body is None else json.dumps(body),
                                    timeout=30)

    def generation(self, rp):
        r = self.call("GET", "/resource_providers/%s" % rp, "1.14")
        r.raise_for_status()
        return r.json()["generation"]


def write(api, method, path, version, body=None):
    r = api.call(method, path, version, body)
    if r.status_code >= 400:
        raise SystemExit("%s %s at %s: %d %s" % (method, path, version, r.status_code, r.text))


# The filling steps, by area, in order.
def fill_resource_classes(api):
    write(api, "PUT", "/resource_classes/CUSTOM_GOLD", "1.7")
    write(api, "POST", "/resource_classes", "1.2", {"name": "CUSTOM_SILVER"})
    write(api, "POST", "/resource_classes", "1.2", {"name": "CUSTOM_BRONZE"})
    write(api, "DELETE", "/resource_classes/CUSTOM_BRONZE", "1.2")


def fill_providers(api):
    write(api, "PUT", "/traits/CUSTOM_FAST", "1.6")
    write(api, "POST", "/resource_providers", "1.20", {"uuid": RP1, "name": "rp one"})
    write(api, "POST", "/resource_providers", "1.20",
          {"uuid": RP2, "name": "rp two", "parent_provider_uuid": RP1})
    write(api, "POST", "/resource_providers", "1.20", {"uuid": RP3, "name": "shared disk"})
    write(api, "PUT", "/resource_providers/%s/inventories" % RP1, "1.26", {
        "resource_provider_generation": api.generation(RP1),
        "inventories": {
            "VCPU": {"total": 8, "allocation_ratio": 16.0, "max_unit": 4},
            "MEMORY_MB": {"total": 4096, "reserved": 512, "step_size": 256},
            "CUSTOM_GOLD": {"total": 5, "reserved": 5},
        }})
    write(api, "PUT", "/resource_providers/%s/inventories" % RP2, "1.20", {
        "resource_provider_generation": api.generation(RP2),
        "inventories": {"VCPU": {"total": 2, "allocation_ratio": 1.1}}})
    write(api, "PUT", "/resource_providers/%s/inventories" % RP3, "1.20", {
        "resource_provider_generation": api.generation(RP3),
        "inventories": {"DISK_GB": {"total": 1000, "allocation_ratio": 1.5, "min_unit": 10}}})
    write(api, "PUT", "/resource_providers/%s/traits" % RP1, "1.6", {
        "resource_provider_generation": api.generation(RP1),
        "traits": ["CUSTOM_FAST", "HW_CPU_X86_AVX2"]})
    write(api, "PUT", "/resource_providers/%s/traits" % RP3, "1.6", {
        "resource_provider_generation": api.generation(RP3),
        "traits": ["MISC_SHARES_VIA_AGGREGATE"]})
    for rp, aggs in ((RP1, [AGG1, AGG2]), (RP3, [AGG1])):
        write(api, "PUT", "/resource_providers/%s/aggregates" % rp, "1.19", {
            "resource_provider_generation": api.generation(rp), "aggregates": aggs})


def fill_allocations(api):
    write(api, "PUT", "/allocations/%s" % C1, "1.38", {
        "allocations": {RP1: {"resources": {"VCPU": 2, "MEMORY_MB": 1024}},
                        RP3: {"resources": {"DISK_GB": 20}}},
        "project_id": PROJECT, "user_id": USER,
        "consumer_generation": None, "consumer_type": "INSTANCE"})
    write(api, "PUT", "/allocations/%s" % C2, "1.28", {
        "allocations": {RP2: {"resources": {"VCPU": 1}}},
        "project_id": PROJECT, "user_id": USER, "consumer_generation": None})
    write(api, "POST", "/allocations", "1.38", {
        C2: {"allocations": {RP2: {"resources": {"VCPU": 2}}},
             "project_id": PROJECT, "user_id": USER, "consumer_generation": 1,
             "consumer_type": "MIGRATION"}})


def fill_candidates(api):
    for name in ("CUSTOM_NUMA", "CUSTOM_PHYSNET_A"):
        write(api, "PUT", "/traits/%s" % name, "1.6")
    write(api, "POST", "/resource_providers", "1.20", {"uuid": CN2, "name": "cn two"})
    for rp, name, parent in ((NUMA0, "numa zero", CN2), (NUMA1, "numa one", CN2),
                             (PF0, "pf zero", NUMA0)):
        write(api, "POST", "/resource_providers", "1.20",
              {"uuid": rp, "name": name, "parent_provider_uuid": parent})
    inventories = (
        (CN2, {"VCPU": {"total": 4}}),
        (NUMA0, {"MEMORY_MB": {"total": 2048, "reserved": 256}}),
        (NUMA1, {"MEMORY_MB": {"total": 2048, "allocation_ratio": 1.5}}),
        (PF0, {"SRIOV_NET_VF": {"total": 8, "max_unit": 4}}),
    )
    for rp, inv in inventories:
        write(api, "PUT", "/resource_providers/%s/inventories" % rp, "1.20", {
            "resource_provider_generation": api.generation(rp), "inventories": inv})
    for rp, traits in ((CN2, ["HW_CPU_X86_SSE"]), (NUMA0, ["CUSTOM_NUMA"]),
                       (NUMA1, ["CUSTOM_NUMA"]), (PF0, ["CUSTOM_PHYSNET_A"])):
        write(api, "PUT", "/resource_providers/%s/traits" % rp, "1.6", {
            "resource_provider_generation": api.generation(rp), "traits": traits})
    write(api, "PUT", "/resource_providers/%s/aggregates" % CN2, "1.19", {
        "resource_provider_generation": api.generation(CN2), "aggregates": [AGG2]})
    write(api, "PUT", "/allocations/0a0b0c0d-0000-4000-8000-0000000000c3", "1.28", {
        "allocations": {NUMA1: {"resources": {"MEMORY_MB": 1024}}},
        "project_id": PROJECT, "user_id": USER, "consumer_generation": None})


FILL = [
    ("resource_classes", fill_resource_classes),
    ("providers", fill_providers),
    ("allocations", fill_allocations),
    ("candidates", fill_candidates),
]

AC = "/allocation_candidates?"

# (area, version, path): what is read back.
GETS = [
    ("base", None, "/"),
    ("base", "1.39", "/"),
    # Errors of the framework: their details are compared too.
    ("base", "1.99", "/"),
    ("base", "1.a", "/resource_providers"),
    ("base", "1.39", "/nowhere"),
    ("resource_classes", "1.2", "/resource_classes"),
    ("resource_classes", "1.39", "/resource_classes"),
    ("resource_classes", "1.2", "/resource_classes/CUSTOM_GOLD"),
    ("resource_classes", "1.39", "/resource_classes/VCPU"),
    ("resource_classes", "1.39", "/resource_classes/CUSTOM_BRONZE"),
    ("providers", "1.6", "/traits"),
    ("providers", "1.39", "/traits?name=startswith:CUSTOM"),
    ("providers", "1.39", "/traits?associated=true"),
    ("providers", "1.6", "/traits/CUSTOM_FAST"),
    ("providers", None, "/resource_providers"),
    ("providers", "1.14", "/resource_providers"),
    ("providers", "1.39", "/resource_providers"),
    ("providers", "1.39", "/resource_providers?in_tree=%s" % RP2),
    ("providers", "1.39", "/resource_providers?resources=VCPU:2"),
    ("providers", "1.39", "/resource_providers?member_of=%s" % AGG1),
    ("providers", "1.39", "/resource_providers?required=CUSTOM_FAST"),
    ("providers", "1.39", "/resource_providers/%s" % RP1),
    ("providers", "1.39", "/resource_providers/%s" % RP2),
    ("providers", "1.39", "/resource_providers/0a0b0c0d-0000-4000-8000-00000000dead"),
    ("providers", "1.39", "/resource_providers?uuid=abc"),
    ("providers", "1.0", "/resource_providers/%s/inventories" % RP1),
    ("providers", "1.39", "/resource_providers/%s/inventories" % RP2),
    ("providers", "1.39", "/resource_providers/%s/inventories" % RP3),
    ("providers", "1.39", "/resource_providers/%s/inventories/VCPU" % RP1),
    ("providers", "1.6", "/resource_providers/%s/traits" % RP1),
    ("providers", "1.1", "/resource_providers/%s/aggregates" % RP1),
    ("providers", "1.19", "/resource_providers/%s/aggregates" % RP3),
    ("allocations", "1.0", "/resource_providers/%s/usages" % RP1),
    ("allocations", "1.39", "/resource_providers/%s/usages" % RP2),
    ("allocations", "1.9", "/usages?project_id=%s" % PROJECT),
    ("allocations", "1.38", "/usages?project_id=%s" % PROJECT),
    ("allocations", "1.0", "/allocations/%s" % C1),
    ("allocations", "1.12", "/allocations/%s" % C1),
    ("allocations", "1.38", "/allocations/%s" % C1),
    ("allocations", "1.38", "/allocations/%s" % C2),
    ("allocations", "1.39", "/resource_providers/%s/allocations" % RP1),
    ("candidates", "1.10", AC + "resources=VCPU:1"),
    ("candidates", "1.10", AC + "resources=VCPU:1,DISK_GB:10"),
    ("candidates", "1.12", AC + "resources=VCPU:1,DISK_GB:10"),
    ("candidates", "1.12", AC + "resources=VCPU:3,MEMORY_MB:512"),
    ("candidates", "1.16", AC + "resources=VCPU:1&limit=0"),
    ("candidates", "1.17", AC + "resources=VCPU:1&required=CUSTOM_FAST"),
    ("candidates", "1.17", AC + "resources=VCPU:1&required=CUSTOM_NOPE"),
    ("candidates", "1.21", AC + "resources=VCPU:1,DISK_GB:10&member_of=%s" % AGG1),
    ("candidates", "1.22", AC + "resources=VCPU:1&required=!CUSTOM_FAST"),
    ("candidates", "1.24", AC + "resources=VCPU:1&member_of=%s&member_of=%s" % (AGG1, AGG2)),
    ("candidates", "1.25", AC + "resources1=VCPU:1&resources2=MEMORY_MB:512"),
    ("candidates", "1.25", AC + "resources=VCPU:1&resources1=MEMORY_MB:512"
                                "&resources2=MEMORY_MB:512&group_policy=isolate"),
    ("candidates", "1.25", AC + "resources=VCPU:1&resources1=MEMORY_MB:512"
                                "&resources2=MEMORY_MB:512&group_policy=none"),
    ("candidates", "1.27", AC + "resources=VCPU:1"),
    ("candidates", "1.28", AC + "resources=VCPU:1,MEMORY_MB:512"),
    ("candidates", "1.29", AC + "resources=VCPU:1,MEMORY_MB:512"),
    ("candidates", "1.29", AC + "resources=VCPU:1,DISK_GB:10"),
    ("candidates", "1.29", AC + "resources=VCPU:1,SRIOV_NET_VF:1&required=CUSTOM_PHYSNET_A"),
    ("candidates", "1.29", AC + "resources=VCPU:1,SRIOV_NET_VF:5"),
    ("candidates", "1.31", AC + "resources=VCPU:1&in_tree=%s" % NUMA0),
    ("candidates", "1.31", AC + "resources=VCPU:1&in_tree1=%s" % NUMA0),
    ("candidates", "1.32", AC + "resources=VCPU:1&member_of=!%s" % AGG1),
    ("candidates", "1.34", AC + "resources=VCPU:1,DISK_GB:10&resources_NET=SRIOV_NET_VF:2"
                                "&group_policy=none"),
    ("candidates", "1.34", AC + "resources_A=MEMORY_MB:1024&resources_B=MEMORY_MB:1024"
                                "&group_policy=isolate"),
    ("candidates", "1.35", AC + "resources=VCPU:1&root_required=HW_CPU_X86_SSE"),
    ("candidates", "1.35", AC + "resources=VCPU:1&root_required=!CUSTOM_FAST,HW_CPU_X86_AVX2"),
    ("candidates", "1.36", AC + "resources_MEM=MEMORY_MB:512&resources_VF=SRIOV_NET_VF:1"
                                "&same_subtree=_MEM,_VF&group_policy=none"),
    ("candidates", "1.36", AC + "required_NUMA=CUSTOM_NUMA&resources_VF=SRIOV_NET_VF:1"
                                "&same_subtree=_NUMA,_VF&group_policy=none"),
    ("candidates", "1.36", AC + "resources=VCPU:1&required_X=CUSTOM_NUMA"),
    ("candidates", "1.39", AC + "resources=VCPU:1,DISK_GB:10"),
    ("candidates", "1.39", AC + "resources=VCPU:1&required=in:CUSTOM_FAST,HW_CPU_X86_SSE"),
    ("candidates", "1.39", AC + "resources=VCPU:1&resources1=MEMORY_MB:1"
                                "&required1=in:CUSTOM_NUMA,CUSTOM_NOPE&group_policy=none"),
]


def fill(url, skip):
    api = Api(url)
    for area, step in FILL:
        if area in skip:
            print("fill: %s skipped (%s)" % (area, skip[area]))
            continue
        step(api)


def gets(url, out, skip):
    api = Api(url)
    reading = {}
    for area, version, path in GETS:
        if area in skip:
            continue
        r = api.call("GET", path, version)
        try:
            body = r.json()
        except ValueError:
            body = r.text
        reading["%s %s" % (version or "-", path)] = {"area": area, "status": r.status_code, "body": body}
    with open(out, "w") as f:
        json.dump(reading, f, indent=1, sort_keys=True)


def normal(value):
    if isinstance(value, dict):
        return {k: normal(v) for k, v in value.items()}
    if isinstance(value, list):
        return sorted((normal(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    return value


def without_volatile(body):
    # Error bodies carry a request id of their own.
    if isinstance(body, dict) and isinstance(body.get("errors"), list):
        return {"errors": [{k: v for k, v in e.items() if k != "request_id"}
                           for e in body["errors"]]}
    return body


def known_differences(backend):
    known = {}
    with open(os.path.join(HERE, "interop-known-differences.txt")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("@"):
                only, _, line = line.partition(" ")
                if only[1:] != backend:
                    continue
            version, path, reason = (line.split(" ", 2) + ["", ""])[:3]
            known["%s %s" % (version, path)] = reason
    return known


def compare(a_path, b_path, skip, backend):
    with open(a_path) as f:
        a = json.load(f)
    with open(b_path) as f:
        b = json.load(f)
    known = known_differences(backend)
    same = differ = skipped = expected = 0
    for key in sorted(set(a) | set(b)):
        area = (a.get(key) or b.get(key))["area"]
        if area in skip:
            skipped += 1
            continue
        if key not in a or key not in b:
            print("GET %s: read on one side only" % key)
            differ += 1
            continue
        x, y = a[key], b[key]
        if x["status"] == y["status"] and normal(without_volatile(x["body"])) == normal(without_volatile(y["body"])):
            same += 1
            if key in known:
                print("GET %s: identical now, remove it from interop-known-differences.txt" % key)
            continue
        if key in known:
            expected += 1
            print("GET %s differs as known: %s" % (key, known[key]))
            continue
        differ += 1
        print("GET %s differs:" % key)
        print("    %s: %s %s" % (os.path.basename(a_path), x["status"], json.dumps(x["body"], sort_keys=True)[:2000]))
        print("    %s: %s %s" % (os.path.basename(b_path), y["status"], json.dumps(y["body"], sort_keys=True)[:2000]))
    print("%d GETs identical, %d differ (%d more as known), %d pending" % (same, differ, expected, skipped))
    return differ == 0


def main():
    args = sys.argv[1:]
    skip = pending() if "--skip-pending" in args else {}
    args = [a for a in args if a != "--skip-pending"]
    if len(args) == 2 and args[0] == "fill":
        fill(args[1], skip)
    elif len(args) == 3 and args[0] == "gets":
        gets(args[1], args[2], skip)
    elif len(args) == 4 and args[0] == "compare":
        sys.exit(0 if compare(args[1], args[2], pending(), args[3]) else 1)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
