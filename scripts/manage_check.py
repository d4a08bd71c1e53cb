"""Helpers of scripts/manage-check.sh, run with the upstream virtualenv's
Python.

    python manage_check.py make URL REVISION
        upstream's own migrations (openstack-placement's alembic scripts)
        create the database at REVISION; then rows are added that the
        revision allows: at b4ed3a175331 a provider without its root
        provider id, and, before b5c396305c25, an allocation without a
        consumer record (both need the online data migrations).
    python manage_check.py gets BASE_URL OUT
        a few GETs (microversion 1.39, or the one after @), their statuses and bodies
        written to OUT as sorted JSON.
"""

import json
import sys
import tempfile
import urllib.error
import urllib.request

RP1 = "7c6e3c0e-0b4e-4c43-9d5a-0c1f1b0e0a01"
RP2 = "7c6e3c0e-0b4e-4c43-9d5a-0c1f1b0e0a02"
C1 = "5e0b4c7a-5f7e-4a55-8f6b-2a8d6c3b1c01"
C2 = "5e0b4c7a-5f7e-4a55-8f6b-2a8d6c3b1c02"
NEEDS_ROOT_IDS = {"b4ed3a175331"}
NEEDS_CONSUMERS = {"b4ed3a175331", "611cd6dffd7b"}


def make(url, revision):
    from oslo_config import cfg
    from placement import conf
    from placement import db_api
    from placement.db.sqlalchemy import migration
    import sqlalchemy as sa

    config = cfg.ConfigOpts()
    conf.register_opts(config)
    with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
        f.write("[placement_database]\nconnection = %s\n" % url)
        f.flush()
        config(["--config-file", f.name], project="placement", default_config_files=[])
    db_api.configure(config)
    migration.upgrade(revision)

    # No ids are given: PostgreSQL's sequences must hand out the next ones.
    # Every row has its created_at, as upstream's always do.
    engine = sa.create_engine(url)
    rp = "(SELECT id FROM resource_providers WHERE uuid = :rp)"
    with engine.begin() as conn:
        def run(sql, **kw):
            conn.execute(sa.text(sql), kw)
        run("INSERT INTO projects (external_id, created_at) VALUES ('project-a', CURRENT_TIMESTAMP)")
        run("INSERT INTO users (external_id, created_at) VALUES ('user-a', CURRENT_TIMESTAMP)")
        for uuid, name, generation in ((RP1, "rp-one", 3), (RP2, "rp-two", 1)):
            run("INSERT INTO resource_providers (uuid, name, generation, created_at) "
                "VALUES (:u, :n, :g, CURRENT_TIMESTAMP)", u=uuid, n=name, g=generation)
        run("UPDATE resource_providers SET root_provider_id = id WHERE uuid = :u", u=RP1)
        if revision not in NEEDS_ROOT_IDS:
            run("UPDATE resource_providers SET root_provider_id = id WHERE uuid = :u", u=RP2)
        for rc, total in ((0, 8), (1, 4096)):
            run("INSERT INTO inventories (resource_provider_id, resource_class_id, total, "
                "reserved, min_unit, max_unit, step_size, allocation_ratio, created_at) "
                "VALUES (%s, :rc, :t, 0, 1, :t, 1, 1.0, CURRENT_TIMESTAMP)" % rp, rp=RP1, rc=rc, t=total)
        run("INSERT INTO consumers (uuid, project_id, user_id, generation, created_at) "
            "VALUES (:u, (SELECT id FROM projects), (SELECT id FROM users), 2, CURRENT_TIMESTAMP)", u=C1)
        allocations = [(C1, 0, 2)]
        if revision in NEEDS_CONSUMERS:
            allocations += [(C2, 0, 1), (C2, 1, 512)]
        for consumer, rc, used in allocations:
            run("INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, "
                "used, created_at) VALUES (%s, :c, :rc, :used, CURRENT_TIMESTAMP)" % rp, rp=RP1, c=consumer, rc=rc, used=used)
    engine.dispose()


# Usages at 1.37: at 1.38 and later upstream's query fails on PostgreSQL
# (its GROUP BY lacks the resource class).
PATHS = [
    "/resource_providers",
    "/resource_providers/%s" % RP2,
    "/resource_providers/%s/inventories" % RP1,
    "/resource_providers/%s/usages" % RP1,
    "/allocations/%s" % C1,
    "/allocations/%s" % C2,
    "/usages?project_id=project-a@1.37",
    "/usages?project_id=00000000-0000-0000-0000-000000000000@1.37",
    "/allocation_candidates?resources=VCPU:1",
]


def gets(base, out):
    answers = {}
    for entry in PATHS:
        path, _, version = entry.partition("@")
        request = urllib.request.Request(base + path, headers={
            "x-auth-token": "admin", "accept": "application/json",
            "openstack-api-version": "placement %s" % (version or "1.39")})
        try:
            with urllib.request.urlopen(request) as response:
                status, body = response.status, response.read()
        except urllib.error.HTTPError as e:
            status, body = e.code, e.read()
        try:
            body = json.loads(body)
        except ValueError:
            body = body.decode("utf-8", "replace")
        # Error bodies carry the request's id, different on every request.
        if isinstance(body, dict):
            for error in body.get("errors", []):
                error.pop("request_id", None)
        answers[entry] = {"status": status, "body": body}
    with open(out, "w") as f:
        json.dump(answers, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "gets":
        gets(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
