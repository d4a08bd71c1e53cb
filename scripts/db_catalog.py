"""Prints a Placement database's schema, or its rows, as sorted lines that
can be compared between two databases.

    python db_catalog.py schema URL
    python db_catalog.py data URL

URL is in upstream's forms (sqlite:///PATH, postgresql://USER@HOST/DB,
mysql+pymysql://USER:PASSWORD@HOST/DB). Needs psycopg2 and PyMySQL for
those backends (the upstream virtualenv of scripts/lib.sh has them).

schema: tables, columns (order, type, nullability, default), primary keys,
unique constraints, foreign keys (with their names where the backend keeps
them), indexes, sequences (PostgreSQL: type, bounds and owner, not their
current value), AUTO_INCREMENT columns (MySQL), table options, and the
alembic_version rows. The SQL text SQLite keeps for each table is not
compared (upstream's consumers table was rebuilt by alembic and reads
differently), only what it defines.

data: every row of every table, in primary-key order, without the
created_at and updated_at values (whether they are set is kept).
"""

import re
import sqlite3
import sys
from urllib.parse import unquote, urlsplit


def connect(url):
    scheme, rest = url.split("://", 1)
    driver = scheme.split("+")[0]
    if driver == "sqlite":
        return "sqlite", sqlite3.connect(rest[1:] if rest.startswith("/") else rest)
    parts = urlsplit(url)
    user = unquote(parts.username or "")
    password = unquote(parts.password or "")
    database = parts.path.lstrip("/")
    if driver in ("postgresql", "postgres"):
        import psycopg2

        conn = psycopg2.connect(host=parts.hostname, port=parts.port or 5432,
                                user=user, password=password or None,
                                dbname=database)
        return "postgresql", conn
    if driver in ("mysql", "mariadb"):
        import pymysql

        conn = pymysql.connect(host=parts.hostname, port=parts.port or 3306,
                               user=user, password=password,
                               database=database, charset="utf8mb4")
        return "mysql", conn
    raise SystemExit("unsupported database URL %s" % url)


def rows(conn, sql, args=()):
    cur = conn.cursor()
    cur.execute(sql, args)
    result = cur.fetchall()
    cur.close()
    return result


def tables(kind, conn):
    if kind == "sqlite":
        sql = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    elif kind == "postgresql":
        sql = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
    else:
        sql = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"
    return sorted(r[0] for r in rows(conn, sql))


def sqlite_schema(conn):
    out = []
    for t in tables("sqlite", conn):
        for cid, name, ctype, notnull, default, pk in rows(conn, "PRAGMA table_info(%s)" % t):
            out.append("column %s %02d %s %s notnull=%d default=%s pk=%d"
                       % (t, cid, name, ctype.upper(), notnull, default, pk))
        for _seq, name, unique, origin, partial in rows(conn, "PRAGMA index_list(%s)" % t):
            cols = ",".join(r[2] for r in rows(conn, "PRAGMA index_info(%s)" % name))
            # Automatic indexes are named by position; name them by content.
            shown = "(auto)" if name.startswith("sqlite_autoindex_") else name
            out.append("index %s %s (%s) unique=%d origin=%s partial=%d"
                       % (t, shown, cols, unique, origin, partial))
        for fk in rows(conn, "PRAGMA foreign_key_list(%s)" % t):
            _id, seq, target, src, dst, on_update, on_delete, match = fk
            out.append("fk %s %s -> %s(%s) update=%s delete=%s match=%s"
                       % (t, src, target, dst, on_update, on_delete, match))
        sql = rows(conn, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (t,))[0][0]
        for name, what, cols in re.findall(
                r"CONSTRAINT\s+(\w+)\s+(PRIMARY KEY|UNIQUE|FOREIGN KEY|CHECK)\s*\(([^)]*)\)", sql):
            out.append("constraint %s %s %s (%s)" % (t, name, what, cols.replace(" ", "")))
        if "AUTOINCREMENT" in sql.upper():
            out.append("autoincrement %s" % t)
    for kind, name, tbl in rows(conn, "SELECT type, name, tbl_name FROM sqlite_master WHERE type IN ('view', 'trigger')"):
        out.append("%s %s on %s" % (kind, name, tbl))
    return out


def postgresql_schema(conn):
    out = []
    for r in rows(conn, """
            SELECT table_name, ordinal_position, column_name, data_type,
                   character_maximum_length, is_nullable, column_default
            FROM information_schema.columns WHERE table_schema = current_schema()"""):
        out.append("column %s %02d %s %s %s nullable=%s default=%s" % r)
    for r in rows(conn, """
            SELECT conrelid::regclass::text, conname, contype::text,
                   pg_get_constraintdef(oid), condeferrable, condeferred
            FROM pg_constraint WHERE connamespace = current_schema()::regnamespace"""):
        out.append("constraint %s %s %s %s deferrable=%s deferred=%s" % r)
    for r in rows(conn, "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()"):
        out.append("index %s %s %s" % r)
    for r in rows(conn, """
            SELECT s.sequencename, s.data_type::text, s.start_value, s.increment_by,
                   s.min_value, s.max_value, s.cache_size, s.cycle,
                   (SELECT d.refobjid::regclass::text || '.' || a.attname
                    FROM pg_depend d JOIN pg_class c ON c.oid = d.objid
                    JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
                    WHERE c.relname = s.sequencename AND d.deptype = 'a')
            FROM pg_sequences s WHERE s.schemaname = current_schema()"""):
        out.append("sequence %s %s start=%s inc=%s min=%s max=%s cache=%s cycle=%s owned_by=%s" % r)
    for r in rows(conn, """
            SELECT c.relkind::text, c.relname FROM pg_class c
            WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('v', 'm', 'f', 'p')"""):
        out.append("relation kind=%s %s" % r)
    for r in rows(conn, """
            SELECT event_object_table, trigger_name FROM information_schema.triggers
            WHERE trigger_schema = current_schema()"""):
        out.append("trigger %s %s" % r)
    return out


def mysql_schema(conn):
    out = []
    for t in tables("mysql", conn):
        create = rows(conn, "SHOW CREATE TABLE `%s`" % t)[0][1]
        # The next AUTO_INCREMENT value is state, not schema.
        create = re.sub(r" AUTO_INCREMENT=\d+", "", create)
        for line in create.splitlines():
            out.append("create %s %s" % (t, line.strip()))
    for r in rows(conn, """
            SELECT table_name, ordinal_position, column_name, column_type, is_nullable,
                   COALESCE(column_default, '(none)'), extra,
                   COALESCE(character_set_name, ''), COALESCE(collation_name, '')
            FROM information_schema.columns WHERE table_schema = DATABASE()"""):
        out.append("column %s %02d %s %s nullable=%s default=%s extra=%s charset=%s collation=%s" % r)
    for r in rows(conn, """
            SELECT table_name, index_name, non_unique, seq_in_index, column_name
            FROM information_schema.statistics WHERE table_schema = DATABASE()"""):
        out.append("index %s %s non_unique=%s %s %s" % r)
    for r in rows(conn, """
            SELECT rc.table_name, rc.constraint_name, rc.referenced_table_name,
                   rc.update_rule, rc.delete_rule
            FROM information_schema.referential_constraints rc
            WHERE rc.constraint_schema = DATABASE()"""):
        out.append("fk %s %s -> %s update=%s delete=%s" % r)
    for r in rows(conn, """
            SELECT table_name, engine, row_format, table_collation
            FROM information_schema.tables WHERE table_schema = DATABASE()"""):
        out.append("table %s engine=%s row_format=%s collation=%s" % r)
    for r in rows(conn, "SELECT event_object_table, trigger_name FROM information_schema.triggers WHERE trigger_schema = DATABASE()"):
        out.append("trigger %s %s" % r)
    return out


def schema(kind, conn):
    lines = {"sqlite": sqlite_schema, "postgresql": postgresql_schema, "mysql": mysql_schema}[kind](conn)
    if "alembic_version" in tables(kind, conn):
        for (version,) in rows(conn, "SELECT version_num FROM alembic_version"):
            lines.append("alembic_version %s" % version)
    return lines


def columns(kind, conn, table):
    if kind == "sqlite":
        return [r[1] for r in rows(conn, "PRAGMA table_info(%s)" % table)]
    if kind == "postgresql":
        sql = ("SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema()"
               " AND table_name = %s ORDER BY ordinal_position")
    else:
        sql = ("SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE()"
               " AND table_name = %s ORDER BY ordinal_position")
    return [r[0] for r in rows(conn, sql, (table,))]


def data(kind, conn):
    out = []
    for t in tables(kind, conn):
        cols = columns(kind, conn, t)
        shown = []
        for c in cols:
            if c in ("created_at", "updated_at"):
                shown.append("CASE WHEN %s IS NULL THEN 'null' ELSE 'set' END" % c)
            else:
                shown.append(c)
        order = ", ".join(c for c in cols if c not in ("created_at", "updated_at"))
        for r in rows(conn, "SELECT %s FROM %s ORDER BY %s" % (", ".join(shown), t, order)):
            out.append("%s %s" % (t, " | ".join(
                repr(float(v)) if isinstance(v, float) else str(v) for v in r)))
    return out


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("schema", "data"):
        raise SystemExit(__doc__)
    kind, conn = connect(sys.argv[2])
    lines = schema(kind, conn) if sys.argv[1] == "schema" else data(kind, conn)
    conn.close()
    for line in sorted(lines):
        print(line)


if __name__ == "__main__":
    main()
