"""The mongo shell's access-control side: log-in, the user-management helpers, privilege checks.

``mongo admin -u admin -p ... --eval 'db.grantRolesToUser("rate", [{role: "readWrite", db: "rate-db"}])'``
changes the user database on the server's data volume (sre_env.sim.runtime.mongo_auth),
exactly where a real ``mongod`` keeps ``admin.system.users``. Output and errors
follow the legacy 4.4 shell and mongosh.
"""

from __future__ import annotations

import re
from typing import Any

from sre_env.sim.runtime.mongo_auth import MongoUser, UserStore, allows

__all__ = ["NOT_HANDLED", "JsError", "authenticate", "check_statement", "parse_js", "user_statement"]

NOT_HANDLED = object()


class JsError(ValueError):
    pass


# --------------------------------------------------------------------------- JS literals


def parse_js(text: str) -> Any:
    """A JS literal (objects with bare keys, arrays, quoted strings, numbers, booleans, null)."""
    value, i = _value(text, _skip(text, 0))
    if _skip(text, i) != len(text):
        raise JsError(f"unexpected token at {text[i:i + 10]!r}")
    return value


def parse_args(text: str) -> list[Any]:
    """The comma-separated arguments inside a call's parentheses."""
    out: list[Any] = []
    i = _skip(text, 0)
    while i < len(text):
        value, i = _value(text, i)
        out.append(value)
        i = _skip(text, i)
        if i < len(text):
            if text[i] != ",":
                raise JsError(f"missing ) after argument list near {text[i:i + 10]!r}")
            i = _skip(text, i + 1)
    return out


def _skip(t: str, i: int) -> int:
    while i < len(t) and t[i].isspace():
        i += 1
    return i


def _value(t: str, i: int) -> tuple[Any, int]:
    if i >= len(t):
        raise JsError("unexpected end of input")
    ch = t[i]
    if ch in "'\"":
        j = i + 1
        buf = []
        while j < len(t) and t[j] != ch:
            if t[j] == "\\" and j + 1 < len(t):
                j += 1
            buf.append(t[j])
            j += 1
        if j >= len(t):
            raise JsError("unterminated string literal")
        return "".join(buf), j + 1
    if ch == "{":
        obj: dict[str, Any] = {}
        i = _skip(t, i + 1)
        while i < len(t) and t[i] != "}":
            if t[i] in "'\"":
                key, i = _value(t, i)
            else:
                m = re.match(r"[A-Za-z_$][\w$]*", t[i:])
                if not m:
                    raise JsError(f"invalid property id near {t[i:i + 10]!r}")
                key, i = m.group(0), i + m.end()
            i = _skip(t, i)
            if i >= len(t) or t[i] != ":":
                raise JsError("missing : after property id")
            val, i = _value(t, _skip(t, i + 1))
            obj[str(key)] = val
            i = _skip(t, i)
            if i < len(t) and t[i] == ",":
                i = _skip(t, i + 1)
        if i >= len(t):
            raise JsError("missing } after property list")
        return obj, i + 1
    if ch == "[":
        arr: list[Any] = []
        i = _skip(t, i + 1)
        while i < len(t) and t[i] != "]":
            val, i = _value(t, i)
            arr.append(val)
            i = _skip(t, i)
            if i < len(t) and t[i] == ",":
                i = _skip(t, i + 1)
        if i >= len(t):
            raise JsError("missing ] after element list")
        return arr, i + 1
    m = re.match(r"-?\d+(\.\d+)?", t[i:])
    if m:
        num = m.group(0)
        return (float(num) if "." in num else int(num)), i + m.end()
    for word, val in (("true", True), ("false", False), ("null", None), ("undefined", None)):
        if t.startswith(word, i):
            return val, i + len(word)
    m = re.match(r"[A-Za-z_$][\w$.]*\(\s*\)", t[i:])
    if m and m.group(0).startswith("passwordPrompt"):
        raise JsError("passwordPrompt")
    raise JsError(f"unexpected token near {t[i:i + 10]!r}")


# --------------------------------------------------------------------------- errors


def _err(msg: str, fn: str = "", code: int = 13, code_name: str = "Unauthorized") -> Exception:
    from sre_env.sim.commands.mongo import _ShellError

    where = f"DB.prototype.{fn}@src/mongo/shell/db.js:1{(sum(map(ord, fn)) % 700) + 100}:15\n" if fn else ""
    legacy = f"uncaught exception: Error: {msg} :\n_getErrorWithCode@src/mongo/shell/utils.js:25:13\n{where}@(shell eval):1:1\n"
    return _ShellError(legacy, f"MongoServerError: {msg}\n")


def authenticate(users: UserStore, user: str, password: str, db: str) -> MongoUser | None:
    found = users.get(db, user)
    return found if found is not None and found.password == password else None


# --------------------------------------------------------------------------- privilege checks

_EXEMPT = re.compile(
    r"^(db\.(adminCommand|runCommand)\((\{['\"]?(ping|hello|isMaster|ismaster)['\"]?:1\}|['\"](ping|hello|isMaster)['\"])\)(\.ok)?"
    r"|db\.(hello|isMaster)\(\)|db\.version\(\)|version\(\)|db\.getName\(\)|db|db\.auth\(.*\)|quit\(\)|exit|exit\(\)|quit"
    r"|print(json)?\(.*\)|[\d+\-*/().]+|rs\.isMaster\(\))$"
)
_USER_FNS = ("createUser", "dropUser", "grantRolesToUser", "revokeRolesFromUser", "changeUserPassword", "updateUser", "getUser", "getUsers", "dropAllUsers")
_COMMAND_OF = {
    "createUser": "createUser", "dropUser": "dropUser", "grantRolesToUser": "grantRolesToUser", "revokeRolesFromUser": "revokeRolesFromUser",
    "changeUserPassword": "updateUser", "updateUser": "updateUser", "getUser": "usersInfo", "getUsers": "usersInfo", "dropAllUsers": "dropAllUsersFromDatabase",
}
_DATA_READ = {"find", "findOne", "count", "countDocuments", "estimatedDocumentCount", "aggregate", "distinct", "stats", "dataSize", "getIndexes", "validate"}
_DATA_WRITE = {"insert", "insertOne", "insertMany", "updateOne", "updateMany", "update", "deleteOne", "deleteMany", "remove", "drop", "createIndex"}


def _classify(c: str, db: str) -> tuple[str, str] | None:
    """(server command, database) a compacted statement sends, when the shell can tell."""
    if c.startswith(("use", "db.getSiblingDB(")):
        return None
    m = re.match(r"^db\.(\w+)\(", c)
    if m and m.group(1) in _USER_FNS:
        return _COMMAND_OF[m.group(1)], db
    if c in ("showusers",):
        return "usersInfo", db
    m = re.fullmatch(r"db\.(?:getCollection\(['\"][\w.-]+['\"]\)|[A-Za-z_][\w-]*)\.(\w+)\(.*", c)
    if m:
        op = m.group(1)
        if op in _DATA_WRITE:
            return {"updateOne": "update", "updateMany": "update", "update": "update", "deleteOne": "delete", "deleteMany": "delete", "remove": "delete"}.get(op, "insert"), db
        return {"count": "count", "countDocuments": "aggregate", "estimatedDocumentCount": "count", "aggregate": "aggregate", "distinct": "distinct"}.get(op, "find"), db
    if c in ("db.stats()", "db.stats().ok", "showcollections", "showtables", "db.getCollectionNames()"):
        return "listCollections", db
    if c.startswith(("showdbs", "showdatabases")) or "listDatabases" in c or "getDBNames" in c:
        return "listDatabases", "admin"
    return "other", db


def check_statement(users: UserStore | None, state: dict[str, Any], c: str) -> None:
    """Raise the server's error when the session may not run this statement."""
    if users is None or _EXEMPT.match(c):
        return
    what = _classify(c, state["db"])
    if what is None:
        return
    command, db = what
    user: MongoUser | None = state.get("user")
    if user is None:
        if command == "other" and (c.startswith(("db.serverStatus", "rs.")) or "currentOp" in c):
            raise _err(f"command {'serverStatus' if 'serverStatus' in c else 'replSetGetStatus' if c.startswith('rs.') else 'currentOp'} requires authentication")
        raise _err(f"command {command} requires authentication", next((f for f in _USER_FNS if c.startswith(f"db.{f}(")), ""))
    if command in ("listDatabases", "listCollections", "other"):
        return  # any authenticated user may list what it can see
    if not allows(user, command, db):
        raise _err(f"not authorized on {db} to execute command {{ {command}: {_first_arg(c)}, $db: \"{db}\" }}", next((f for f in _USER_FNS if c.startswith(f"db.{f}(")), ""))


def _first_arg(c: str) -> str:
    m = re.search(r"\(['\"]([^'\"]*)['\"]", c)
    return f'"{m.group(1)}"' if m else "1"


# --------------------------------------------------------------------------- user management


def _roles(raw: Any, db: str) -> list[tuple[str, str]]:
    if not isinstance(raw, list):
        raise _err("\"roles\" must be an Array", code=2, code_name="BadValue")
    out = []
    for r in raw:
        if isinstance(r, str):
            out.append((r, db))
        elif isinstance(r, dict) and isinstance(r.get("role"), str):
            out.append((r["role"], str(r.get("db", db))))
        else:
            raise _err("role names must be either strings or objects", code=14, code_name="TypeMismatch")
    return out


def _user_doc(u: MongoUser, raw: Any) -> dict[str, Any]:
    return {
        "_id": u.ident,
        "userId": raw(f'UUID("{u.user_id()}")'),
        "user": u.user,
        "db": u.db,
        "roles": [{"role": r, "db": d} for r, d in u.roles],
        "mechanisms": ["SCRAM-SHA-1", "SCRAM-SHA-256"],
    }


def user_statement(users: UserStore | None, state: dict[str, Any], s: str, c: str, changed: Any) -> Any:
    """Evaluate a user-management statement; ``NOT_HANDLED`` for anything else."""
    from sre_env.sim.commands.mongo import _Raw

    m = re.match(r"^db\.(\w+)\(", c)
    name = m.group(1) if m else ("getUsers" if c == "showusers" else "")
    if name not in _USER_FNS and name != "auth":
        return NOT_HANDLED
    db = state["db"]
    body = s[s.index("(") + 1 : s.rindex(")")] if "(" in s and ")" in s else ""
    try:
        args = parse_js(f"[{body}]") if body.strip() else []
    except JsError as e:
        if str(e) == "passwordPrompt":
            raise _err("Error: password prompt requires a terminal", code=2, code_name="BadValue") from None
        from sre_env.sim.commands.mongo import _ShellError

        raise _ShellError(f"uncaught exception: SyntaxError: {e} :\n@(shell eval):1:{len(s) // 2}\n", f"SyntaxError: {e}\n") from None
    modern = bool(state.get("modern"))
    ok = {"ok": 1}
    if name == "auth":
        if users is None:
            return 1 if not modern else {"ok": 1}
        user = str(args[0].get("user", "")) if args and isinstance(args[0], dict) else str(args[0]) if args else ""
        pwd = str(args[0].get("pwd", "")) if args and isinstance(args[0], dict) else str(args[1]) if len(args) > 1 else ""
        found = authenticate(users, user, pwd, db)
        if found is None:
            if modern:
                raise _err("Authentication failed.", code=18, code_name="AuthenticationFailed")
            state.setdefault("printed", []).append("Error: Authentication failed.")
            return 0
        state["user"] = found
        return 1 if not modern else {"ok": 1}
    if users is None:
        # no access control: the commands still work on the (empty) user catalog
        users = state.setdefault("scratch_users", UserStore("scratch"))
    if name == "createUser":
        doc = args[0] if args and isinstance(args[0], dict) else None
        if doc is None or not isinstance(doc.get("user"), str):
            raise _err('"createUser" must be a string', "createUser", 2, "BadValue")
        if "pwd" not in doc:
            raise _err("Must provide a 'pwd' field for all user documents, except those with '$external' as the user's source db", "createUser", 2, "BadValue")
        if users.get(db, doc["user"]) is not None:
            raise _err(f"couldn't add user: User \"{doc['user']}@{db}\" already exists", "createUser", 51003, "Location51003")
        user = MongoUser(doc["user"], db, str(doc["pwd"]), _roles(doc.get("roles", []), db))
        users.add(user)
        changed()
        if modern:
            return ok
        shown = {"user": user.user, "roles": [({"role": r, "db": d} if d != db else r) for r, d in user.roles]}
        return _Raw("Successfully added user: " + _legacy_doc(shown))
    if name in ("getUsers",):
        docs = [_user_doc(u, _Raw) for u in sorted(users.users.values(), key=lambda u: u.ident) if u.db == db]
        if c == "showusers":
            return _Raw("\n".join(_legacy_doc(d) for d in docs), "\n".join(_legacy_doc(d) for d in docs))
        return {"users": docs, "ok": 1} if modern else docs
    if name == "dropAllUsers":
        gone = [k for k, u in users.users.items() if u.db == db]
        for k in gone:
            users.users.pop(k)
        changed()
        return {"n": len(gone), "ok": 1} if modern else len(gone)
    target = str(args[0]) if args else ""
    found = users.get(db, target)
    if name == "getUser":
        return _user_doc(found, _Raw) if found is not None else None
    if name == "dropUser":
        if found is None:
            if modern:
                raise _err(f"User '{target}@{db}' not found", code=11, code_name="UserNotFound")
            return False
        users.drop(db, target)
        changed()
        return ok if modern else True
    if found is None:
        raise _err(f'Could not find user "{target}@{db}"', name, 11, "UserNotFound")
    if name in ("grantRolesToUser", "revokeRolesFromUser"):
        roles = _roles(args[1] if len(args) > 1 else None, db)
        if name == "grantRolesToUser":
            for r in roles:
                if r not in found.roles:
                    found.roles.append(r)
        else:
            found.roles = [r for r in found.roles if r not in roles]
        changed()
        return ok if modern else None
    if name == "changeUserPassword":
        found.password = str(args[1]) if len(args) > 1 else ""
        changed()
        return ok if modern else None
    if name == "updateUser":
        update = args[1] if len(args) > 1 and isinstance(args[1], dict) else {}
        if "pwd" in update:
            found.password = str(update["pwd"])
        if "roles" in update:
            found.roles = _roles(update["roles"], db)
        changed()
        return ok if modern else None
    return NOT_HANDLED


def _legacy_doc(doc: Any, indent: str = "") -> str:
    from sre_env.sim.commands.mongo import _legacy

    inner = indent + "\t"
    if isinstance(doc, dict):
        return "{\n" + ",\n".join(f'{inner}"{k}" : {_legacy_doc(v, inner)}' for k, v in doc.items()) + "\n" + indent + "}"
    if isinstance(doc, list) and doc and any(isinstance(x, dict) for x in doc):
        return "[\n" + ",\n".join(inner + _legacy_doc(x, inner) for x in doc) + "\n" + indent + "]"
    return _legacy(doc, indent)
