"""Helpers of scripts/nova-services.sh: Nova's services end to end.

    python nova_services.py service nova-compute|nova-conductor|nova-scheduler|nova-manage ARGS...
    python nova_services.py api --config-dir DIR --port PORT
    python nova_services.py neutron --port PORT --log FILE
    python nova_services.py wait-provider --placement URL --name HOST
    python nova_services.py run --nova URL --placement URL --image ID --out FILE

`service` runs a Nova service (its console script's main, with ARGS)
and `api` Nova's API with SQLite transactions begun IMMEDIATE: Nova's
processes share the SQLite files, and a deferred transaction that reads
and then writes fails at once with "database is locked" (SQLite does not
wait when a reader's snapshot would have to become a writer's), which
failed resizes here. Taking the write lock at the start makes each
transaction wait its turn (the URLs' timeout=60) instead. Nothing else
of Nova changes; on MySQL or PostgreSQL this is not needed.

`api` serves Nova's compute API (nova.wsgi.osapi_compute, with the
api-paste.ini and nova.conf of DIR) on 127.0.0.1:PORT from a threaded
wsgiref server: Nova 34 ships its API as a WSGI application only, and
its pinned packages (scripts/requirements/nova.txt) hold no WSGI server.

`neutron` stands in for Neutron, which this machine cannot host (it needs
its agents, Open vSwitch or OVN, and network namespaces). Servers booted
with `networks: none` have no ports, so the answers Nova gets are the
ones a real Neutron gives for an instance without ports: an empty list of
ports, networks, floating IPs and security groups, no extensions. Every
request is written to the log (method and path), so the run shows which
Neutron calls Nova made; anything else is answered 404 and logged as such.

`wait-provider` waits (90 s at most) until placement has the compute
node's resource provider with a VCPU inventory.

`run` drives Nova's API as an operator does: boots servers (m1.small,
`networks: none`) until the first host is full and the next one lands on
the other host, resizes one (m1.medium) and confirms, cold migrates one
and confirms, deletes all. After every step it records what Nova did
(each server's status, host and flavor; the migrations) and placement's
state (each provider's inventories, traits, aggregates and usages; every
consumer's allocations), with UUIDs replaced by names (providers by their
host, instances by server name, migrations by their server and type), to
FILE (JSON), in the format `nova_report_client.py compare` reads.

The Keystone of scripts/keystone.sh gives the tokens: the admin user
(KEYSTONE_ADMIN_*) drives Nova and reads placement.
"""

import argparse
import json
import os
import socketserver
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import requests

STEP_TIMEOUT = 120
PLACEMENT_VERSION = "placement 1.39"
COMPUTE_VERSION = "2.96"


# --- api --------------------------------------------------------------------

class ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class QuietHandler(WSGIRequestHandler):
    def log_message(self, fmt, *args):
        sys.stderr.write("%s\n" % (fmt % args))


def sqlite_immediate():
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    # oslo.db turns pysqlite's own BEGIN off and sends a plain (deferred)
    # BEGIN at the start of each transaction; this makes it IMMEDIATE.
    @event.listens_for(Engine, "before_cursor_execute", retval=True)
    def _immediate(conn, cursor, statement, params, context, executemany):
        if conn.dialect.name == "sqlite" and statement == "BEGIN":
            statement = "BEGIN IMMEDIATE"
        return statement, params


SERVICES = {"nova-manage": "nova.cmd.manage",
            "nova-compute": "nova.cmd.compute",
            "nova-conductor": "nova.cmd.conductor",
            "nova-scheduler": "nova.cmd.scheduler"}


def service(args):
    import importlib
    sqlite_immediate()
    sys.argv = [args.name] + args.rest
    return importlib.import_module(SERVICES[args.name]).main()


def api(args):
    sqlite_immediate()
    os.environ["OS_NOVA_CONFIG_DIR"] = args.config_dir
    # Nova's WSGI entry point reads sys.argv with oslo.config.
    sys.argv = ["nova-api-os-compute"]
    from nova.wsgi.osapi_compute import application
    server = make_server("127.0.0.1", args.port, application,
                         server_class=ThreadingWSGIServer,
                         handler_class=QuietHandler)
    server.serve_forever()


# --- neutron ----------------------------------------------------------------

EMPTY_LISTS = ("ports", "networks", "floatingips", "security-groups",
               "subnets", "extensions", "qos/policies")


def neutron(args):
    log = open(args.log, "a", buffering=1)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def answer(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            path = urllib.parse.urlsplit(self.path).path.rstrip("/")
            name = path[len("/v2.0/"):] if path.startswith("/v2.0/") else None
            if name and name.endswith(".json"):
                name = name[:-len(".json")]
            if self.command == "GET" and name in EMPTY_LISTS:
                status = 200
                body = {name.split("/")[-1].replace("-", "_"): []}
            elif self.command == "GET" and path in ("", "/v2.0"):
                status, body = 200, {"resources": []}
            else:
                status = 404
                body = {"NeutronError": {
                    "type": "HTTPNotFound", "detail": "",
                    "message": "the stand-in Neutron of nova_services.py "
                               "answers only empty lists"}}
            with lock:
                log.write("%s %s -> %d\n" % (self.command, self.path, status))
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = answer

        def log_message(self, fmt, *args):
            pass

    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


# --- keystone ---------------------------------------------------------------

def admin_token():
    env = os.environ
    body = {"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": env["KEYSTONE_ADMIN_USER"], "domain": {"id": "default"},
            "password": env["KEYSTONE_ADMIN_PASSWORD"]}}},
        "scope": {"project": {"name": env["KEYSTONE_ADMIN_PROJECT"],
                              "domain": {"id": "default"}}}}}
    resp = requests.post(env["KEYSTONE_URL"] + "/auth/tokens", json=body,
                         timeout=30)
    if resp.status_code != 201:
        sys.exit("nova_services.py: no admin token: %d %s"
                 % (resp.status_code, resp.text))
    return resp.headers["X-Subject-Token"]


class Session(object):
    """requests against one service with the admin token and a version."""

    def __init__(self, url, header, version, token):
        self.url = url.rstrip("/")
        self.http = requests.Session()
        self.http.headers.update({"X-Auth-Token": token, header: version,
                                  "Accept": "application/json"})

    def call(self, method, path, body=None, ok=(200, 201, 202, 204)):
        resp = self.http.request(method, self.url + path, json=body,
                                 timeout=60)
        if resp.status_code not in ok:
            raise SystemExit("nova_services.py: %s %s answered %d: %s"
                             % (method, path, resp.status_code, resp.text))
        return resp.json() if resp.content else None


def wait_provider(args):
    place = Session(args.placement, "OpenStack-API-Version",
                    PLACEMENT_VERSION, admin_token())
    deadline = time.time() + 90
    while time.time() < deadline:
        found = place.call("GET", "/resource_providers?name=%s"
                           % args.name)["resource_providers"]
        if found:
            inv = place.call("GET", "/resource_providers/%s/inventories"
                             % found[0]["uuid"])["inventories"]
            if "VCPU" in inv:
                return 0
        time.sleep(0.5)
    print("nova_services.py: no provider %s with VCPU inventory in "
          "placement after 90 s" % args.name)
    return 1


# --- run --------------------------------------------------------------------

class Driver(object):
    def __init__(self, args):
        token = admin_token()
        self.nova = Session(args.nova, "OpenStack-API-Version",
                            "compute " + COMPUTE_VERSION, token)
        self.place = Session(args.placement, "OpenStack-API-Version",
                             PLACEMENT_VERSION, token)
        self.image = args.image
        self.servers = {}   # name -> uuid
        self.flavors = {}   # name -> id
        self.steps = []

    # Nova's side.
    def flavor(self, name, vcpus, ram, disk):
        body = {"flavor": {"name": name, "vcpus": vcpus, "ram": ram,
                           "disk": disk}}
        self.flavors[name] = self.nova.call("POST", "/flavors",
                                            body)["flavor"]["id"]

    def server(self, name):
        return self.nova.call("GET", "/servers/%s" % self.servers[name])[
            "server"]

    def wait(self, name, status, gone=False):
        deadline = time.time() + STEP_TIMEOUT
        while time.time() < deadline:
            if gone:
                resp = self.nova.http.get(
                    self.nova.url + "/servers/%s" % self.servers[name],
                    timeout=60)
                if resp.status_code == 404:
                    return
            else:
                srv = self.server(name)
                if srv["status"] == status and not srv.get(
                        "OS-EXT-STS:task_state"):
                    return
                if srv["status"] == "ERROR":
                    raise SystemExit("nova_services.py: %s went to ERROR: %s"
                                     % (name, json.dumps(srv.get("fault"))))
            time.sleep(0.5)
        raise SystemExit("nova_services.py: %s did not reach %s in %d s"
                         % (name, "deletion" if gone else status,
                            STEP_TIMEOUT))

    def boot(self, name):
        body = {"server": {"name": name, "imageRef": self.image,
                           "flavorRef": self.flavors["m1.small"],
                           "networks": "none"}}
        self.servers[name] = self.nova.call("POST", "/servers",
                                            body)["server"]["id"]
        self.wait(name, "ACTIVE")

    def action(self, name, body, status):
        self.nova.call("POST", "/servers/%s/action" % self.servers[name],
                       body)
        self.wait(name, status)

    def nova_state(self):
        names = {uuid: name for name, uuid in self.servers.items()}
        servers = {}
        for srv in self.nova.call("GET", "/servers/detail")["servers"]:
            servers[names.get(srv["id"], srv["id"])] = {
                "status": srv["status"],
                "host": srv.get("OS-EXT-SRV-ATTR:host"),
                "flavor": srv["flavor"]["original_name"],
            }
        migrations = []
        for mig in self.nova.call("GET", "/os-migrations")["migrations"]:
            migrations.append({
                "server": names.get(mig["instance_uuid"],
                                    mig["instance_uuid"]),
                "type": mig["migration_type"], "status": mig["status"],
                "source": mig["source_compute"], "dest": mig["dest_compute"],
            })
        # By server and type: the hosts are renamed later (see run).
        migrations.sort(key=lambda m: (m["server"], m["type"]))
        return {"servers": servers, "migrations": migrations}

    # Placement's side.
    def consumer_names(self):
        names = {uuid: name for name, uuid in self.servers.items()}
        for mig in self.nova.call("GET", "/os-migrations")["migrations"]:
            server = names.get(mig["instance_uuid"], mig["instance_uuid"])
            names[mig["uuid"]] = "%s of %s (%s)" % (
                mig["migration_type"], server, mig["status"])
        return names

    def placement_state(self):
        providers = self.place.call("GET", "/resource_providers")[
            "resource_providers"]
        rp_names = {rp["uuid"]: rp["name"] for rp in providers}
        consumers = self.consumer_names()
        state = {"providers": {}, "allocations": {}}
        for rp in providers:
            path = "/resource_providers/%s" % rp["uuid"]
            inv = self.place.call("GET", path + "/inventories")["inventories"]
            traits = sorted(self.place.call("GET", path + "/traits")["traits"])
            aggs = sorted(self.place.call("GET", path + "/aggregates")[
                "aggregates"])
            usages = self.place.call("GET", path + "/usages")["usages"]
            state["providers"][rp["name"]] = {
                "parent": rp_names.get(rp["parent_provider_uuid"]),
                "root": rp_names.get(rp["root_provider_uuid"]),
                "inventories": inv, "traits": traits, "aggregates": aggs,
                "usages": usages,
            }
            allocs = self.place.call("GET", path + "/allocations")[
                "allocations"]
            for consumer in allocs:
                state["allocations"].setdefault(
                    consumers.get(consumer, consumer), None)
        for consumer in [u for u, n in consumers.items()
                         if n in state["allocations"]]:
            body = self.place.call("GET", "/allocations/%s" % consumer)
            state["allocations"][consumers[consumer]] = {
                "allocations": {rp_names[rp]: a["resources"]
                                for rp, a in body["allocations"].items()},
                "same_project_and_user": bool(body.get("project_id")) and
                bool(body.get("user_id")),
                "consumer_type": body.get("consumer_type"),
            }
        unknown = [c for c, v in state["allocations"].items() if v is None]
        if unknown:
            state["unknown_consumers"] = len(unknown)
            for name in unknown:
                del state["allocations"][name]
        return state

    def record(self, step):
        entry = {"step": step, "nova": self.nova_state(),
                 "placement": self.placement_state()}
        self.steps.append(entry)
        hosts = {n: s["host"] for n, s in entry["nova"]["servers"].items()}
        usage = {n: p["usages"].get("VCPU", 0)
                 for n, p in entry["placement"]["providers"].items()}
        print("  %s: servers on %s; VCPU used %s"
              % (step, json.dumps(hosts, sort_keys=True),
                 json.dumps(usage, sort_keys=True)), flush=True)

    def host_of(self, name):
        return self.server(name)["OS-EXT-SRV-ATTR:host"]


def run(args):
    drv = Driver(args)
    started = time.time()
    drv.flavor("m1.small", 1, 512, 1)
    drv.flavor("m1.medium", 1, 1024, 2)
    drv.record("flavors made, no servers")
    # Each compute node has 2 VCPU (SmallFakeDriver, allocation ratio 1.0)
    # and the scheduler stacks (RAM weigher, multiplier -1.0): the first
    # two servers fill one host, the third must land on the other.
    drv.boot("s1")
    drv.record("boot s1")
    drv.boot("s2")
    drv.record("boot s2 (its host is full now)")
    first = drv.host_of("s1")
    if drv.host_of("s2") != first:
        raise SystemExit("nova_services.py: s2 landed on %s, not beside s1 "
                         "on %s" % (drv.host_of("s2"), first))
    drv.boot("s3")
    drv.record("boot s3 (on the other host)")
    other = drv.host_of("s3")
    if other == first:
        raise SystemExit("nova_services.py: s3 landed on the full host %s"
                         % first)
    # Resize s1 to m1.medium: not on its own host (Nova's default), so on
    # the other one; its old allocation moves to the migration consumer.
    drv.action("s1", {"resize": {"flavorRef": drv.flavors["m1.medium"]}},
               "VERIFY_RESIZE")
    drv.record("resize s1 to m1.medium (VERIFY_RESIZE)")
    if drv.host_of("s1") != other:
        raise SystemExit("nova_services.py: s1 was resized onto %s, not %s"
                         % (drv.host_of("s1"), other))
    drv.action("s1", {"confirmResize": None}, "ACTIVE")
    drv.record("confirm the resize of s1")
    # The other host is full now (s3, s1): migrate s3 back to the first.
    drv.action("s3", {"migrate": None}, "VERIFY_RESIZE")
    drv.record("cold migrate s3 (VERIFY_RESIZE)")
    if drv.host_of("s3") != first:
        raise SystemExit("nova_services.py: s3 was migrated onto %s, not %s"
                         % (drv.host_of("s3"), first))
    drv.action("s3", {"confirmResize": None}, "ACTIVE")
    drv.record("confirm the migration of s3")
    for name in sorted(drv.servers):
        drv.nova.call("DELETE", "/servers/%s" % drv.servers[name])
    for name in sorted(drv.servers):
        drv.wait(name, None, gone=True)
    drv.record("delete all servers")
    # Which host takes the first server is a tie (both empty) that the
    # scheduler breaks by the order of placement's provider summaries,
    # which upstream does not fix (it follows Python's set order), so the
    # hosts are named by their part: the first, filled, and the other.
    text = json.dumps(drv.steps, indent=1, sort_keys=True)
    for host, part in ((first, "first host"), (other, "other host")):
        text = text.replace(json.dumps(host), json.dumps(part))
    with open(args.out, "w") as out:
        out.write(text + "\n")
    print("  %d steps in %.0f s" % (len(drv.steps), time.time() - started))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("api")
    one.add_argument("--config-dir", required=True)
    one.add_argument("--port", type=int, required=True)
    svc = sub.add_parser("service")
    svc.add_argument("name", choices=sorted(SERVICES))
    svc.add_argument("rest", nargs=argparse.REMAINDER)
    two = sub.add_parser("neutron")
    two.add_argument("--port", type=int, required=True)
    two.add_argument("--log", required=True)
    three = sub.add_parser("wait-provider")
    three.add_argument("--placement", required=True)
    three.add_argument("--name", required=True)
    four = sub.add_parser("run")
    four.add_argument("--nova", required=True)
    four.add_argument("--placement", required=True)
    four.add_argument("--image", required=True)
    four.add_argument("--out", required=True)
    args = parser.parse_args()
    return {"service": service, "api": api, "neutron": neutron, "wait-provider": wait_provider,
            "run": run}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
