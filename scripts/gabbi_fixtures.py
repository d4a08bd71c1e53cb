"""Builds the data of upstream Placement's gabbi fixtures through the API.

Upstream's gabbi files name a fixture (placement/tests/functional/fixtures/
gabbits.py) that writes providers, inventories, traits, aggregates and
allocations straight through its object layer before the file runs, and
passes their identifiers in environment variables. This script makes the
same data through the HTTP API of a running placement-api (noauth2, admin
token) and writes the variables the fixture sets, one NAME=VALUE per line.

    python gabbi_fixtures.py data FIXTURE URL OUTPUT
    python gabbi_fixtures.py policy POLICY_DEFAULTS_JSON OUTPUT

"data" reads the variables every fixture shares (RP_UUID, RP_NAME,
PROJECT_ID, USER_ID, ...; scripts/gabbi.sh exports them) from the
environment. "policy" writes the policy file of OpenPolicyFixture: every
rule but admin_api opened to anyone ("@").

Generations come out as upstream's: the object layer bumps a provider's
generation once per inventory added, traits set and allocations written, as
these API calls do; it does not bump it when aggregates are set, and neither
does PUT /resource_providers/{uuid}/aggregates before microversion 1.19,
which is what is used here. A consumer ends at generation 1 either way.
Allocations are written at 1.28, so consumers have no consumer type, as the
fixture's do.
"""

import json
import os
import sys
import urllib.error
import urllib.request
import uuid as uuidlib


def fresh():
    return str(uuidlib.uuid4())


class Api:
    def __init__(self, url):
        self.url = url.rstrip("/")

    def call(self, method, path, body=None, version="1.28", ok=(200, 201, 204)):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("x-auth-token", "admin")
        req.add_header("openstack-api-version", "placement " + version)
        req.add_header("accept", "application/json")
        if data is not None:
            req.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(req) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as e:
            status, raw = e.code, e.read()
        if status not in ok:
            raise SystemExit(
                "gabbi_fixtures: %s %s answered %d: %s"
                % (method, path, status, raw.decode(errors="replace")))
        return json.loads(raw) if raw else None


class Provider:
    def __init__(self, api, name, uuid, generation):
        self.api, self.name, self.uuid, self.generation = api, name, uuid, generation


class Builder:
    """The helpers of upstream's tests/functional/db/test_base.py, by API."""

    def __init__(self, api):
        self.api = api
        self.env = {}
        self.classes = set()
        self.traits = set()
        self.names = {}

    def sentinel(self, name):
        # oslo's uuidsentinel: one fresh uuid per name, the same each time.
        if name not in self.names:
            self.names[name] = fresh()
        return self.names[name]

    def create_provider(self, name, *aggs, parent=None, uuid=None):
        body = {"name": name, "uuid": uuid or self.sentinel(name)}
        if parent:
            body["parent_provider_uuid"] = parent.uuid
        rp = self.api.call("POST", "/resource_providers", body, version="1.20")
        p = Provider(self.api, name, rp["uuid"], rp["generation"])
        if aggs:
            self.set_aggregates(p, *aggs)
        return p

    def set_aggregates(self, rp, *aggs):
        # Before 1.19 the body is the list and the generation stays.
        self.api.call("PUT", "/resource_providers/%s/aggregates" % rp.uuid,
                      list(aggs), version="1.1")

    def ensure_rc(self, rc):
        if rc.startswith("CUSTOM_") and rc not in self.classes:
            self.api.call("PUT", "/resource_classes/" + rc, version="1.7")
            self.classes.add(rc)

    def add_inventory(self, rp, rc, total, **kwargs):
        self.ensure_rc(rc)
        kwargs.setdefault("max_unit", total)
        body = dict(kwargs, resource_class=rc, total=total,
                    resource_provider_generation=rp.generation)
        self.api.call("POST", "/resource_providers/%s/inventories" % rp.uuid, body)
        rp.generation += 1

    def set_traits(self, rp, *traits):
        for t in traits:
            if t.startswith("CUSTOM_") and t not in self.traits:
                self.api.call("PUT", "/traits/" + t, version="1.6")
                self.traits.add(t)
        body = {"traits": list(traits), "resource_provider_generation": rp.generation}
        self.api.call("PUT", "/resource_providers/%s/traits" % rp.uuid, body, version="1.6")
        rp.generation += 1

    def set_allocation(self, rp, consumer, used, user, project):
        body = {
            "allocations": {rp.uuid: {"resources": used}},
            "project_id": project,
            "user_id": user,
            "consumer_generation": None,
        }
        self.api.call("PUT", "/allocations/" + consumer, body)
        rp.generation += 1


def allocation(b):
    env = b.env
    env["ALT_USER_ID"] = fresh()
    project, user, alt_user = os.environ["PROJECT_ID"], os.environ["USER_ID"], env["ALT_USER_ID"]
    rp = b.create_provider(os.environ["RP_NAME"], uuid=os.environ["RP_UUID"])
    b.add_inventory(rp, "DISK_GB", 2048, step_size=10, min_unit=10, max_unit=1000)
    b.add_inventory(rp, "VCPU", 10, max_unit=10)
    env["CONSUMER_0"] = fresh()
    b.set_allocation(rp, env["CONSUMER_0"], {"DISK_GB": 1000}, user, project)
    env["CONSUMER_ID"] = fresh()
    b.set_allocation(rp, env["CONSUMER_ID"], {"VCPU": 6}, user, project)
    env["ALT_CONSUMER_ID"] = fresh()
    b.set_allocation(rp, env["ALT_CONSUMER_ID"], {"DISK_GB": 20, "VCPU": 1}, alt_user, project)
    env["ALT_RP_UUID"] = fresh()
    env["ALT_RP_NAME"] = fresh()


def shared_storage(b):
    env = b.env
    agg = env["AGG_UUID"] = fresh()
    cn1 = b.create_provider("cn1", agg)
    cn2 = b.create_provider("cn2", agg)
    ss = b.create_provider("ss", agg)
    ss2 = b.create_provider("ss2", agg)
    numa = {}
    for c, cn in ((1, cn1), (2, cn2)):
        for n in (1, 2):
            numa[c, n] = b.create_provider("numa%d_%d" % (c, n), parent=cn)
    pf = {}
    for (c, n), parent in sorted(numa.items()):
        pf[c, n] = b.create_provider("pf%d_%d" % (c, n), parent=parent)
    for key, rp in (("CN1", cn1), ("CN2", cn2), ("SS", ss), ("SS2", ss2)):
        env[key + "_UUID"] = rp.uuid
    for (c, n) in sorted(numa):
        env["NUMA%d_%d_UUID" % (c, n)] = numa[c, n].uuid
        env["PF%d_%d_UUID" % (c, n)] = pf[c, n].uuid
    for cn in (cn1, cn2):
        b.add_inventory(cn, "VCPU", 24, allocation_ratio=16.0)
        b.add_inventory(cn, "MEMORY_MB", 128 * 1024, allocation_ratio=1.5)
    b.set_traits(cn1, "HW_CPU_X86_SSE", "HW_CPU_X86_SSE2")
    b.add_inventory(cn2, "DISK_GB", 2000, reserved=100, allocation_ratio=1.0)
    for shared in (ss, ss2):
        b.add_inventory(shared, "DISK_GB", 2000, reserved=100, allocation_ratio=1.0)
        b.set_traits(shared, "MISC_SHARES_VIA_AGGREGATE")
    for key in sorted(pf):
        b.add_inventory(pf[key], "SRIOV_NET_VF", 8, allocation_ratio=1.0)


def numa_aggregate(b):
    env = b.env
    a, bb, c = (env["AGGA_UUID"], env["AGGB_UUID"], env["AGGC_UUID"]) = (fresh(), fresh(), fresh())
    cn1 = b.create_provider("cn1", a)
    cn2 = b.create_provider("cn2", a, bb)
    ss1 = b.create_provider("ss1", a)
    ss2 = b.create_provider("ss2", c)
    numa1_1 = b.create_provider("numa1_1", c, parent=cn1)
    numa1_2 = b.create_provider("numa1_2", parent=cn1)
    numa2_1 = b.create_provider("numa2_1", parent=cn2)
    numa2_2 = b.create_provider("numa2_2", parent=cn2)
    for key, rp in (("CN1", cn1), ("CN2", cn2), ("SS1", ss1), ("SS2", ss2),
                    ("NUMA1_1", numa1_1), ("NUMA1_2", numa1_2),
                    ("NUMA2_1", numa2_1), ("NUMA2_2", numa2_2)):
        env[key + "_UUID"] = rp.uuid
    for numa in (numa1_1, numa1_2, numa2_1, numa2_2):
        b.add_inventory(numa, "VCPU", 24, allocation_ratio=16.0)
    for ss in (ss1, ss2):
        b.add_inventory(ss, "DISK_GB", 2000, reserved=100, allocation_ratio=1.0)
        b.set_traits(ss, "MISC_SHARES_VIA_AGGREGATE")


def numa_network(b, cn1=None, cn2=None):
    env = b.env
    agg = env["AGGA_UUID"] = fresh()
    ss1 = b.create_provider("ss1", agg)
    b.set_traits(ss1, "MISC_SHARES_VIA_AGGREGATE")
    b.add_inventory(ss1, "DISK_GB", 2000)
    env["SS1_UUID"] = ss1.uuid

    if cn1 is None:
        cn1 = b.create_provider("cn1", agg)
    b.set_aggregates(cn1, agg)
    b.set_traits(cn1, "COMPUTE_VOLUME_MULTI_ATTACH")
    env["CN1_UUID"] = cn1.uuid

    numas = []
    for i in (0, 1):
        numa = b.create_provider("numa%d" % i, parent=cn1)
        traits = ["HW_NUMA_ROOT"] + (["CUSTOM_FOO"] if i == 1 else [])
        b.set_traits(numa, *traits)
        b.add_inventory(numa, "VCPU", 4)
        numas.append(numa)
        env["NUMA%d_UUID" % i] = numa.uuid
    b.add_inventory(numas[0], "MEMORY_MB", 2048, min_unit=512, step_size=256)
    b.add_inventory(numas[1], "MEMORY_MB", 2048, min_unit=256, max_unit=1024)
    user, project = "numafx-user", "numafx-project"
    b.set_allocation(numas[0], fresh(), {"VCPU": 2}, user, project)

    fpga = b.create_provider("fpga0", parent=numas[0])
    b.add_inventory(fpga, "FPGA", 1)
    env["FPGA0_UUID"] = fpga.uuid
    pgpu = b.create_provider("pgpu0", parent=numas[0])
    b.add_inventory(pgpu, "VGPU", 8)
    env["PGPU0_UUID"] = pgpu.uuid
    for i in (0, 1):
        fpga = b.create_provider("fpga1_%d" % i, parent=numas[1])
        b.add_inventory(fpga, "FPGA", 1)
        env["FPGA1_%d_UUID" % i] = fpga.uuid

    agent = b.create_provider("sriov_agent", parent=cn1)
    b.set_traits(agent, "CUSTOM_VNIC_TYPE_DIRECT")
    env["SRIOV_AGENT_UUID"] = agent.uuid
    for i in (1, 2):
        dev = b.create_provider("esn%d" % i, parent=agent)
        b.set_traits(dev, "CUSTOM_PHYSNET%d" % i)
        b.add_inventory(dev, "NET_BW_EGR_KILOBIT_PER_SEC", 10000 * i)
        env["ESN%d_UUID" % i] = dev.uuid
    agent = b.create_provider("ovs_agent", parent=cn1)
    b.set_traits(agent, "CUSTOM_VNIC_TYPE_NORMAL")
    env["OVS_AGENT_UUID"] = agent.uuid
    dev = b.create_provider("br_int", parent=agent)
    b.set_traits(dev, "CUSTOM_PHYSNET0")
    b.add_inventory(dev, "NET_BW_EGR_KILOBIT_PER_SEC", 1000)
    env["BR_INT_UUID"] = dev.uuid

    if cn2 is None:
        cn2 = b.create_provider("cn2")
    b.set_aggregates(cn2, agg)
    b.add_inventory(cn2, "VCPU", 8)
    b.set_allocation(cn2, fresh(), {"VCPU": 3}, user, project)
    b.add_inventory(cn2, "MEMORY_MB", 2048, min_unit=1024, step_size=128)
    b.add_inventory(cn2, "DISK_GB", 1000)
    b.set_traits(cn2, "CUSTOM_FOO")
    env["CN2_UUID"] = cn2.uuid

    nics = []
    for i in (1, 2, 3):
        nic = b.create_provider("nic%d" % i, parent=cn2)
        b.set_traits(nic, "CUSTOM_HW_NIC_ROOT")
        nics.append(nic)
        env["NIC%d_UUID" % i] = nic.uuid
    for i in (1, 2):
        pf = b.create_provider("pf1_%d" % i, parent=nics[0])
        b.set_traits(pf, "CUSTOM_PHYSNET%d" % i)
        b.add_inventory(pf, "CUSTOM_VF", 4)
        env["PF1_%d_UUID" % i] = pf.uuid
    for i in (0, 1, 2, 3):
        pf = b.create_provider("pf2_%d" % (i + 1), parent=nics[1])
        b.set_traits(pf, "CUSTOM_PHYSNET%d" % ((i % 2) + 1))
        b.add_inventory(pf, "CUSTOM_VF", 2)
        env["PF2_%d_UUID" % (i + 1)] = pf.uuid
    pf = b.create_provider("pf3_1", parent=nics[2])
    b.set_traits(pf, "CUSTOM_PHYSNET1")
    b.add_inventory(pf, "CUSTOM_VF", 8)
    env["PF3_1_UUID"] = pf.uuid


def deep_numa_network(b):
    gp1 = b.create_provider("gp1")
    p1 = b.create_provider("p1", parent=gp1)
    p2 = b.create_provider("p2", parent=gp1)
    cn1 = b.create_provider("cn1", parent=p1)
    cn2 = b.create_provider("cn2", parent=p2)
    numa_network(b, cn1, cn2)


def non_shared_storage(b):
    env = b.env
    for k in ("AGGA_UUID", "AGGB_UUID", "AGGC_UUID"):
        env[k] = fresh()
    cns = [b.create_provider("cn%d" % i) for i in (1, 2, 3)]
    for i, cn in enumerate(cns, 1):
        env["CN%d_UUID" % i] = cn.uuid
    for cn in cns:
        b.add_inventory(cn, "VCPU", 24)
        b.add_inventory(cn, "MEMORY_MB", 128 * 1024)
        b.add_inventory(cn, "DISK_GB", 2000)


def granular(b):
    env = b.env
    b.ensure_rc("CUSTOM_NET_MBPS")
    agg_a, agg_b, agg_c = (b.sentinel("aggA"), b.sentinel("aggB"), b.sentinel("aggC"))
    env["AGGA"], env["AGGB"], env["AGGC"] = agg_a, agg_b, agg_c

    left = b.create_provider("cn_left", agg_a)
    env["CN_LEFT"] = left.uuid
    for rc, total in (("VCPU", 8), ("MEMORY_MB", 4096), ("DISK_GB", 500),
                      ("VGPU", 8), ("SRIOV_NET_VF", 8), ("CUSTOM_NET_MBPS", 4000)):
        b.add_inventory(left, rc, total)
    b.set_traits(left, "HW_CPU_X86_AVX", "HW_CPU_X86_AVX2", "HW_GPU_API_DXVA",
                 "HW_NIC_DCB_PFC", "CUSTOM_FOO")

    middle = b.create_provider("cn_middle", agg_a, agg_b)
    env["CN_MIDDLE"] = middle.uuid
    for rc, total in (("VCPU", 8), ("MEMORY_MB", 4096), ("SRIOV_NET_VF", 8),
                      ("CUSTOM_NET_MBPS", 4000)):
        b.add_inventory(middle, rc, total)
    b.set_traits(middle, "HW_CPU_X86_AVX", "HW_CPU_X86_AVX2", "HW_CPU_X86_SSE",
                 "HW_NIC_ACCEL_TLS")

    right = b.create_provider("cn_right", agg_b, agg_c)
    env["CN_RIGHT"] = right.uuid
    b.add_inventory(right, "VCPU", 8)
    b.add_inventory(right, "MEMORY_MB", 4096)
    b.add_inventory(right, "DISK_GB", 500)
    b.add_inventory(right, "VGPU", 8, max_unit=2)
    b.set_traits(right, "HW_CPU_X86_MMX", "HW_GPU_API_DXVA", "CUSTOM_DISK_SSD")

    disk1 = b.create_provider("shr_disk_1", agg_a)
    env["SHR_DISK_1"] = disk1.uuid
    b.add_inventory(disk1, "DISK_GB", 1000)
    b.set_traits(disk1, "MISC_SHARES_VIA_AGGREGATE", "CUSTOM_DISK_SSD")

    disk2 = b.create_provider("shr_disk_2", agg_a, agg_b)
    env["SHR_DISK_2"] = disk2.uuid
    b.add_inventory(disk2, "DISK_GB", 1000)
    b.set_traits(disk2, "MISC_SHARES_VIA_AGGREGATE")

    net = b.create_provider("shr_net", agg_c)
    env["SHR_NET"] = net.uuid
    b.add_inventory(net, "SRIOV_NET_VF", 16)
    b.add_inventory(net, "CUSTOM_NET_MBPS", 40000)
    b.set_traits(net, "MISC_SHARES_VIA_AGGREGATE")


VNIC_SRIOV = ("CUSTOM_VNIC_TYPE_DIRECT", "CUSTOM_VNIC_TYPE_DIRECT_PHYSICAL",
              "CUSTOM_VNIC_TYPE_MACVTAP")


def neutron_qos_multi_segment(b):
    env = b.env
    # compute: (bandwidth, [(bridge, physnet)], [(pf, physnet)])
    layout = [
        ("compute0", 5000, 10000, [("br-ex", "br_ex", "OTHER")], [("enp129s0f0", "pf0", "OTHER")]),
        ("compute1", 5000, 10000, [("br-ex", "br_ex", "MSN_S1")], [("enp129s0f0", "pf0", "MSN_S1")]),
        ("compute2", 5000, 10000, [("br-ex", "br_ex", "MSN_S2")], [("enp129s0f0", "pf0", "MSN_S2")]),
        ("compute3", 1000, 1000,
         [("br-ex", "br_ex", "MSN_S1"), ("br-ex2", "br_ex2", "MSN_S2")],
         [("enp129s0f0", "pf0", "MSN_S1"), ("enp129s0f1", "pf1", "MSN_S2")]),
    ]
    sriov_agents = {}
    for cname, br_bw, pf_bw, bridges, pfs in layout:
        cn = b.create_provider(cname)
        env[cname] = cn.uuid
        b.add_inventory(cn, "VCPU", 8)
        b.add_inventory(cn, "MEMORY_MB", 4096)
        b.add_inventory(cn, "DISK_GB", 500)

        ovs = b.create_provider(cname + ":Open vSwitch agent", parent=cn)
        env[cname + ":ovs_agent"] = ovs.uuid
        b.add_inventory(ovs, "NET_PACKET_RATE_KILOPACKET_PER_SEC", 1000)
        b.set_traits(ovs, "CUSTOM_VNIC_TYPE_NORMAL")
        for dev, key, physnet in bridges:
            br = b.create_provider(cname + ":Open vSwitch agent:" + dev, parent=ovs)
            env[cname + ":" + key] = br.uuid
            b.add_inventory(br, "NET_BW_EGR_KILOBIT_PER_SEC", br_bw)
            b.add_inventory(br, "NET_BW_IGR_KILOBIT_PER_SEC", br_bw)
            b.set_traits(br, "CUSTOM_VNIC_TYPE_NORMAL", "CUSTOM_PHYSNET_" + physnet)

        sriov = b.create_provider(cname + ":NIC Switch agent", parent=cn)
        sriov_agents[cname] = sriov
        # Upstream sets compute3's variable to compute2's agent: kept.
        env[cname + ":sriov_agent"] = (
            sriov_agents["compute2"] if cname == "compute3" else sriov).uuid
        b.set_traits(sriov, *VNIC_SRIOV)
        for dev, key, physnet in pfs:
            pf = b.create_provider(cname + ":NIC Switch agent:" + dev, parent=sriov)
            env[cname + ":" + key] = pf.uuid
            b.add_inventory(pf, "NET_BW_EGR_KILOBIT_PER_SEC", pf_bw)
            b.add_inventory(pf, "NET_BW_IGR_KILOBIT_PER_SEC", pf_bw)
            b.set_traits(pf, *VNIC_SRIOV, "CUSTOM_PHYSNET_" + physnet)


FIXTURES = {
    "AllocationFixture": allocation,
    "SharedStorageFixture": shared_storage,
    "NUMAAggregateFixture": numa_aggregate,
    "NUMANetworkFixture": numa_network,
    "DeepNUMANetworkFixture": deep_numa_network,
    "NonSharedStorageFixture": non_shared_storage,
    "GranularFixture": granular,
    "NeutronQoSMultiSegmentFixture": neutron_qos_multi_segment,
}


def write_env(env, path):
    with open(path, "w") as f:
        for k, v in env.items():
            f.write("%s=%s\n" % (k, v))


def write_policy(defaults_path, path):
    with open(defaults_path) as f:
        rules = json.load(f)
    with open(path, "w") as f:
        f.write("# OpenPolicyFixture: every rule but admin_api allows anyone.\n")
        for rule in rules:
            if rule["name"] != "admin_api":
                f.write('"%s": "@"\n' % rule["name"])


def main(argv):
    if len(argv) == 5 and argv[1] == "data" and argv[2] in FIXTURES:
        b = Builder(Api(argv[3]))
        FIXTURES[argv[2]](b)
        write_env(b.env, argv[4])
        return 0
    if len(argv) == 4 and argv[1] == "policy":
        write_policy(argv[2], argv[3])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
