"""Drives Nova's placement report client against one placement server.

    python nova_report_client.py run --url URL --out FILE [--workdir DIR]
    python nova_report_client.py run --keystone --url URL --out FILE ...
    python nova_report_client.py compare A.json B.json

`run` makes nova.scheduler.client.report.SchedulerReportClient (Nova
34.0.0, scripts/requirements/nova.txt) do what the compute service and the
scheduler do with placement: a compute node's provider tree with nested
children (NUMA nodes, a physical GPU with VGPU inventory), inventory, trait
and aggregate sync, allocation candidates from a request spec with granular
groups, claims (and consumer and provider generation conflicts), moving an
instance's allocations to a migration consumer and back, a reshape of
inventory and allocations into the NUMA children, deleting allocations and
providers. After every step the placement state (providers, inventories,
traits, aggregates, allocations, usages) is read through the same session
and written, with what the client returned or raised, to FILE (JSON).
Every UUID is fixed, so two servers given the same calls must end up in
the same state.

Without --keystone, [placement] uses keystoneauth's admin_token plugin
(token "admin", noauth2). With --keystone, the password plugin with the
service user of scripts/keystone.sh (KEYSTONE_* variables) and URL as the
endpoint override.

`compare` prints the first step where the two dumps differ (a unified diff
of that step) and exits 1, or exits 0 when they are the same.
"""

import argparse
import copy
import difflib
import json
import os
import sys
import tempfile

# Fixed identities: both servers must see exactly the same requests.
CN1 = "c0000000-0000-4000-8000-000000000001"
CN2 = "c0000000-0000-4000-8000-000000000002"
NUMA0 = "c0000000-0000-4000-8000-0000000000a0"
NUMA1 = "c0000000-0000-4000-8000-0000000000a1"
PGPU = "c0000000-0000-4000-8000-0000000000b0"
AGG1 = "a0000000-0000-4000-8000-000000000001"
AGG2 = "a0000000-0000-4000-8000-000000000002"
AGG3 = "a0000000-0000-4000-8000-000000000003"
INST1 = "10000000-0000-4000-8000-000000000001"
INST2 = "10000000-0000-4000-8000-000000000002"
MIG1 = "20000000-0000-4000-8000-000000000001"
PROJECT = "30000000000040008000000000000001"
USER = "40000000000040008000000000000001"
CONSUMERS = (INST1, INST2, MIG1)
STATE_VERSION = "1.39"


def write_conf(workdir, args):
    path = os.path.join(workdir, "nova.conf")
    lines = [
        "[DEFAULT]",
        "transport_url = fake:/",
        "log_file = %s" % os.path.join(workdir, "nova-report-client.log"),
        "debug = true",
        "[oslo_concurrency]",
        "lock_path = %s" % workdir,
        "[placement]",
        "endpoint_override = %s" % args.url,
    ]
    if args.keystone:
        env = os.environ
        missing = [name for name in (
            "KEYSTONE_URL", "KEYSTONE_SERVICE_USER",
            "KEYSTONE_SERVICE_PASSWORD", "KEYSTONE_SERVICE_PROJECT")
            if not env.get(name)]
        if missing:
            sys.exit("nova_report_client.py: --keystone needs %s (from "
                     "scripts/keystone.sh start)" % ", ".join(missing))
        lines += [
            "auth_type = password",
            "auth_url = %s" % env["KEYSTONE_URL"],
            "username = %s" % env["KEYSTONE_SERVICE_USER"],
            "password = %s" % env["KEYSTONE_SERVICE_PASSWORD"],
            "project_name = %s" % env["KEYSTONE_SERVICE_PROJECT"],
            "user_domain_name = Default",
            "project_domain_name = Default",
            "region_name = %s" % env.get("KEYSTONE_REGION", "RegionOne"),
        ]
    else:
        lines += [
            "auth_type = admin_token",
            "endpoint = %s" % args.url,
            "token = admin",
        ]
    with open(path, "w") as conf:
        conf.write("\n".join(lines) + "\n")
    return path


class Recorder(object):
    """Runs the steps, reads the placement state after each one."""

    def __init__(self, client, ctx):
        self.client = client
        self.ctx = ctx
        self.steps = []

    def get(self, url):
        resp = self.client.get(url, version=STATE_VERSION,
                               global_request_id=self.ctx.global_id)
        body = resp.json() if resp.content else None
        # Traits and aggregates are sets: their order in a list is not part
        # of the API (upstream's follows its query plan, and the order Nova
        # sent them in, which varies with Python's hash seed).
        if isinstance(body, dict):
            for key in ("traits", "aggregates"):
                if isinstance(body.get(key), list):
                    body[key].sort()
        return {"status": resp.status_code, "body": body}

    def state(self):
        providers = self.get("/resource_providers")
        out = {"providers": providers}
        if providers["status"] != 200:
            return out
        for rp in sorted(providers["body"]["resource_providers"],
                         key=lambda rp: rp["uuid"]):
            base = "/resource_providers/%s" % rp["uuid"]
            out[rp["uuid"]] = {
                "inventories": self.get(base + "/inventories"),
                "traits": self.get(base + "/traits"),
                "aggregates": self.get(base + "/aggregates"),
                "usages": self.get(base + "/usages"),
                "allocations": self.get(base + "/allocations"),
            }
        out["providers"]["body"]["resource_providers"].sort(
            key=lambda rp: rp["uuid"])
        for consumer in CONSUMERS:
            out["consumer " + consumer] = self.get(
                "/allocations/%s" % consumer)
        out["usages"] = self.get("/usages?project_id=%s" % PROJECT)
        out["user usages"] = self.get(
            "/usages?project_id=%s&user_id=%s" % (PROJECT, USER))
        return out

    def step(self, name, action):
        try:
            result = {"returned": normalize(action())}
        except Exception as exc:  # the exception is the result to compare
            result = {"raised": type(exc).__name__}
        print("  %s: %s" % (name, json.dumps(result, sort_keys=True)[:160]),
              flush=True)
        self.steps.append({"step": name, "result": result,
                           "state": self.state()})
        return result.get("returned")


def normalize(value):
    """JSON-able, with lists of allocation requests, traits and
    aggregates in a stable order."""
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, dict):
        return {str(k): (sorted(v) if k in ("traits", "aggregates")
                         and isinstance(v, list) else normalize(v))
                for k, v in value.items()}
    if isinstance(value, list):
        items = [normalize(v) for v in value]
        if items and all(isinstance(v, dict) for v in items):
            items.sort(key=lambda v: json.dumps(v, sort_keys=True))
        return items
    if isinstance(value, (set, frozenset)):
        return sorted(normalize(v) for v in value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def tree_summary(tree):
    """What a ProviderTree holds, as placement returned it."""
    out = {}
    for uuid in tree.get_provider_uuids():
        data = tree.data(uuid)
        out[uuid] = {"name": data.name, "parent": data.parent_uuid,
                     "generation": data.generation,
                     "inventory": data.inventory,
                     "traits": sorted(data.traits),
                     "aggregates": sorted(data.aggregates)}
    return out


def flavor_request(objects, ResourceRequest, vcpus, memory_mb, root_gb,
                   extra_specs):
    flavor = objects.Flavor(
        vcpus=vcpus, memory_mb=memory_mb, root_gb=root_gb, ephemeral_gb=0,
        swap=0, extra_specs=extra_specs)
    spec = objects.RequestSpec(
        flavor=flavor, is_bfv=False,
        image=objects.ImageMeta(properties=objects.ImageMetaProps()))
    return ResourceRequest.from_request_spec(spec)


def run(args):
    workdir = args.workdir or tempfile.mkdtemp(prefix="nova-report-client.")
    conf_file = write_conf(workdir, args)

    from nova import config
    from nova import context as nova_context
    from nova import objects
    from nova.scheduler.client import report
    from nova.scheduler.utils import ResourceRequest

    config.parse_args(["nova", "--config-file", conf_file],
                      configure_db=False, init_rpc=False)
    from oslo_log import log
    log.setup(config.CONF, "nova")
    objects.register_all()
    ctx = nova_context.get_admin_context()
    client = report.SchedulerReportClient()
    rec = Recorder(client, ctx)

    inv = {
        "VCPU": {"total": 8, "reserved": 0, "min_unit": 1, "max_unit": 8,
                 "step_size": 1, "allocation_ratio": 4.0},
        "MEMORY_MB": {"total": 8192, "reserved": 512, "min_unit": 1,
                      "max_unit": 8192, "step_size": 1,
                      "allocation_ratio": 1.0},
        "DISK_GB": {"total": 100, "reserved": 0, "min_unit": 1,
                    "max_unit": 100, "step_size": 1, "allocation_ratio": 1.0},
    }
    vgpu = {"VGPU": {"total": 4, "reserved": 0, "min_unit": 1, "max_unit": 4,
                     "step_size": 1, "allocation_ratio": 1.0}}

    # The compute service: the root provider, then its tree.
    def ensure_roots():
        tree = client.get_provider_tree_and_ensure_root(
            ctx, CN1, name="compute1")
        client.get_provider_tree_and_ensure_root(ctx, CN2, name="compute2")
        return tree_summary(tree)
    rec.step("get_provider_tree_and_ensure_root", ensure_roots)

    def first_sync():
        tree = client.get_provider_tree_and_ensure_root(ctx, CN1)
        tree.update_inventory(CN1, copy.deepcopy(inv))
        tree.update_traits(CN1, ["COMPUTE_NODE", "HW_CPU_X86_AVX2",
                                 "CUSTOM_NOVA_RC_DRIVER"])
        tree.update_aggregates(CN1, [AGG1])
        tree.new_child("compute1_NUMA0", CN1, uuid=NUMA0)
        tree.new_child("compute1_NUMA1", CN1, uuid=NUMA1)
        tree.update_traits(NUMA0, ["HW_NUMA_ROOT"])
        tree.update_traits(NUMA1, ["HW_NUMA_ROOT"])
        tree.new_child("compute1_pci_0000_84_00_0", CN1, uuid=PGPU)
        tree.update_inventory(PGPU, copy.deepcopy(vgpu))
        tree.update_traits(PGPU, ["CUSTOM_VGPU_TYPE_A"])
        client.update_from_provider_tree(ctx, tree)
        tree2 = client.get_provider_tree_and_ensure_root(ctx, CN2)
        tree2.update_inventory(CN2, copy.deepcopy(inv))
        tree2.update_traits(CN2, ["COMPUTE_NODE"])
        client.update_from_provider_tree(ctx, tree2)
        return tree_summary(client.get_provider_tree_and_ensure_root(ctx, CN1))
    rec.step("update_from_provider_tree (nested tree, inventory, traits)",
             first_sync)

    def second_sync():
        # Inventory change, trait removal, a new aggregate; unchanged
        # providers must not be written.
        tree = client.get_provider_tree_and_ensure_root(ctx, CN1)
        changed = copy.deepcopy(inv)
        changed["DISK_GB"]["reserved"] = 10
        tree.update_inventory(CN1, changed)
        tree.update_traits(CN1, ["COMPUTE_NODE", "HW_CPU_X86_AVX2"])
        tree.update_aggregates(CN1, [AGG1, AGG2])
        client.update_from_provider_tree(ctx, tree)
        return tree_summary(tree)
    rec.step("update_from_provider_tree (changes)", second_sync)

    rec.step("set_aggregates_for_provider",
             lambda: client.set_aggregates_for_provider(ctx, CN2, [AGG2]))
    rec.step("set_aggregates_for_provider (stale generation 0)",
             lambda: client.set_aggregates_for_provider(
                 ctx, CN2, [AGG1, AGG2], use_cache=False, generation=0))
    rec.step("aggregate_add_host",
             lambda: client.aggregate_add_host(ctx, AGG3,
                                               host_name="compute1"))
    rec.step("aggregate_remove_host",
             lambda: client.aggregate_remove_host(ctx, AGG3, "compute1"))

    # A provider generation conflict: the inventory changes behind the
    # client's back, the client's update conflicts, it is redriven as the
    # resource tracker does (a fresh tree, the same update).
    def behind_the_back():
        resp = client.get("/resource_providers/%s/inventories" % CN1,
                          version=STATE_VERSION)
        body = resp.json()
        body["inventories"]["DISK_GB"]["reserved"] = 20
        resp = client.put("/resource_providers/%s/inventories" % CN1, body,
                          version=STATE_VERSION)
        return resp.status_code
    rec.step("inventory changed behind the client", behind_the_back)

    def stale_update():
        tree = client.get_provider_tree_and_ensure_root(ctx, CN1)
        changed = copy.deepcopy(inv)
        changed["DISK_GB"]["reserved"] = 5
        tree.update_inventory(CN1, changed)
        client.update_from_provider_tree(ctx, tree)
    # The client's cache still has the old generation: the update conflicts.
    rec.step("update_from_provider_tree (stale generation)", stale_update)
    rec.step("update_from_provider_tree (redriven)", stale_update)

    # The scheduler: candidates for a flavor with a granular VGPU group.
    def candidates(extra_specs, vcpus=2, memory_mb=1024, root_gb=10):
        def call():
            req = flavor_request(objects, ResourceRequest, vcpus, memory_mb,
                                 root_gb, extra_specs)
            return {"query": req.to_querystring(),
                    "candidates": client.get_allocation_candidates(ctx, req)}
        return call
    vgpu_flavor = {"resources1:VGPU": "1",
                   "trait1:CUSTOM_VGPU_TYPE_A": "required",
                   "group_policy": "isolate"}
    found = rec.step("get_allocation_candidates (VGPU group)",
                     candidates(vgpu_flavor))
    reqs = found["candidates"][0] if found else []
    version = found["candidates"][2] if found else "1.36"
    on_cn1 = [r for r in reqs if CN1 in r["allocations"]]
    claim1 = on_cn1[0] if on_cn1 else {"allocations": {}}

    rec.step("claim_resources (new instance)",
             lambda: client.claim_resources(ctx, INST1, claim1, PROJECT,
                                            USER, version,
                                            consumer_generation=None))
    rec.step("claim_resources (new consumer, stale generation 5)",
             lambda: client.claim_resources(ctx, INST2, claim1, PROJECT,
                                            USER, version,
                                            consumer_generation=5))
    stale = dict(copy.deepcopy(claim1), consumer_generation=7)
    rec.step("claim_resources (existing consumer, stale generation 7)",
             lambda: client.claim_resources(ctx, INST1, stale, PROJECT,
                                            USER, version))
    rec.step("get_allocs_for_consumer",
             lambda: client.get_allocs_for_consumer(ctx, INST1))

    # Cold migration: the source allocation moves to the migration, the
    # instance claims on the destination; revert moves it back.
    rec.step("move_allocations (instance -> migration)",
             lambda: client.move_allocations(ctx, INST1, MIG1))
    plain = rec.step("get_allocation_candidates (plain flavor)",
                     candidates({}))
    dest = [r for r in (plain["candidates"][0] if plain else [])
            if CN2 in r["allocations"]]
    dest_claim = dest[0] if dest else {"allocations": {}}
    rec.step("claim_resources (destination)",
             lambda: client.claim_resources(ctx, INST1, dest_claim, PROJECT,
                                            USER, version,
                                            consumer_generation=None))
    rec.step("delete_allocation_for_instance (destination, revert)",
             lambda: client.delete_allocation_for_instance(ctx, INST1))
    rec.step("move_allocations (migration -> instance)",
             lambda: client.move_allocations(ctx, MIG1, INST1))
    rec.step("move_allocations (again: already moved)",
             lambda: client.move_allocations(ctx, MIG1, INST1))

    # Reshape: VCPU and MEMORY_MB move from the root to the NUMA nodes,
    # with the instance's allocation.
    def reshape():
        tree = client.get_provider_tree_and_ensure_root(ctx, CN1)
        allocs = client.get_allocations_for_provider_tree(ctx, "compute1")
        root_inv = copy.deepcopy(tree.data(CN1).inventory)
        half = {}
        for rc in ("VCPU", "MEMORY_MB"):
            record = root_inv.pop(rc)
            record = dict(record, total=record["total"] // 2,
                          max_unit=record["total"] // 2)
            half[rc] = record
        tree.update_inventory(CN1, root_inv)
        tree.update_inventory(NUMA0, copy.deepcopy(half))
        tree.update_inventory(NUMA1, copy.deepcopy(half))
        for consumer in allocs.values():
            on_root = consumer["allocations"].get(CN1)
            if not on_root:
                continue
            moved = {rc: on_root["resources"].pop(rc)
                     for rc in ("VCPU", "MEMORY_MB")
                     if rc in on_root["resources"]}
            consumer["allocations"][NUMA0] = {"resources": moved}
        client.update_from_provider_tree(ctx, tree, allocations=allocs)
        return allocs
    # The claims above changed the root's generation, not the client's
    # cache: the first reshape conflicts, the cache is cleared and the
    # reshape is redriven from fresh data, as the resource tracker does.
    rec.step("update_from_provider_tree (reshape, stale cache)", reshape)
    rec.step("update_from_provider_tree (reshape redriven)", reshape)

    numa_flavor = {"resources:VCPU": "0", "resources:MEMORY_MB": "0",
                   "resources1:VCPU": "1", "resources1:MEMORY_MB": "512",
                   "resources2:VCPU": "1", "resources2:MEMORY_MB": "512",
                   "trait1:HW_NUMA_ROOT": "required",
                   "trait2:HW_NUMA_ROOT": "required",
                   "group_policy": "isolate"}
    numa = rec.step("get_allocation_candidates (two NUMA groups)",
                    candidates(numa_flavor))
    numa_reqs = numa["candidates"][0] if numa else []
    numa_claim = numa_reqs[0] if numa_reqs else {"allocations": {}}
    rec.step("claim_resources (two NUMA groups)",
             lambda: client.claim_resources(ctx, INST2, numa_claim, PROJECT,
                                            USER, version,
                                            consumer_generation=None))
    rec.step("get_usages_counts_for_quota",
             lambda: client.get_usages_counts_for_quota(ctx, PROJECT, USER))

    rec.step("delete_allocation_for_instance",
             lambda: client.delete_allocation_for_instance(ctx, INST1))
    rec.step("delete_allocation_for_instance (again)",
             lambda: client.delete_allocation_for_instance(ctx, INST1))
    rec.step("delete_allocation_for_instance (force)",
             lambda: client.delete_allocation_for_instance(
                 ctx, INST2, force=True))

    def drop_gpu():
        tree = client.get_provider_tree_and_ensure_root(ctx, CN1)
        tree.remove(PGPU)
        client.update_from_provider_tree(ctx, tree)
        return tree_summary(tree)
    rec.step("update_from_provider_tree (child removed)", drop_gpu)

    with open(args.out, "w") as out:
        json.dump(rec.steps, out, indent=1, sort_keys=True)
    print("nova_report_client.py: %d steps against %s" % (len(rec.steps),
                                                          args.url))
    return 0


def first_difference(one, two, path="step"):
    """The path of the first value that differs between one and two."""
    if isinstance(one, dict) and isinstance(two, dict):
        for key in sorted(set(one) | set(two)):
            if one.get(key, KeyError) != two.get(key, KeyError):
                return first_difference(one.get(key), two.get(key),
                                        "%s[%r]" % (path, key))
    elif (isinstance(one, list) and isinstance(two, list)
          and len(one) == len(two)):
        for index, (left, right) in enumerate(zip(one, two)):
            if left != right:
                return first_difference(left, right,
                                        "%s[%d]" % (path, index))
    return "%s (%s vs %s)" % (path, json.dumps(one)[:200],
                              json.dumps(two)[:200])


def compare(args):
    with open(args.a) as a, open(args.b) as b:
        left, right = json.load(a), json.load(b)
    for index in range(max(len(left), len(right))):
        one = left[index] if index < len(left) else None
        two = right[index] if index < len(right) else None
        if one == two:
            continue
        name = (one or two)["step"]
        print("step %d (%s) differs at %s:" % (index + 1, name,
                                              first_difference(one, two)))
        diff = difflib.unified_diff(
            json.dumps(one, indent=1, sort_keys=True).splitlines(),
            json.dumps(two, indent=1, sort_keys=True).splitlines(),
            args.a, args.b, lineterm="", n=4)
        for line in list(diff)[:200]:
            print("  " + line)
        return 1
    print("same: %d steps" % len(left))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("run")
    one.add_argument("--url", required=True)
    one.add_argument("--out", required=True)
    one.add_argument("--workdir")
    one.add_argument("--keystone", action="store_true")
    two = sub.add_parser("compare")
    two.add_argument("a")
    two.add_argument("b")
    args = parser.parse_args()
    return run(args) if args.command == "run" else compare(args)


if __name__ == "__main__":
    sys.exit(main())
