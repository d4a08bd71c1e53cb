#!/usr/bin/env python3
"""Seeds for the fuzz targets of the service, from upstream Placement's
gabbi files (openstack-placement 16.0.0): every request of every file,
its variables replaced by the rows of the fuzzing fixture
(fuzz/src/fixture.rs).

    python fuzz/seed_from_gabbi.py [--gabbits DIR] [--out DIR]

Run it with the Python of scripts/gabbi.sh's pinned virtualenv (PyYAML and
the gabbi files are there):

    . scripts/lib.sh
    "$(pinned_venv scripts/requirements/gabbi.txt)/bin/python" fuzz/seed_from_gabbi.py

It writes, under --out (default fuzz/seeds, not committed), one directory
per target, each input in a file named by its SHA-1 as libFuzzer names
them:

    router           every request, in microversion_fuzz::RouterInput's format
    python_schema    the JSON bodies of the write operations that target picks
    body_reader      every request body
    provider_query   the query strings of GET /resource_providers
    candidate_query  the query strings of GET /allocation_candidates

The committed corpora (fuzz/corpus/<target>) are these seeds and what
the fuzzer found from them, minimized with `cargo fuzz cmin`.
"""

import argparse
import hashlib
import json
import os
import re
import sys
import sysconfig
import uuid

import yaml

# The fixture of fuzz/src/fixture.rs.
CN1 = "c0000000-0000-4000-8000-000000000001"
CN2 = "c0000000-0000-4000-8000-000000000002"
SS = "c0000000-0000-4000-8000-000000000003"
NUMA0 = "c0000000-0000-4000-8000-000000000004"
EMPTY = "c0000000-0000-4000-8000-000000000005"
CONSUMER1 = "c0000000-0000-4000-8000-000000000101"
CONSUMER2 = "c0000000-0000-4000-8000-000000000102"
PROJECT = "c0000000-0000-4000-8000-000000000201"
USER = "c0000000-0000-4000-8000-000000000301"
AGG_A = "c0000000-0000-4000-8000-000000000a01"
AGG_B = "c0000000-0000-4000-8000-000000000a02"
CUSTOM = "CUSTOM_FUZZ"

# upstream's variables that name something the fixture has; any other
# *_UUID or *_ID is a fresh UUID (from its name), any other name itself.
ENVIRON = {
    "RP_UUID": CN1, "CN1_UUID": CN1, "RP_UUID1": CN1, "CN_LEFT": CN1,
    "PARENT_PROVIDER_UUID": CN1,
    "CN2_UUID": CN2, "RP_UUID2": CN2, "CN_RIGHT": CN2, "ALT_RP_UUID": CN2,
    "SS_UUID": SS, "SS1_UUID": SS, "SHR_DISK_1": SS,
    "NUMA0_UUID": NUMA0, "NUMA1_UUID": NUMA0,
    "CN_MIDDLE": EMPTY, "ALT_PARENT_PROVIDER_UUID": EMPTY,
    "CONSUMER_ID": CONSUMER1, "INSTANCE_UUID": CONSUMER1,
    "CONSUMER_UUID": CONSUMER1, "CONSUMER_0": CONSUMER1,
    "ALT_CONSUMER_ID": CONSUMER2, "MIGRATION_UUID": CONSUMER2,
    "PROJECT_ID": PROJECT, "USER_ID": USER,
    "AGGA_UUID": AGG_A, "AGGA": AGG_A, "AGGB_UUID": AGG_B, "AGGB": AGG_B,
    "CUSTOM_RES_CLASS": CUSTOM,
    "RP_NAME": "cn1", "RP_NAME1": "cn1", "RP_NAME2": "cn2",
    "ALT_RP_NAME": "empty",
}

# The operations of the python_schema target, by its byte 0.
OPERATIONS = [
    ("POST", r"/resource_providers"),
    ("PUT", r"/resource_providers/[^/]+"),
    ("PUT", r"/resource_providers/[^/]+/inventories"),
    ("POST", r"/resource_providers/[^/]+/inventories"),
    ("PUT", r"/resource_providers/[^/]+/inventories/[^/]+"),
    ("PUT", r"/resource_providers/[^/]+/aggregates"),
    ("PUT", r"/resource_providers/[^/]+/traits"),
    ("POST", r"/resource_classes"),
    ("PUT", r"/resource_classes/[^/]+"),
    ("PUT", r"/allocations/[^/]+"),
    ("POST", r"/allocations"),
    ("POST", r"/reshaper"),
]
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def environ(name):
    if name in ENVIRON:
        return ENVIRON[name]
    if name.endswith(("_UUID", "_ID")) or "CONSUMER" in name:
        return str(uuid.uuid5(uuid.NAMESPACE_DNS, "placement-fuzz." + name))
    return name


def response(expr):
    """A plausible value for `$RESPONSE['<expr>']` (a typed JSON value)."""
    if "generation" in expr:
        return 1
    if "allocations" in expr:
        return {CN1: {"resources": {"VCPU": 1}}}
    return CN1


VAR = re.compile(
    r"""\$HISTORY\[(['"]).*?\1\]\.\$RESPONSE\[(['"])(.*?)\2\]"""
    r"""|\$RESPONSE\[(['"])(.*?)\4\]"""
    r"""|\$ENVIRON\[(['"])(.*?)\6\]"""
    r"""|\$(LAST_URL|LOCATION|SCHEME|NETLOC|URL)"""
)


class Subst:
    def __init__(self):
        self.last_url = "/"

    def one(self, m):
        if m.group(3) is not None:
            return response(m.group(3))
        if m.group(5) is not None:
            return response(m.group(5))
        if m.group(7) is not None:
            return environ(m.group(7))
        return {
            "LAST_URL": self.last_url,
            "URL": self.last_url,
            "LOCATION": "/resource_providers/" + CN1,
            "SCHEME": "http",
            "NETLOC": "localhost",
        }[m.group(8)]

    def text(self, s):
        return VAR.sub(lambda m: str(self.one(m)), s)

    def value(self, v):
        if isinstance(v, str):
            m = VAR.fullmatch(v)
            return self.one(m) if m else self.text(v)
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, dict):
            return {self.text(str(k)): self.value(x) for k, x in v.items()}
        return v


def requests_of(path):
    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    defaults = doc.get("defaults") or {}
    subst = Subst()
    for test in doc.get("tests") or []:
        method, url = None, None
        for m in METHODS:
            if m in test:
                method, url = m, test[m]
        if method is None:
            method, url = test.get("method", "GET"), test.get("url")
        if url is None:
            continue
        headers = {}
        for source in (defaults.get("request_headers"), test.get("request_headers")):
            for k, v in (source or {}).items():
                headers[str(k).lower()] = subst.text(str(v))
        url = subst.text(str(url))
        if url.startswith("http"):
            url = "/" + url.split("/", 3)[-1] if url.count("/") >= 3 else "/"
        data = test.get("data", defaults.get("data"))
        if data is None:
            body = b""
        elif isinstance(data, str):
            body = subst.text(data).encode()
        else:
            body = json.dumps(subst.value(data)).encode()
        subst.last_url = url
        yield method, url, headers, body


def router_input(method, url, headers, body):
    """The bytes of microversion_fuzz::RouterInput for this request."""
    flags, minor, explicit = 0, 0, []
    for name, value in headers.items():
        if name == "x-auth-token" and value == "admin":
            flags |= 0b01
        elif name == "openstack-api-version" and value == "placement latest":
            flags |= 0b0100
        elif name == "openstack-api-version" and re.fullmatch(r"placement 1\.(\d|[1-3]\d|4[01])", value):
            flags |= 0b1000
            minor = int(value.split(".")[1])
        elif name == "accept" and value == "application/json":
            flags |= 0b10_0000
        elif name == "content-type" and value == "application/json" and body:
            pass
        else:
            explicit.append((name, value))
    if body and "content-type" not in headers:
        flags |= 0b1_0000
    out = bytes([flags, minor]) + f"{method} {url}".encode()
    for name, value in explicit:
        out += f"\n{name}: {value}".encode()
    if body:
        out += b"\n\n" + body
    return out


def version_of(headers):
    v = headers.get("openstack-api-version", "")
    m = re.fullmatch(r"placement 1\.(\d+)", v)
    if m:
        return int(m.group(1))
    return 39 if v == "placement latest" else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gabbits", default=os.path.join(
        sysconfig.get_paths()["purelib"], "placement", "tests", "functional", "gabbits"))
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds"))
    args = parser.parse_args()
    if not os.path.isdir(args.gabbits):
        sys.exit(f"no gabbi files at {args.gabbits} (run with the Python of the gabbi virtualenv)")
    seeds = {t: set() for t in ("router", "python_schema", "body_reader", "provider_query", "candidate_query")}
    files = sorted(f for f in os.listdir(args.gabbits) if f.endswith(".yaml"))
    for name in files:
        for method, url, headers, body in requests_of(os.path.join(args.gabbits, name)):
            minor = version_of(headers)
            seeds["router"].add(router_input(method, url, headers, body))
            path, _, query = url.partition("?")
            if body:
                seeds["body_reader"].add(body)
                for i, (m, pattern) in enumerate(OPERATIONS):
                    if m == method and re.fullmatch(pattern, path):
                        seeds["python_schema"].add(bytes([i, minor]) + body)
                        break
            if method == "GET" and path == "/resource_providers":
                seeds["provider_query"].add(bytes([minor]) + query.encode())
            if method == "GET" and path == "/allocation_candidates":
                byte = minor - 10 if minor >= 10 else 240 + minor
                seeds["candidate_query"].add(bytes([byte]) + query.encode())
    for target, inputs in seeds.items():
        directory = os.path.join(args.out, target)
        os.makedirs(directory, exist_ok=True)
        for data in inputs:
            with open(os.path.join(directory, hashlib.sha1(data).hexdigest()), "wb") as f:
                f.write(data)
        print(f"{target}: {len(inputs)} inputs from {len(files)} files -> {directory}")


if __name__ == "__main__":
    main()
