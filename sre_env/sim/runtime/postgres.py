"""PostgreSQL sessions and table locks, and ``psql`` over them.

The accounting database of the astronomy shop: every client connection is a
backend with a pid, a state (``active``, ``idle``, ``idle in transaction``),
a transaction start and its last query; a transaction that took a table lock
holds it until it ends, and a backend that needs a conflicting lock waits
(``wait_event_type = Lock``) behind it. That is all lock contention needs: a
forgotten ``idle in transaction`` session holding ``AccessExclusiveLock`` on
``"order"`` stalls every insert of the accounting consumer until the session
is terminated (``pg_terminate_backend``); ``pg_cancel_backend`` only cancels a
running query, so it does nothing to an idle transaction.

:func:`psql` answers the catalogue queries operators type (``pg_stat_activity``,
``pg_locks``, ``pg_blocking_pids``, counts of the accounting tables,
``pg_terminate_backend``/``pg_cancel_backend``, ``\\dt``) with psql's aligned
output, and anything else with PostgreSQL's own error text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sre_env.backend import ExecResult
from sre_env.kube.timefmt import iso

__all__ = ["Session", "PostgresServer", "psql", "TABLES", "CONFLICTS"]

#: the accounting schema (init.sql of the demo's postgresql image): table -> oid
TABLES = {"order": 16386, "orderitem": 16391, "shipping": 16401}
#: lock mode -> modes it conflicts with (the ones the model uses)
CONFLICTS = {
    "AccessExclusiveLock": {"AccessShareLock", "RowShareLock", "RowExclusiveLock", "ShareUpdateExclusiveLock", "ShareLock", "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"},
    "ExclusiveLock": {"RowShareLock", "RowExclusiveLock", "ShareUpdateExclusiveLock", "ShareLock", "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"},
    "ShareLock": {"RowExclusiveLock", "ShareUpdateExclusiveLock", "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"},
    "RowExclusiveLock": {"ShareLock", "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"},
}
DB_OID = 16384


#: the statement accounting's transaction is blocked in, by the table it waits for
_INSERTS = {
    "order": 'INSERT INTO "order" (order_id)\nVALUES (@p0);',
    "orderitem": "INSERT INTO orderitem (order_id, product_id, item_cost_currency_code, item_cost_nanos, item_cost_units, quantity)\nVALUES (@p1, @p2, @p3, @p4, @p5, @p6);",
    "shipping": "INSERT INTO shipping (shipping_tracking_id, city, country, order_id, shipping_cost_currency_code, shipping_cost_nanos, shipping_cost_units, state, street_address, zip_code)\nVALUES (@p7, @p8, @p9, @p10, @p11, @p12, @p13, @p14, @p15, @p16);",
}


@dataclass
class Session:
    pid: int
    usename: str
    application_name: str
    client_addr: str | None
    backend_start: float
    state: str
    query: str
    query_start: float
    xact_start: float | None = None
    #: table -> lock mode this session holds (granted)
    holds: dict[str, str] = field(default_factory=dict)
    #: (table, mode) this session waits for
    waits: tuple[str, str] | None = None
    #: who owns the connection: "accounting:<pod uid>" for the app's pool, "" for an operator
    owner: str = ""


@dataclass
class PostgresServer:
    """One postgres instance's backends; lost when its container restarts."""

    started_at: float = -1.0
    next_pid: int = 60
    sessions: dict[int, Session] = field(default_factory=dict)
    #: rows in the accounting tables
    rows: dict[str, int] = field(default_factory=lambda: {t: 0 for t in TABLES})

    def restart(self, now: float) -> None:
        self.started_at = now
        self.sessions.clear()
        self.next_pid = 60 + int(now) % 40

    def connect(self, user: str, app: str, addr: str | None, now: float, owner: str = "", pid: int | None = None) -> Session:
        if pid is None or pid in self.sessions:
            pid = self.next_pid
            self.next_pid += 1 + (pid * 7) % 13
        s = Session(pid, user, app, addr, now, "idle", "", now, owner=owner)
        self.sessions[pid] = s
        return s

    def blockers_of(self, s: Session) -> list[int]:
        if s.waits is None:
            return []
        table, mode = s.waits
        return sorted(o.pid for o in self.sessions.values() if o.pid != s.pid and table in o.holds and o.holds[table] in CONFLICTS.get(mode, set()) | ({mode} if mode in CONFLICTS.get(o.holds[table], set()) else set()))

    def conflicting_holder(self, table: str, mode: str, pid: int) -> int | None:
        for o in self.sessions.values():
            held = o.holds.get(table)
            if o.pid != pid and held and (held in CONFLICTS.get(mode, set()) or mode in CONFLICTS.get(held, set())):
                return o.pid
        return None

    def locks_held(self) -> bool:
        """Whether any session holds a table lock (the common case, none, needs no lock checks)."""
        return any(s.holds for s in self.sessions.values())

    def terminate(self, pid: int) -> bool:
        s = self.sessions.pop(pid, None)
        return s is not None

    def insert_order(self, s: Session, now: float) -> bool:
        """One accounting transaction: inserts into order, orderitem, shipping. False while it must wait."""
        table = next((t for t in TABLES if self.conflicting_holder(t, "RowExclusiveLock", s.pid) is not None), None)
        if table is not None:
            if s.waits is None:
                s.waits = (table, "RowExclusiveLock")
                s.state, s.query_start, s.xact_start = "active", now, now
                s.query = _INSERTS[table]
            return False
        if s.waits is not None:
            s.waits = None
        s.state, s.query, s.query_start, s.xact_start = "idle", "COMMIT", now, None
        return True


# --------------------------------------------------------------------------------------- psql

_STAT_COLUMNS = ("datid", "datname", "pid", "leader_pid", "usesysid", "usename", "application_name", "client_addr", "client_hostname", "client_port", "backend_start", "xact_start", "query_start", "state_change", "wait_event_type", "wait_event", "state", "backend_xid", "backend_xmin", "query_id", "query", "backend_type")
_LOCK_COLUMNS = ("locktype", "database", "relation", "page", "tuple", "virtualxid", "transactionid", "classid", "objid", "objsubid", "virtualtransaction", "pid", "mode", "granted", "fastpath", "waitstart")


def _ts(t: float | None) -> str:
    if t is None:
        return ""
    s = iso(t)
    return f"{s[:10]} {s[11:19]}.{int((t % 1) * 1e6):06d}+00"


def _stat_row(server: PostgresServer, s: Session, now: float) -> dict[str, str]:
    wait_type, wait = ("Lock", "relation") if s.waits else (("Client", "ClientRead") if s.state.startswith("idle") else ("", ""))
    return {
        "datid": str(DB_OID), "datname": "otel", "pid": str(s.pid), "leader_pid": "", "usesysid": "10" if s.usename == "root" else "16385",
        "usename": s.usename, "application_name": s.application_name, "client_addr": s.client_addr or "", "client_hostname": "",
        "client_port": "-1" if s.client_addr is None else str(40000 + s.pid * 37 % 20000), "backend_start": _ts(s.backend_start),
        "xact_start": _ts(s.xact_start), "query_start": _ts(s.query_start), "state_change": _ts(s.query_start),
        "wait_event_type": wait_type, "wait_event": wait, "state": s.state, "backend_xid": str(740 + s.pid) if s.xact_start is not None else "",
        "backend_xmin": "", "query_id": "", "query": s.query, "backend_type": "client backend",
        "pg_blocking_pids(pid)": "{" + ",".join(map(str, server.blockers_of(s))) + "}",
        "now() - xact_start": _interval(now - s.xact_start) if s.xact_start is not None else "",
        "now() - query_start": _interval(now - s.query_start),
    }


def _interval(sec: float) -> str:
    sec = max(sec, 0.0)
    h, rem = divmod(sec, 3600)
    m, s = divmod(rem, 60)
    return f"{int(h):02d}:{int(m):02d}:{s:09.6f}"


def _lock_rows(server: PostgresServer) -> list[dict[str, str]]:
    rows = []
    for s in sorted(server.sessions.values(), key=lambda x: x.pid):
        base = {"locktype": "relation", "database": str(DB_OID), "page": "", "tuple": "", "virtualxid": "", "transactionid": "", "classid": "", "objid": "", "objsubid": "", "virtualtransaction": f"{3 + s.pid % 5}/{100 + s.pid}", "pid": str(s.pid), "fastpath": "f", "waitstart": ""}
        for table, mode in sorted(s.holds.items()):
            rows.append({**base, "relation": str(TABLES.get(table, 0)), "relation::regclass": f'"{table}"' if table == "order" else table, "mode": mode, "granted": "t"})
        if s.waits:
            table, mode = s.waits
            rows.append({**base, "relation": str(TABLES.get(table, 0)), "relation::regclass": f'"{table}"' if table == "order" else table, "mode": mode, "granted": "f", "waitstart": _ts(s.query_start)})
        if s.xact_start is not None:
            rows.append({**base, "locktype": "virtualxid", "relation": "", "relation::regclass": "", "virtualxid": f"{3 + s.pid % 5}/{100 + s.pid}", "mode": "ExclusiveLock", "granted": "t", "fastpath": "t"})
    return rows


def _align(cols: list[str], rows: list[list[str]]) -> str:
    widths = [max([len(c)] + [max((len(x) for x in r[i].split("\n")), default=0) for r in rows]) for i, c in enumerate(cols)]
    head = "|".join(f" {c.center(widths[i])} " for i, c in enumerate(cols)).rstrip()
    sep = "+".join("-" * (w + 2) for w in widths)
    lines = [head, sep]
    for r in rows:
        cells = [r[i].split("\n")[0] + ("+" if "\n" in r[i] else "") for i in range(len(cols))]
        lines.append("|".join(f" {cells[i].ljust(widths[i]) if not cells[i].lstrip('-').isdigit() else cells[i].rjust(widths[i])} " for i in range(len(cols))).rstrip())
    n = len(rows)
    lines.append(f"({n} row{'s' if n != 1 else ''})")
    return "\n".join(lines) + "\n\n"


_COND = re.compile(r"^\s*([\w.()\s\-:]+?)\s*(=|<>|!=|>|<)\s*('([^']*)'|[\w.()\-]+)\s*$")


def _where(rows: list[dict[str, str]], clause: str, own_pid: int) -> list[dict[str, str]] | str:
    clause = clause.strip().rstrip(";")
    if not clause:
        return rows
    parts = re.split(r"\s+and\s+", clause, flags=re.I)
    out = rows
    for part in parts:
        p = part.strip().strip("()")
        neg = False
        if p.lower().startswith("not "):
            neg, p = True, p[4:].strip()
        if re.fullmatch(r"granted", p, re.I):
            out = [r for r in out if (r.get("granted") == "t") != neg]
            continue
        m = re.match(r"cardinality\(pg_blocking_pids\(pid\)\)\s*>\s*0", p, re.I)
        if m:
            out = [r for r in out if r.get("pg_blocking_pids(pid)", "{}") != "{}"]
            continue
        m = _COND.match(p)
        if not m:
            return f'ERROR:  syntax error at or near "{p.split()[0] if p.split() else p}"'
        col, op, _, lit = m.group(1).strip().lower(), m.group(2), m.group(3), m.group(4)
        val = lit if lit is not None else m.group(3)
        if val.lower() == "pg_backend_pid()":
            val = str(own_pid)
        if val.lower() in ("true", "false"):
            val = "t" if val.lower() == "true" else "f"
        if col not in (rows[0] if rows else {}) and col not in _STAT_COLUMNS and col not in _LOCK_COLUMNS:
            return f'ERROR:  column "{col}" does not exist'

        def test(r: dict[str, str], col: str = col, op: str = op, val: str = val) -> bool:
            have = r.get(col, "")
            if op == "=":
                return have == val
            if op in ("<>", "!="):
                return have != val
            try:
                return float(have or 0) > float(val) if op == ">" else float(have or 0) < float(val)
            except ValueError:
                return False

        out = [r for r in out if test(r)]
    return out


def _select(server: PostgresServer, sql: str, own_pid: int, now: float) -> str:
    q = " ".join(sql.strip().rstrip(";").split())
    low = q.lower()
    m = re.match(r"select\s+(pg_terminate_backend|pg_cancel_backend)\s*\(\s*(\d+)\s*\)$", low)
    if m:
        fn, pid = m.group(1), int(m.group(2))
        if pid not in server.sessions and pid != own_pid:
            return f"WARNING:  PID {pid} is not a PostgreSQL backend process\n" + _align([fn], [["f"]])
        if fn == "pg_terminate_backend":
            server.terminate(pid)
        # pg_cancel_backend cancels the running query only: an idle transaction keeps its locks
        return _align([fn], [["t"]])
    m = re.match(r"select\s+(pg_terminate_backend|pg_cancel_backend)\s*\(\s*pid\s*\)\s+from\s+pg_stat_activity(?:\s+where\s+(.+))?$", q, re.I)
    if m:
        fn = m.group(1).lower()
        rows = [_stat_row(server, s, now) for s in sorted(server.sessions.values(), key=lambda x: x.pid)]
        got = _where(rows, m.group(2) or "", own_pid)
        if isinstance(got, str):
            return got + "\n"
        out = []
        for r in got:
            pid = int(r["pid"])
            if pid == own_pid:
                return "FATAL:  terminating connection due to administrator command\nserver closed the connection unexpectedly\n\tThis probably means the server terminated abnormally\n\tbefore or while processing the request.\n" if fn == "pg_terminate_backend" else _align([fn], [["t"]])
            if fn == "pg_terminate_backend":
                server.terminate(pid)
            out.append(["t"])
        return _align([fn], out)
    m = re.match(r"select\s+count\(\*\)\s+from\s+(\"?\w+\"?)$", low)
    if m:
        table = m.group(1).strip('"')
        if table not in TABLES:
            return f'ERROR:  relation "{table}" does not exist\nLINE 1: {q}\n'
        return _align(["count"], [[str(server.rows[table])]])
    m = re.match(r"select\s+(.+?)\s+from\s+(pg_stat_activity|pg_locks)(?:\s+where\s+(.+?))?(?:\s+order\s+by\s+[\w\s,]+)?$", q, re.I)
    if not m:
        word = q.split()[0] if q.split() else q
        if low.startswith("select version()"):
            return _align(["version"], [["PostgreSQL 17.6 (Debian 17.6-1.pgdg120+1) on x86_64-pc-linux-gnu, compiled by gcc (Debian 12.2.0-14) 12.2.0, 64-bit"]])
        if low.startswith(("select", "with")):
            rel_m = re.search(r"from\s+([\w.\"]+)", low)
            rel_name = rel_m.group(1).strip('"') if rel_m else "pg_catalog"
            return f'ERROR:  relation "{rel_name}" does not exist\n'
        return f'ERROR:  syntax error at or near "{word}"\nLINE 1: {q}\n        ^\n'
    cols_text, rel, where = m.group(1), m.group(2).lower(), m.group(3) or ""
    if rel == "pg_stat_activity":
        rows = [_stat_row(server, s, now) for s in sorted(server.sessions.values(), key=lambda x: x.pid)]
        default = list(_STAT_COLUMNS)
    else:
        rows = _lock_rows(server)
        default = list(_LOCK_COLUMNS)
    got = _where(rows, where, own_pid)
    if isinstance(got, str):
        return got + "\n"
    known = set(default) | ({"pg_blocking_pids(pid)", "now() - xact_start", "now() - query_start"} if rel == "pg_stat_activity" else {"relation::regclass"})
    labels: list[str] = []
    keys: list[str] = []
    for raw in [x.strip() for x in cols_text.split(",")]:
        if raw == "*":
            labels += default
            keys += default
            continue
        alias = re.match(r"(.+?)\s+as\s+(\w+)$", raw, re.I)
        expr = (alias.group(1) if alias else raw).strip()
        key = " ".join(expr.lower().split())
        if key not in known:
            return f'ERROR:  column "{key}" does not exist\nLINE 1: {q}\n'
        keys.append(key)
        labels.append(alias.group(2) if alias else {"pg_blocking_pids(pid)": "pg_blocking_pids", "relation::regclass": "relation"}.get(key, "?column?" if " - " in key else key))
    cols = labels
    table = [[r.get(k, "") for k in keys] for r in got]
    return _align(cols, table)


def psql(server: PostgresServer | None, argv: list[str], stdin: str | None, now: float, env: dict[str, str]) -> ExecResult:
    """``psql [-U user] [-d db] -c SQL`` (or SQL on stdin) against the local server."""
    if server is None or server.started_at < 0:
        return ExecResult('psql: error: connection to server on socket "/var/run/postgresql/.s.PGSQL.5432" failed: No such file or directory\n\tIs the server running locally and accepting connections on that socket?\n', 2)
    user = env.get("POSTGRES_USER", "postgres")
    db = None
    sql: list[str] = []
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("-U", "--username") and i + 1 < len(argv):
            user, i = argv[i + 1], i + 2
            continue
        if a in ("-d", "--dbname") and i + 1 < len(argv):
            db, i = argv[i + 1], i + 2
            continue
        if a in ("-c", "--command") and i + 1 < len(argv):
            sql.append(argv[i + 1])
            i += 2
            continue
        if a.startswith("-U") and len(a) > 2:
            user = a[2:]
        elif a.startswith("-d") and len(a) > 2:
            db = a[2:]
        elif a in ("-h", "-p") and i + 1 < len(argv):
            i += 1
        elif not a.startswith("-") and db is None:
            db = a
        i += 1
    db = db or user
    if user not in ("root", "otelu", "postgres"):
        return ExecResult(f'psql: error: connection to server on socket "/var/run/postgresql/.s.PGSQL.5432" failed: FATAL:  role "{user}" does not exist\n', 2)
    if user == "postgres":
        return ExecResult('psql: error: connection to server on socket "/var/run/postgresql/.s.PGSQL.5432" failed: FATAL:  role "postgres" does not exist\n', 2)
    if db not in ("otel", "postgres", "template1"):
        return ExecResult(f'psql: error: connection to server on socket "/var/run/postgresql/.s.PGSQL.5432" failed: FATAL:  database "{db}" does not exist\n', 2)
    if not sql and stdin:
        sql = [s for s in stdin.split(";") if s.strip()]
    if not sql:
        return ExecResult(f"psql (17.6 (Debian 17.6-1.pgdg120+1))\nType \"help\" for help.\n\n{db}=# \n", 0)
    me = server.connect(user, "psql", None, now)
    me.state, me.query_start = "active", now
    out = []
    code = 0
    try:
        for chunk in sql:
            for stmt in [s for s in chunk.split(";") if s.strip()]:
                me.query = stmt.strip() + ";"
                st = stmt.strip()
                if st in ("\\dt", "\\d"):
                    out.append(" List of relations\n" + _align(["Schema", "Name", "Type", "Owner"], [["public", t, "table", "root"] for t in sorted(TABLES)]).replace("List", "List"))
                    continue
                if st.lower() in ("begin", "commit", "rollback", "end"):
                    out.append(st.upper() + "\n")
                    continue
                text = _select(server, st, me.pid, now)
                if text.startswith("ERROR"):
                    code = 1
                out.append(text)
    finally:
        server.sessions.pop(me.pid, None)
    return ExecResult("".join(out), code)
