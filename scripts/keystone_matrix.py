"""Placement behind Keystone: the same requests with real tokens against
placement-api and upstream Placement behind keystonemiddleware, both on
the same Keystone (scripts/keystone-placement.sh runs this).

    keystone_matrix.py matrix OURS_URL UPSTREAM_URL
        the policy matrix: every caller (admin, service, member, reader,
        system reader, system admin, a domain-scoped admin, no token, a
        token Keystone does not know) on every kind of request; fails
        when a status differs between the two, or when a sanity rule of
        the matrix (below) is broken.
    keystone_matrix.py spoof OURS_URL UPSTREAM_URL
        a reader (and a member) adding X-Roles: admin,
        OpenStack-System-Scope: all, X-Project-Id and friends: ours must
        answer as without them. Upstream's answers are printed; a
        difference there is reported, not failed (keystonemiddleware does
        not remove OpenStack-System-Scope).
    keystone_matrix.py revoke URL CACHE_SECONDS
        a member's token works, is revoked in Keystone, and is refused
        with 401 once CACHE_SECONDS have passed.
    keystone_matrix.py token
        prints a new token of the member (for the outage test).
    keystone_matrix.py status URL TOKEN
        prints the status and seconds of one GET of the demo project's
        usages (which its member may read).

The users come from the variables of scripts/keystone.sh (KEYSTONE_*).
Only the standard library is used.
"""

import json
import os
import sys
import time
import urllib.error
import urllib.request
import uuid

ENV = os.environ
KEYSTONE = ENV["KEYSTONE_URL"].rstrip("/")
if not KEYSTONE.endswith("/v3"):
    KEYSTONE += "/v3"
VERSION = "placement 1.39"


def request(method, url, token=None, body=None, headers=None, timeout=30):
    """Returns (status, headers, parsed body or text)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    if token is not None:
        req.add_header("X-Auth-Token", token)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        req.add_header(name, value)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            status, hdrs, raw = resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as err:
        status, hdrs, raw = err.code, err.headers, err.read()
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = raw.decode(errors="replace")
    return status, hdrs, parsed


def token(user, password, scope):
    body = {
        "auth": {
            "identity": {
                "methods": ["password"],
                "password": {
                    "user": {"name": user, "domain": {"id": "default"}, "password": password}
                },
            },
            "scope": scope,
        }
    }
    status, hdrs, answer = request("POST", KEYSTONE + "/auth/tokens?nocatalog", body=body)
    if status != 201:
        sys.exit(f"keystone refused {user} ({scope}): {status} {answer}")
    return hdrs["X-Subject-Token"]


def project(name):
    return {"project": {"name": name, "domain": {"id": "default"}}}


def grant_domain_admin(admin_pw):
    """The admin role on the domain Default for the admin user, so that a
    domain-scoped token can be had (bootstrap grants none)."""
    tok = token(ENV["KEYSTONE_ADMIN_USER"], admin_pw, project(ENV["KEYSTONE_ADMIN_PROJECT"]))
    status, _, roles = request("GET", KEYSTONE + "/roles?name=admin", tok)
    if status != 200 or not roles["roles"]:
        sys.exit(f"keystone: no admin role: {status} {roles}")
    role = roles["roles"][0]["id"]
    user = ENV["KEYSTONE_ADMIN_USER_ID"]
    status, _, answer = request("PUT", f"{KEYSTONE}/domains/default/users/{user}/roles/{role}", tok)
    if status not in (201, 204):
        sys.exit(f"keystone: cannot grant admin on the domain: {status} {answer}")


def callers():
    """name -> token (None: no token)."""
    admin_pw = ENV["KEYSTONE_ADMIN_PASSWORD"]
    grant_domain_admin(admin_pw)
    return {
        "admin": token(ENV["KEYSTONE_ADMIN_USER"], admin_pw, project(ENV["KEYSTONE_ADMIN_PROJECT"])),
        "service": token(
            ENV["KEYSTONE_SERVICE_USER"],
            ENV["KEYSTONE_SERVICE_PASSWORD"],
            project(ENV["KEYSTONE_SERVICE_PROJECT"]),
        ),
        "member": member_token(),
        "reader": token(
            ENV["KEYSTONE_READER_USER"],
            ENV["KEYSTONE_READER_PASSWORD"],
            project(ENV["KEYSTONE_DEMO_PROJECT"]),
        ),
        "system-reader": token(
            ENV["KEYSTONE_SYSTEM_READER_USER"],
            ENV["KEYSTONE_SYSTEM_READER_PASSWORD"],
            {"system": {"all": True}},
        ),
        "system-admin": token(ENV["KEYSTONE_ADMIN_USER"], admin_pw, {"system": {"all": True}}),
        "domain-admin": token(ENV["KEYSTONE_ADMIN_USER"], admin_pw, {"domain": {"id": "default"}}),
        "no-token": None,
        "unknown-token": "gAAAAABnot-a-token-keystone-knows",
    }


def member_token():
    return token(
        ENV["KEYSTONE_MEMBER_USER"],
        ENV["KEYSTONE_MEMBER_PASSWORD"],
        project(ENV["KEYSTONE_DEMO_PROJECT"]),
    )


# Fixed uuids, so that both services see the same requests.
RP = "7b0c1f8e-6d3a-4f55-9d2e-5a1c3b7e9f01"
CONSUMER = "3c9e2a41-8b7d-4e0f-a6c5-1d2b3e4f5a60"


def setup(base, admin):
    """Data every caller's requests can find: a provider with inventory
    and an allocation of the demo project."""
    demo = ENV["KEYSTONE_DEMO_PROJECT_ID"]
    steps = [
        ("POST", "/resource_providers", {"name": "matrix-rp", "uuid": RP}),
        (
            "PUT",
            f"/resource_providers/{RP}/inventories",
            {"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 64}}},
        ),
        (
            "PUT",
            f"/allocations/{CONSUMER}",
            {
                "allocations": {RP: {"resources": {"VCPU": 1}}},
                "project_id": demo,
                "user_id": ENV["KEYSTONE_MEMBER_USER_ID"],
                "consumer_generation": None,
                "consumer_type": "INSTANCE",
            },
        ),
    ]
    for method, path, body in steps:
        status, _, answer = request(
            method, base + path, admin, body, {"OpenStack-API-Version": VERSION}
        )
        if status >= 300:
            sys.exit(f"setup of {base}: {method} {path}: {status} {answer}")


def cases(who):
    """(label, method, path, body) of one caller; what they create is
    their own, so callers do not see each other's results."""
    own = str(uuid.uuid5(uuid.NAMESPACE_URL, "matrix-" + who))
    consumer = str(uuid.uuid5(uuid.NAMESPACE_URL, "consumer-" + who))
    trait = "CUSTOM_M_" + who.upper().replace("-", "_")
    demo = ENV["KEYSTONE_DEMO_PROJECT_ID"]
    return [
        ("versions document", "GET", "/", None),
        ("list providers", "GET", "/resource_providers", None),
        ("show provider", "GET", f"/resource_providers/{RP}", None),
        ("create provider", "POST", "/resource_providers", {"name": "rp-" + who, "uuid": own}),
        ("update provider", "PUT", f"/resource_providers/{RP}", {"name": "matrix-rp"}),
        ("list inventories", "GET", f"/resource_providers/{RP}/inventories", None),
        (
            "set inventories",
            "PUT",
            f"/resource_providers/{own}/inventories",
            {"resource_provider_generation": 0, "inventories": {"DISK_GB": {"total": 10}}},
        ),
        ("provider usages", "GET", f"/resource_providers/{RP}/usages", None),
        ("provider aggregates", "GET", f"/resource_providers/{RP}/aggregates", None),
        ("provider traits", "GET", f"/resource_providers/{RP}/traits", None),
        ("list resource classes", "GET", "/resource_classes", None),
        ("create resource class", "PUT", "/resource_classes/CUSTOM_M_" + trait[9:], None),
        ("list traits", "GET", "/traits", None),
        ("create trait", "PUT", "/traits/" + trait, None),
        ("show allocations", "GET", f"/allocations/{CONSUMER}", None),
        (
            "write allocations",
            "PUT",
            f"/allocations/{consumer}",
            {
                "allocations": {RP: {"resources": {"VCPU": 1}}},
                "project_id": demo,
                "user_id": ENV["KEYSTONE_MEMBER_USER_ID"],
                "consumer_generation": None,
                "consumer_type": "INSTANCE",
            },
        ),
        ("provider allocations", "GET", f"/resource_providers/{RP}/allocations", None),
        ("candidates", "GET", "/allocation_candidates?resources=VCPU:1", None),
        ("usages of the demo project", "GET", f"/usages?project_id={demo}", None),
        ("usages of another project", "GET", f"/usages?project_id={uuid.uuid4().hex}", None),
        ("reshaper", "POST", "/reshaper", {"inventories": {}, "allocations": {}}),
    ]


def run(base, tokens):
    results = {}
    for who, tok in tokens.items():
        for label, method, path, body in cases(who):
            status, hdrs, answer = request(
                method, base + path, tok, body, {"OpenStack-API-Version": VERSION}
            )
            results[(who, label)] = (status, hdrs.get("WWW-Authenticate"), answer)
    return results


def matrix(ours, upstream):
    tokens = callers()
    admin = tokens["admin"]
    setup(ours, admin)
    setup(upstream, admin)
    mine = run(ours, tokens)
    theirs = run(upstream, tokens)
    failures = []
    labels = [label for label, *_ in cases("x")]
    width = max(map(len, labels))
    print(f"  {'':{width}}  " + " ".join(f"{w[:13]:>13}" for w in tokens))
    for label in labels:
        row = []
        for who in tokens:
            a, b = mine[(who, label)], theirs[(who, label)]
            row.append(f"{a[0]:>13}" if a[0] == b[0] else f"{a[0]}!={b[0]:>9}")
            if a[0] != b[0]:
                failures.append(f"{who} {label}: ours {a[0]} {a[2]}, upstream {b[0]} {b[2]}")
            if a[0] == 401 and a[1] != b[1]:
                failures.append(f"{who} {label}: WWW-Authenticate ours {a[1]!r}, upstream {b[1]!r}")
        print(f"  {label:{width}}  " + " ".join(row))
    # Sanity rules, so that two services wrong the same way still fail.
    expect = {
        ("admin", "list providers"): 200,
        ("admin", "create provider"): 200,
        ("service", "list providers"): 200,
        ("no-token", "list providers"): 401,
        ("unknown-token", "list providers"): 401,
        ("no-token", "versions document"): 200,
        ("reader", "create provider"): 403,
        ("system-admin", "list providers"): 403,
        ("domain-admin", "list providers"): 403,
        ("reader", "usages of another project"): 403,
    }
    for (who, label), status in expect.items():
        if mine[(who, label)][0] != status:
            failures.append(f"{who} {label}: ours {mine[(who, label)][0]}, expected {status}")
    www = mine[("no-token", "list providers")][1]
    want = 'Keystone uri="%s"' % ENV["KEYSTONE_URL"].rstrip("/").removesuffix("/v3")
    if www != want:
        failures.append(f"no token: WWW-Authenticate {www!r}, expected {want!r}")
    body = mine[("no-token", "list providers")][2]
    if body != {
        "error": {
            "code": 401,
            "title": "Unauthorized",
            "message": "The request you have made requires authentication.",
        }
    }:
        failures.append(f"no token: body {body!r}")
    report(failures, f"{len(labels) * len(tokens)} requests, statuses equal")


def essence(answer):
    """The status and body of an answer, without the request ids of
    error bodies."""
    status, _, body = answer
    if isinstance(body, dict) and "errors" in body:
        body = [(e.get("status"), e.get("code"), e.get("detail")) for e in body["errors"]]
    return status, body


SPOOFS = {
    "X-Roles": "admin,service",
    "OpenStack-System-Scope": "all",
    "X-Project-Id": "0" * 32,
    "X-User-Id": "admin",
    "X-Identity-Status": "Confirmed",
    "X-Service-Roles": "service",
    "X-Is-Admin-Project": "True",
    "X-Domain-Id": "default",
}


def spoof(ours, upstream):
    tokens = callers()
    failures = []
    for who in ("reader", "member"):
        tok = tokens[who]
        for label, method, path, body in cases(who + "-spoof"):
            if method != "GET":
                continue
            plain = request(method, ours + path, tok, body, {"OpenStack-API-Version": VERSION})
            forged = request(
                method, ours + path, tok, body, {"OpenStack-API-Version": VERSION, **SPOOFS}
            )
            if essence(plain) != essence(forged):
                failures.append(f"{who} {label}: {plain[0]} plain, {forged[0]} with forged headers")
            up_plain = request(method, upstream + path, tok, body, {"OpenStack-API-Version": VERSION})
            up_forged = request(
                method, upstream + path, tok, body, {"OpenStack-API-Version": VERSION, **SPOOFS}
            )
            if up_plain[0] != up_forged[0]:
                print(
                    f"  upstream differs: {who} {label}: {up_plain[0]} plain, "
                    f"{up_forged[0]} with forged headers"
                )
    report(failures, "forged identity headers change nothing on placement-api")


def revoke(base, cache_seconds):
    tok = member_token()
    path = "/usages?project_id=" + ENV["KEYSTONE_DEMO_PROJECT_ID"]
    headers = {"OpenStack-API-Version": VERSION}
    before = request("GET", base + path, tok, None, headers)[0]
    admin = token(
        ENV["KEYSTONE_ADMIN_USER"],
        ENV["KEYSTONE_ADMIN_PASSWORD"],
        project(ENV["KEYSTONE_ADMIN_PROJECT"]),
    )
    status = request("DELETE", KEYSTONE + "/auth/tokens", admin, None, {"X-Subject-Token": tok})[0]
    if status != 204:
        sys.exit(f"keystone did not revoke the token: {status}")
    time.sleep(cache_seconds + 1)
    after, _, body = request("GET", base + path, tok, None, headers)
    failures = []
    if before != 200:
        failures.append(f"the member's usages before revocation: {before}, expected 200")
    if after != 401:
        failures.append(f"a revoked token after {cache_seconds}s: {after} {body}, expected 401")
    report(failures, f"revoked token: 200 before, 401 after the {cache_seconds}s cache time")


def status(base, tok):
    start = time.monotonic()
    path = "/usages?project_id=" + ENV["KEYSTONE_DEMO_PROJECT_ID"]
    code, _, body = request("GET", base + path, tok, None, {"OpenStack-API-Version": VERSION}, 60)
    print(code, f"{time.monotonic() - start:.2f}", json.dumps(body))


def report(failures, ok):
    for failure in failures:
        print("  FAIL " + failure)
    if failures:
        sys.exit(1)
    print("  ok: " + ok)


def main():
    args = sys.argv[1:]
    if args[:1] == ["matrix"] and len(args) == 3:
        matrix(args[1], args[2])
    elif args[:1] == ["spoof"] and len(args) == 3:
        spoof(args[1], args[2])
    elif args[:1] == ["revoke"] and len(args) == 3:
        revoke(args[1], int(args[2]))
    elif args == ["token"]:
        print(member_token())
    elif args[:1] == ["status"] and len(args) == 3:
        status(args[1], args[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
