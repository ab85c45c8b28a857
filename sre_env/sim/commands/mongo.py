"""``mongo`` / ``mongosh --eval`` inside the MongoDB containers.

Supports the probes an engineer actually types (ping, serverStatus, stats,
listing databases and collections, counts and finds on the application's
collections, ``rs.status()``), in the legacy shell's or mongosh's output
style. Reads that touch collection data fail with WiredTiger's EIO error with
a deterministic probability driven by the data disk's ``bad_read_fraction``,
which is how a latent-sector fault surfaces to someone poking at the database.
"""

from __future__ import annotations

import re
from typing import Any

from sre_env.backend import ExecResult
from sre_env.sim.commands.mongo_users import (
    NOT_HANDLED,
    authenticate,
    check_statement,
    user_statement,
)
from sre_env.sim.commands.net import dial, resolve
from sre_env.sim.commands.views import ContainerView
from sre_env.sim.kernel.hashing import stable_hash
from sre_env.sim.kernel.hosts import Disk

__all__ = ["mongo_shell", "data_disk"]


class _Raw:
    """A value printed verbatim (ObjectId, ISODate, NumberLong) in both shells."""

    def __init__(self, legacy: str, modern: str | None = None) -> None:
        self.legacy = legacy
        self.modern = modern or legacy


def _oid(*seed: Any) -> _Raw:
    h = f"{stable_hash(*seed):08x}{stable_hash('o', *seed):08x}{stable_hash('p', *seed):08x}"
    return _Raw(f'ObjectId("{h}")', f"ObjectId('{h}')")


_APP_DATA = {
    "geo": ("geo-db", {"geo": 80}),
    "rate": ("rate-db", {"inventory": 80}),
    "profile": ("profile-db", {"hotels": 80}),
    "recommendation": ("recommendation-db", {"recommendation": 80}),
    "reservation": ("reservation-db", {"reservation": 7, "number": 80}),
    "user": ("user-db", {"user": 501}),
}


def _app(view: ContainerView) -> tuple[str, dict[str, int]]:
    name = (view.component.name if view.component else "") or str((view.pod.get("metadata") or {}).get("name", ""))
    for key in ("recommendation", "reservation", "profile", "rate", "user", "geo"):
        if key in name:
            return _APP_DATA[key]
    return ("test", {})


def _sample(coll: str, i: int) -> dict[str, Any]:
    hid = str(i + 1)
    if coll == "geo":
        return {"_id": _oid(coll, i), "hotelId": hid, "lat": round(37.7835 + i * 0.0013, 4), "lon": round(-122.41 + i * 0.0011, 4)}
    if coll == "inventory":
        return {"_id": _oid(coll, i), "hotelId": hid, "code": "RACK", "inDate": "2015-04-09", "outDate": "2015-04-10",
                "roomType": {"bookableRate": 109.0, "code": "KNG", "roomDescription": "King sized bed", "totalRate": 109.0, "totalRateInclusive": 123.17}}
    if coll == "hotels":
        return {"_id": _oid(coll, i), "id": hid, "name": "Clift Hotel" if i == 0 else f"Hotel {hid}", "phoneNumber": "(415) 775-4700",
                "description": "A 6-minute walk from Union Square and 4 minutes from a Muni Metro station.",
                "address": {"streetNumber": "495", "streetName": "Geary St", "city": "San Francisco", "state": "CA", "country": "United States", "postalCode": "94102", "lat": 37.7867, "lon": -122.4112}}
    if coll == "recommendation":
        return {"_id": _oid(coll, i), "hotelId": hid, "lat": 37.7867, "lon": -122.4112, "rate": 109.0, "price": 150.0}
    if coll == "reservation":
        return {"_id": _oid(coll, i), "hotelId": "4", "customerName": "Alice", "inDate": "2015-04-09", "outDate": "2015-04-10", "number": 1}
    if coll == "number":
        return {"_id": _oid(coll, i), "hotelId": hid, "numberOfRoom": 200}
    if coll == "user":
        return {"_id": _oid(coll, i), "username": f"Cornell_{i}", "password": f"{stable_hash('pw', i):08x}" * 8}
    return {"_id": _oid(coll, i)}


# --------------------------------------------------------------------------- rendering

def _legacy(v: Any, indent: str = "") -> str:
    if isinstance(v, _Raw):
        return v.legacy
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
    if isinstance(v, str):
        return '"' + v.replace('"', '\\"') + '"'
    if isinstance(v, list):
        if not v:
            return "[ ]"
        inner = indent + "\t"
        return "[\n" + ",\n".join(inner + _legacy(x, inner) for x in v) + "\n" + indent + "]"
    if isinstance(v, dict):
        one = "{ " + ", ".join(f'"{k}" : {_legacy(x)}' for k, x in v.items()) + " }"
        if len(one) <= 80 and "\n" not in one:
            return one
        inner = indent + "\t"
        return "{\n" + ",\n".join(f'{inner}"{k}" : {_legacy(x, inner)}' for k, x in v.items()) + "\n" + indent + "}"
    return str(v)


def _modern(v: Any, indent: str = "") -> str:
    if isinstance(v, _Raw):
        return v.modern
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
    if isinstance(v, str):
        return "'" + v.replace("'", "\\'") + "'"
    key = lambda k: k if re.fullmatch(r"[A-Za-z_$][\w$]*", k) else f"'{k}'"  # noqa: E731
    if isinstance(v, list):
        one = "[ " + ", ".join(_modern(x) for x in v) + " ]" if v else "[]"
        if len(one) <= 72 and "\n" not in one:
            return one
        inner = indent + "  "
        return "[\n" + ",\n".join(inner + _modern(x, inner) for x in v) + "\n" + indent + "]"
    if isinstance(v, dict):
        one = "{ " + ", ".join(f"{key(k)}: {_modern(x)}" for k, x in v.items()) + " }" if v else "{}"
        if len(one) <= 72 and "\n" not in one:
            return one
        inner = indent + "  "
        return "{\n" + ",\n".join(f"{inner}{key(k)}: {_modern(x, inner)}" for k, x in v.items()) + "\n" + indent + "}"
    return str(v)


# --------------------------------------------------------------------------- evaluation

class _ShellError(Exception):
    def __init__(self, legacy: str, modern: str) -> None:
        super().__init__(modern)
        self.legacy = legacy
        self.modern = modern


def data_disk(view: ContainerView) -> Disk | None:
    """The node disk behind this container's data volume (from the view; else a local-PV disk, failing ones first)."""
    if getattr(view, "data_disk", None) is not None:
        return view.data_disk
    uses = bool(view.component and view.component.volume_claim) or any(
        isinstance(v, dict) and "persistentVolumeClaim" in v for v in (view.pod.get("spec") or {}).get("volumes") or ()
    )
    if not uses:
        return None
    cands = [d for d in view.node.disks[1:] if d.mountpoint != "/"]
    if not cands:
        return view.node.disks[0] if view.node.disks else None
    bad = [d for d in cands if d.bad_read_fraction > 0]
    return (bad or cands)[0]


def _io_error(view: ContainerView, script: str, coll: str) -> None:
    d = data_disk(view)
    frac = view.data_error_fraction if getattr(view, "data_disk", None) is not None else (d.bad_read_fraction if d else 0.0)
    if d is None or frac <= 0:
        return
    p = min(0.9, frac * 10.0)
    if (stable_hash(script, int(view.now // 5), view.variant) % 10_000) / 10_000.0 >= p:
        return
    data_path = view.component.data_path if view.component else "/data/db"
    ident = f"collection-{2 + stable_hash(coll) % 8 * 2}--4123771832473512941"
    off = 4096 * (stable_hash(script, view.now) % 9000)
    ts = 1772442000 + int(view.now)
    wt = (
        f"WiredTiger error (5) [{ts}:{stable_hash(script) % 999999}][1:0x7f3c2a1fe700], file:{ident}.wt, WT_CURSOR.next: "
        f"__posix_file_read, 431: {data_path}/{ident}.wt: handle-read: pread: failed to read 4096 bytes at offset {off}: Input/output error"
    )
    msg = f"Encountered an unexpected error: {wt}"
    legacy = (
        "uncaught exception: Error: error: {\n\t\"ok\" : 0,\n\t\"errmsg\" : \"" + msg.replace('"', '\\"') + "\",\n\t\"code\" : 8,\n\t\"codeName\" : \"UnknownError\"\n} :\n"
        "_getErrorWithCode@src/mongo/shell/utils.js:25:13\nDBCommandCursor@src/mongo/shell/query.js:696:15\n"
        "DBQuery.prototype._exec@src/mongo/shell/query.js:111:28\nDBQuery.prototype.hasNext@src/mongo/shell/query.js:287:5\n@(shell eval):1:1\n"
    )
    raise _ShellError(legacy, f"MongoServerError: {msg}\n")


def _server_status(view: ContainerView, version: str) -> dict[str, Any]:
    up = int(view.uptime_s)
    h = stable_hash((view.pod.get("metadata") or {}).get("name"))
    return {
        "host": str((view.pod.get("metadata") or {}).get("name", "")), "version": version, "process": "mongod", "pid": _Raw("NumberLong(1)", "Long('1')"),
        "uptime": up, "uptimeMillis": _Raw(f"NumberLong({up * 1000})", f"Long('{up * 1000}')"), "uptimeEstimate": _Raw(f"NumberLong({up})", f"Long('{up}')"),
        "localTime": _Raw(f'ISODate("2026-03-02T{9 + int(view.now) // 3600 % 24:02d}:{int(view.now) // 60 % 60:02d}:{int(view.now) % 60:02d}Z")'),
        "connections": {"current": 9 + h % 6, "available": 838851, "totalCreated": 40 + h % 200, "active": 2},
        "storageEngine": {"name": "wiredTiger", "supportsCommittedReads": True, "persistent": True},
        "ok": 1,
    }


def _eval_one(view: ContainerView, stmt: str, state: dict[str, Any], version: str) -> Any:
    s = stmt.strip().rstrip(";").strip()
    c = re.sub(r"\s+", "", s)
    db = state["db"]
    app_db, colls = _app(view)
    if not c:
        return None
    m = re.match(r"^db\.getSiblingDB\(['\"]([^'\"]+)['\"]\)(.*)$", c)
    if m:
        state["db"] = m.group(1)
        return _eval_one(view, "db" + m.group(2), state, version) if m.group(2) else m.group(1)
    m = re.match(r"^use([\w.-]+)$", c) if s.startswith("use ") else None
    if m:
        state["db"] = m.group(1)
        return _Raw(f"switched to db {m.group(1)}", f"switched to db {m.group(1)}")
    if c in ("quit()", "exit", "exit()", "quit"):
        state["quit"] = True
        return None
    users = getattr(view, "mongo_users", None) if state.get("local", True) else None
    check_statement(users, state, c)
    handled = user_statement(users, state, s, c, state.get("on_change") or (lambda: None))
    if handled is not NOT_HANDLED:
        return handled
    if re.fullmatch(r"[\d+\-*/().]+", c):
        try:
            v = eval(c, {"__builtins__": {}}, {})  # noqa: S307 - digits and operators only
            return v
        except Exception:  # noqa: BLE001
            raise _ShellError("uncaught exception: SyntaxError: expected expression, got end of script :\n@(shell eval):1:1\n", "SyntaxError: Unexpected token\n")
    m = re.match(r"^(print|printjson|JSON\.stringify)\((.*)\)$", c)
    if m:
        inner = _eval_one(view, s[s.index("(") + 1 : s.rindex(")")], state, version)
        state.setdefault("printed", []).append(inner)
        return None
    if c in ("showdbs", "showdatabases", "db.getMongo().getDBNames()", "db.adminCommand({listDatabases:1})", "db.adminCommand('listDatabases')", 'db.adminCommand("listDatabases")'):
        names = ["admin", "config", "local"] + ([app_db] if app_db != "test" else [])
        if c.startswith("show"):
            return _Raw("\n".join(f"{n:<14}{0.000 if n != app_db else 0.001:.3f}GB" for n in sorted(names)), "\n".join(f"{n:<18}{'40.00 KiB' if n != app_db else '212.00 KiB'}" for n in sorted(names)))
        if "getDBNames" in c:
            return sorted(names)
        return {"databases": [{"name": n, "sizeOnDisk": 40960 if n != app_db else 217088, "empty": False} for n in sorted(names)], "totalSize": 339968, "ok": 1}
    if c in ("showcollections", "showtables", "db.getCollectionNames()"):
        names = sorted(colls) if db == app_db else (["system.version"] if db == "admin" else ["startup_log"] if db == "local" else [])
        return _Raw("\n".join(names), "\n".join(names)) if c.startswith("show") else names
    if re.fullmatch(r"db\.(adminCommand|runCommand)\((\{['\"]?ping['\"]?:1\}|['\"]ping['\"])\)(\.ok)?", c):
        return 1 if c.endswith(".ok") else {"ok": 1}
    if c in ("db.version()", "db.serverBuildInfo().version", "version()"):
        return version
    if c == "db.getName()" or c == "db":
        return db
    m = re.fullmatch(r"db\.serverStatus\(\)((?:\.\w+)*)", c)
    if m:
        v: Any = _server_status(view, version)
        for part in filter(None, m.group(1).split(".")):
            v = v.get(part) if isinstance(v, dict) else None
            if v is None:
                return _Raw("undefined")
        return v
    if c in ("db.hello()", "db.isMaster()", "db.adminCommand({hello:1})", "db.adminCommand({isMaster:1})", "rs.isMaster()"):
        return {"ismaster": True, "topologyVersion": {"processId": _oid("p", view.uptime_s), "counter": _Raw("NumberLong(0)", "Long('0')")}, "maxBsonObjectSize": 16777216, "maxMessageSizeBytes": 48000000, "maxWriteBatchSize": 100000, "localTime": _Raw('ISODate("2026-03-02T09:00:00Z")'), "logicalSessionTimeoutMinutes": 30, "minWireVersion": 0, "maxWireVersion": 9, "readOnly": False, "ok": 1}
    if c in ("rs.status()", "db.adminCommand({replSetGetStatus:1})"):
        if state.get("modern"):
            raise _ShellError("", "MongoServerError: not running with --replSet\n")
        return dict(_NO_REPL)
    if c == "rs.conf()":
        raise _ShellError(
            "uncaught exception: Error: Could not retrieve replica set config: " + _legacy(_NO_REPL, "") + " :\nrs.conf@src/mongo/shell/utils.js:1713:11\n@(shell eval):1:1\n",
            "MongoServerError: not running with --replSet\n",
        )
    if c in ("db.currentOp()", "db.adminCommand({currentOp:1})"):
        return {"inprog": [{"type": "op", "host": str((view.pod.get("metadata") or {}).get("name", "")) + ":27017", "desc": "conn12", "active": True, "op": "command", "ns": "admin.$cmd.aggregate", "command": {"currentOp": 1}}], "ok": 1}
    if c in ("db.stats()", "db.stats().ok"):
        if db == app_db:
            _io_error(view, c, next(iter(colls), "x"))
        n = sum(colls.values()) if db == app_db else 0
        doc = {"db": db, "collections": len(colls) if db == app_db else 0, "views": 0, "objects": n, "avgObjSize": 212.4 if n else 0, "dataSize": n * 212, "storageSize": 36864 if n else 0, "indexes": len(colls) if db == app_db else 0, "indexSize": 36864 if n else 0, "totalSize": 73728 if n else 0, "scaleFactor": 1, "fsUsedSize": 3221225472, "fsTotalSize": 1968811048960, "ok": 1}
        return 1 if c.endswith(".ok") else doc
    m = re.fullmatch(r"db\.(?:getCollection\(['\"]([\w.-]+)['\"]\)|([A-Za-z_][\w-]*))\.(\w+)\((.*?)\)((?:\.\w+\(.*?\))*)", c)
    if m:
        coll = m.group(1) or m.group(2)
        op = m.group(3)
        chain = m.group(5) or ""
        count = colls.get(coll, 0) if db == app_db else 0
        reads = {"find", "findOne", "count", "countDocuments", "aggregate", "distinct", "validate", "stats", "dataSize"}
        if op in reads and count:
            _io_error(view, c, coll)
        if op in ("count", "countDocuments", "estimatedDocumentCount", "dataSize"):
            return count if op != "dataSize" else count * 212
        if op == "findOne":
            return _sample(coll, 0) if count else None
        if op == "find" or op == "aggregate":
            lim = re.search(r"\.limit\((\d+)\)", chain)
            k = min(count, int(lim.group(1)) if lim else 20)
            if ".count()" in chain:
                return count
            if ".toArray()" in chain or op == "aggregate":
                return [_sample(coll, i) for i in range(k)]
            docs = [_sample(coll, i) for i in range(k)]
            state["cursor"] = True
            return _Raw("\n".join(_legacy(d).replace("\n\t", " ").replace("\n", " ") for d in docs) + ("\nType \"it\" for more" if count > 20 and not lim else ""),
                        _modern(docs))
        if op == "getIndexes":
            return [{"v": 2, "key": {"_id": 1}, "name": "_id_"}]
        if op == "stats":
            return {"ns": f"{db}.{coll}", "size": count * 212, "count": count, "avgObjSize": 212, "storageSize": 36864, "nindexes": 1, "ok": 1}
        if op == "distinct":
            return [str(i + 1) for i in range(min(count, 20))]
        if op == "validate":
            return {"ns": f"{db}.{coll}", "nInvalidDocuments": 0, "nrecords": count, "nIndexes": 1, "valid": True, "warnings": [], "errors": [], "ok": 1}
        if op in ("insert", "insertOne", "updateOne", "update", "deleteOne", "remove", "drop", "createIndex"):
            return {"acknowledged": True, "insertedId": _oid("new", view.now)} if op.startswith("insert") else {"acknowledged": True}
        raise _ShellError(f"uncaught exception: TypeError: db.{coll}.{op} is not a function :\n@(shell eval):1:1\n", f"TypeError: db.{coll}.{op} is not a function\n")
    m = re.match(r"^(db\.\w+)\(", c)
    if m:
        raise _ShellError(f"uncaught exception: TypeError: {m.group(1)} is not a function :\n@(shell eval):1:1\n", f"TypeError: {m.group(1)} is not a function\n")
    ident = re.match(r"^[A-Za-z_$][\w$]*", c)
    word = ident.group(0) if ident else c[:20]
    raise _ShellError(f"uncaught exception: ReferenceError: {word} is not defined :\n@(shell eval):1:1\n", f"ReferenceError: {word} is not defined\n")


def _unquote(v: str) -> str:
    from urllib.parse import unquote

    return unquote(v)


_NO_REPL: dict[str, Any] = {"ok": 0, "errmsg": "not running with --replSet", "code": 76, "codeName": "NoReplicationEnabled"}


def _split_statements(script: str) -> list[str]:
    out, cur, depth, quote = [], [], 0, ""
    for ch in script:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        if ch in ";\n" and depth <= 0:
            out.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    out.append("".join(cur))
    return [s for s in out if s.strip()]


def mongo_shell(view: ContainerView, argv: list[str], stdin: str | None = None) -> ExecResult:
    tool = argv[0]
    modern = tool == "mongosh"
    tag = str(view.container.get("image", "mongo")).rsplit(":", 1)[-1] if ":" in str(view.container.get("image", "")) else "7.0.12"
    version = tag if tag[:1].isdigit() else "7.0.12"
    if version.count(".") == 1:
        version += ".0"
    quiet = False
    script: str | None = None
    host, port, db = "127.0.0.1", 27017, "test"
    user: str | None = None
    password = ""
    auth_db: str | None = None
    db_given = False
    i = 1
    while i < len(argv):
        a = argv[i]
        i += 1
        if a == "--eval":
            if i >= len(argv):
                return ExecResult("Error parsing command line: the required argument for option '--eval' is missing\ntry 'mongo --help' for more information\n" if not modern else "MongoshInvalidInputError: [COMMON-10001] Missing required argument to --eval\n", 2 if not modern else 1)
            script = (script + ";" if script else "") + argv[i]
            i += 1
        elif a.startswith("--eval="):
            script = a.split("=", 1)[1]
        elif a == "--quiet":
            quiet = True
        elif a in ("--host", "--port", "-u", "--username", "-p", "--password", "--authenticationDatabase"):
            val = argv[i] if i < len(argv) else ""
            i += 1
            if a == "--host":
                if ":" in val:
                    host, p = val.rsplit(":", 1)
                    port = int(p) if p.isdigit() else port
                else:
                    host = val
            elif a == "--port" and val.isdigit():
                port = int(val)
            elif a in ("-u", "--username"):
                user = val
            elif a in ("-p", "--password"):
                password = val
            elif a == "--authenticationDatabase":
                auth_db = val
        elif a in ("--version", "-version"):
            return ExecResult(f"MongoDB shell version v{version}\nBuild Info: {{\n    \"version\": \"{version}\",\n    \"gitVersion\": \"72e66213c2c3eab37d9358d5e78ad7f5c1d0d0d7\"\n}}\n" if not modern else "2.2.10\n", 0)
        elif a in ("--nodb", "--norc", "--shell"):
            continue
        elif a.startswith("mongodb://"):
            rest = a[len("mongodb://"):]
            hostpart, _, path = rest.partition("/")
            if "@" in hostpart:
                creds = hostpart.rsplit("@", 1)[0]
                user, _, password = creds.partition(":")
                user, password = _unquote(user), _unquote(password)
            m_src = re.search(r"[?&]authSource=([^&]+)", path)
            if m_src:
                auth_db = m_src.group(1)
            hostpart = hostpart.split("@")[-1].split(",")[0]
            if ":" in hostpart:
                host, p = hostpart.rsplit(":", 1)
                port = int(p) if p.isdigit() else port
            elif hostpart:
                host = hostpart
            if path.split("?")[0]:
                db = path.split("?")[0]
                db_given = True
        elif a.startswith("-"):
            return ExecResult(f"Error parsing command line: unrecognised option '{a}'\ntry 'mongo --help' for more information\n" if not modern else f"MongoshInvalidInputError: [COMMON-10001] Error parsing command line: unrecognized option: {a}\n", 2 if not modern else 1)
        else:
            if ":" in a or "/" in a:
                hp, _, d = a.partition("/")
                if ":" in hp:
                    host, p = hp.rsplit(":", 1)
                    port = int(p) if p.isdigit() else port
                if d:
                    db = d
                    db_given = True
            else:
                db = a
                db_given = True
    uri = f"mongodb://{host}:{port}/{db if db != 'test' else ''}?compressors=disabled&gssapiServiceName=mongodb" if not modern else f"mongodb://{host}:{port}/{db if db != 'test' else ''}?directConnection=true&serverSelectionTimeoutMS=2000&appName=mongosh+2.2.10"
    sid = f"{stable_hash(view.now, 1):08x}-{stable_hash(view.now, 2) % 0xFFFF:04x}-4{stable_hash(view.now, 3) % 0xFFF:03x}-a{stable_hash(view.now, 4) % 0xFFF:03x}-{stable_hash(view.now, 5):08x}{stable_hash(view.now, 6) % 0xFFFF:04x}"
    if modern:
        banner = "" if quiet else f"Current Mongosh Log ID:\t{stable_hash(view.now, 'log'):08x}{stable_hash(view.now, 'l2'):08x}{stable_hash('l3', view.now):08x}\nConnecting to:\t\t{uri}\n"
    else:
        banner = "" if quiet else f"MongoDB shell version v{version}\nconnecting to: {uri}\n"
    ip = resolve(view, host)
    err = "nxdomain" if ip is None else dial(view, host, ip, port)
    if err is not None:
        if modern:
            what = f"getaddrinfo ENOTFOUND {host}" if err == "nxdomain" else (f"connect ECONNREFUSED {ip}:{port}" if err == "refused" else "Server selection timed out after 2000 ms")
            return ExecResult(banner + f"{'MongoNetworkError' if err != 'timeout' else 'MongoServerSelectionError'}: {what}\n", 1)
        cause = {"refused": "Connection refused", "nxdomain": f"Could not find address for {host}:{port}: SocketException: Host not found (authoritative)", "unreachable": "No route to host"}.get(err, "Socket operation timed out")
        return ExecResult(
            banner + f"Error: couldn't connect to server {host}:{port}, connection attempt failed: SocketException: Error connecting to {host}:{port} :: caused by :: {cause} :\nconnect@src/mongo/shell/mongo.js:374:17\n@(connect):2:6\nexception: connect failed\nexiting with code 1\n",
            1,
        )
    local = host in ("127.0.0.1", "localhost", "::1", "0.0.0.0") or host == str((view.pod.get("metadata") or {}).get("name", ""))
    users = getattr(view, "mongo_users", None) if local else None
    logged_in = None
    if users is not None and user:
        logged_in = authenticate(users, user, password, auth_db or (db if db_given else "admin"))
        if logged_in is None:
            if modern:
                return ExecResult(banner + "MongoServerError: Authentication failed.\n", 1)
            return ExecResult(banner + "Error: Authentication failed. :\nconnect@src/mongo/shell/mongo.js:374:17\n@(connect):2:6\nexception: connect failed\nexiting with code 1\n", 1)
    if modern and not quiet:
        banner += f"Using MongoDB:\t\t{version}\nUsing Mongosh:\t\t2.2.10\n\nFor mongosh info see: https://docs.mongodb.com/mongodb-shell/\n\n"
    elif not quiet:
        banner += f'Implicit session: session {{ "id" : UUID("{sid}") }}\nMongoDB server version: {version}\n'
    if script is None:
        # an interactive shell has no terminal here: the shell reads EOF and exits
        return ExecResult(banner + ("" if modern else "bye\n"), 0)
    state: dict[str, Any] = {"db": db, "modern": modern, "local": local, "user": logged_in, "on_change": getattr(view, "on_mongo_users_changed", None)}
    out: list[str] = []
    last: Any = None
    try:
        for stmt in _split_statements(script):
            state["printed"] = []
            last = _eval_one(view, stmt, state, version)
            for p in state["printed"]:
                out.append((_modern(p) if modern else _legacy(p)) if not isinstance(p, str) else p)
            if state.get("quit"):
                last = None
                break
    except _ShellError as e:
        return ExecResult(banner + "".join(x + "\n" for x in out) + (e.modern if modern else e.legacy), 1)
    if last is not None:
        out.append(_modern(last) if modern else _legacy(last))
    return ExecResult(banner + "".join(x + "\n" for x in out), 0)
