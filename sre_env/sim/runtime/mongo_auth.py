"""MongoDB access control: users, roles, authentication and authorization.

A ``mongod`` started with ``--auth`` checks every client: the SCRAM handshake
needs a user that exists in the authentication database with the password the
client presents, and every command needs a role that grants it on the target
database. Users live in ``admin.system.users`` *on the data volume*, so they
survive pod restarts and are lost only with the volume. An empty volume is
initialised the way the image's entrypoint does it on first start: the root
user from ``MONGO_INITDB_ROOT_USERNAME``/``_PASSWORD`` and (our init script)
the application user from ``MONGO_APP_USERNAME``/``_PASSWORD`` with
``readWrite`` on ``MONGO_INITDB_DATABASE``.

Clients (the Go services) authenticate with ``MONGO_USERNAME``/``MONGO_PASSWORD``
against ``MONGO_AUTH_SOURCE`` (default ``admin``) and use ``MONGO_DATABASE``
(mgo falls back to ``test`` when it is unset), all from the environment their process started with.
The errors are the real ones: mgo's ``server returned error on SASL
authentication step: Authentication failed.`` and mongod's ``not authorized on
<db> to execute command { ... }``.

Changing users bumps the world's fault epoch, so traffic routes are recompiled
only when access control changes, never per tick.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sre_env.sim.logs.streams import container_log
from sre_env.sim.network.routing import Route
from sre_env.sim.runtime.podenv import pod_env

if TYPE_CHECKING:
    from sre_env.apps.base import AppSpec, Component
    from sre_env.sim.kernel.world import World

__all__ = [
    "AUTH_FAILED",
    "MongoUser",
    "UserStore",
    "auth_enabled",
    "client_error",
    "reset_op_errors",
    "session_gate",
    "start_error",
    "touch",
    "user_store",
]

Obj = dict[str, Any]
AUTH_FAILED = "server returned error on SASL authentication step: Authentication failed."

_READ = {"find", "count", "aggregate", "distinct", "listCollections", "collStats", "dbStats", "listIndexes"}
_WRITE = {"insert", "update", "delete", "findAndModify", "createIndexes", "drop", "create"}
_USER_ADMIN = {"createUser", "dropUser", "updateUser", "grantRolesToUser", "revokeRolesFromUser", "usersInfo", "dropAllUsersFromDatabase"}
_SYSTEM_DBS = ("admin", "local", "config")


@dataclass
class MongoUser:
    user: str
    db: str
    password: str
    roles: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ident(self) -> str:
        return f"{self.db}.{self.user}"

    def user_id(self) -> str:
        h = hashlib.blake2b(self.ident.encode(), digest_size=16).hexdigest()
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


@dataclass
class UserStore:
    """``admin.system.users`` of one data directory."""

    volume: str
    users: dict[str, MongoUser] = field(default_factory=dict)

    def get(self, db: str, user: str) -> MongoUser | None:
        return self.users.get(f"{db}.{user}")

    def add(self, user: MongoUser) -> None:
        self.users[user.ident] = user

    def drop(self, db: str, user: str) -> bool:
        return self.users.pop(f"{db}.{user}", None) is not None


def action_of(command: str) -> str:
    if command in _READ:
        return "read"
    if command in _WRITE:
        return "write"
    if command in _USER_ADMIN:
        return "userAdmin"
    return "other"


def allows(user: MongoUser, command: str, db: str) -> bool:
    """Whether one of the user's built-in roles grants ``command`` on ``db``."""
    action = action_of(command)
    for role, rdb in user.roles:
        if role == "root":
            return True
        if role == "__system":
            return True
        if rdb == "admin" and role in ("readWriteAnyDatabase", "readAnyDatabase", "userAdminAnyDatabase", "dbAdminAnyDatabase"):
            if role == "userAdminAnyDatabase" and action == "userAdmin":
                return True
            if db not in _SYSTEM_DBS and ((role == "readWriteAnyDatabase" and action in ("read", "write")) or (role == "readAnyDatabase" and action == "read")):
                return True
            continue
        if rdb != db:
            continue
        if role == "dbOwner" and action in ("read", "write", "userAdmin", "other"):
            return True
        if role == "readWrite" and action in ("read", "write"):
            return True
        if role == "read" and action == "read":
            return True
        if role == "userAdmin" and action == "userAdmin":
            return True
        if role == "dbAdmin" and action == "other":
            return True
    return False


def auth_enabled(container: Obj) -> bool:
    argv = [str(a) for a in (container.get("command") or [])] + [str(a) for a in (container.get("args") or [])]
    return "--auth" in argv or any(a.startswith("--auth=") and a.split("=", 1)[1] in ("true", "1") for a in argv)


def _volume_key(world: "World", pod: Obj) -> str:
    ns = pod["metadata"]["namespace"]
    for vol in pod["spec"].get("volumes") or ():
        claim = (vol.get("persistentVolumeClaim") or {}).get("claimName")
        if claim:
            pvc = world.store.find("PersistentVolumeClaim", claim, ns)
            if pvc is not None and pvc["spec"].get("volumeName"):
                return "pv/" + pvc["spec"]["volumeName"]
    # no persistent volume: the data directory lives and dies with the pod
    return "pod/" + pod["metadata"]["uid"]


def _stores(world: "World") -> dict[str, UserStore]:
    return world.mongo_users


def user_store(world: "World", pod: Obj) -> UserStore | None:
    """The user database behind a mongod pod, or None when it runs without ``--auth``."""
    containers = pod["spec"].get("containers") or []
    if not containers or not auth_enabled(containers[0]):
        return None
    key = _volume_key(world, pod)
    stores = _stores(world)
    store = stores.get(key)
    if store is None:
        env = pod_env(world, pod["metadata"]["uid"], containers[0]["name"])
        store = stores[key] = _initialise(key, env)
    return store


def _initialise(key: str, env: dict[str, str]) -> UserStore:
    """What the entrypoint does on an empty data directory."""
    store = UserStore(key)
    root, root_pw = env.get("MONGO_INITDB_ROOT_USERNAME"), env.get("MONGO_INITDB_ROOT_PASSWORD")
    if root and root_pw:
        store.add(MongoUser(root, "admin", root_pw, [("root", "admin")]))
    app, app_pw, db = env.get("MONGO_APP_USERNAME"), env.get("MONGO_APP_PASSWORD"), env.get("MONGO_INITDB_DATABASE") or "test"
    if app and app_pw:
        store.add(MongoUser(app, "admin", app_pw, [("readWrite", db)]))
    return store


def touch(world: "World") -> None:
    """Access control changed: clients' sessions must be re-evaluated."""
    world.fault_epoch += 1


def _command_doc(command: str, coll: str, db: str) -> str:
    if command == "count":
        return f'{{ count: "{coll}", query: {{ hotelId: "1" }}, $db: "{db}" }}'
    if command == "insert":
        return f'{{ insert: "{coll}", ordered: true, $db: "{db}" }}'
    if command == "find":
        return f'{{ find: "{coll}", filter: {{ hotelId: "1" }}, $db: "{db}" }}'
    return f'{{ {command}: "{coll}", $db: "{db}" }}'


def client_error(store: UserStore, env: dict[str, str], default_db: str, ops: tuple[tuple[str, str], ...]) -> str | None:
    """The error a client with this environment gets for ``ops`` ((command, collection), ...), if any."""
    user, password = env.get("MONGO_USERNAME", ""), env.get("MONGO_PASSWORD", "")
    # a client that reads its database name from MONGO_DATABASE and finds none gets mgo's
    # fallback (session.DB("") is "test"); one that never reads it uses its compiled-in name
    db = env.get("MONGO_DATABASE") or ("test" if "MONGO_USERNAME" in env else default_db)
    if not user:
        command = ops[0][0] if ops else "find"
        return f"command {command} requires authentication"
    source = env.get("MONGO_AUTH_SOURCE") or "admin"
    found = store.get(source, user)
    if found is None or found.password != password:
        return AUTH_FAILED
    for command, coll in ops:
        if not allows(found, command, db):
            return f"not authorized on {db} to execute command {_command_doc(command, coll, db)}"
    return None


def _ops(app: "AppSpec", caller: str, callee: str) -> tuple[tuple[str, str], ...]:
    """The commands the caller sends on this edge, from the call graph's operation names."""
    out: dict[tuple[str, str], None] = {}
    for rt in app.requests:
        for call in rt.calls:
            if call.caller == caller and call.callee == callee and call.operation:
                verb, _, coll = call.operation.partition(" ")
                out[(verb, coll or callee)] = None
    return tuple(out)


def _default_db(dep_service: str) -> str:
    return dep_service.removeprefix("mongodb-") + "-db"


def session_gate(world: "World", app: "AppSpec", caller: "Component", callee: str, uid: str, route: Route) -> Route:
    """A caller pod's route to a MongoDB, failed when the server refuses its session or commands."""
    if route.ok <= 0 or not route.servers:
        return route
    dep = next((d for d in caller.dependencies if d.service == callee), None)
    if dep is None or dep.protocol != "mongodb":
        return route
    server = world.pod_by_uid(route.servers[0][0])
    if server is None:
        return route
    store = user_store(world, server)
    if store is None:
        return route
    ops = _ops(app, caller.name, callee) or (("find", callee),)
    env = pod_env(world, uid, caller.container)
    error = client_error(store, env, _default_db(dep.service), ops[:1])
    if error is not None and not (error.startswith("not authorized") and len(ops) > 1):
        return Route(0.0, error, (), route.target, route.ip)
    # logged in: each command is authorized on its own (a read-only role reads but cannot insert)
    refused = {op: client_error(store, env, _default_db(dep.service), (op,)) for op in ops}
    if all(refused.values()):
        return Route(0.0, next(iter(refused.values())) or "", (), route.target, route.ip)
    owned = _owned_op_errors(world, app.name)
    for (verb, coll), why in refused.items():
        if why:
            for server_uid, _ in route.servers:
                key = (server_uid, f"{verb} {coll}")
                world.op_errors[key] = (1.0, why)
                owned.add(key)
    return route


@dataclass
class _OwnedOpErrors:
    """The per-command refusals (``world.op_errors`` keys) this module set, by app."""

    by_app: dict[str, set[tuple[str, str]]] = field(default_factory=dict)


def _owned_op_errors(world: "World", app_name: str) -> set[tuple[str, str]]:
    return world.slot(_OwnedOpErrors).by_app.setdefault(app_name, set())


def reset_op_errors(world: "World", app: "AppSpec") -> None:
    """Drop the per-command refusals this module set for ``app``; its routes are being recompiled."""
    state = world.peek(_OwnedOpErrors)
    owned = state.by_app.get(app.name) if state is not None else None
    if owned:
        for key in sorted(owned):
            world.op_errors.pop(key, None)
        owned.clear()


def start_error(world: "World", pod: Obj, component: "Component", env: dict[str, str]) -> tuple[str, str] | None:
    """(target, error) of the first auth-enabled database that refuses the process at start-up.

    The Go services open a session and count their seed documents before serving
    (``initializeDatabase``): a refused session or command is fatal.
    """
    from sre_env.sim.network.routing import resolve_route

    ns = pod["metadata"]["namespace"]
    for dep in component.dependencies:
        if dep.protocol != "mongodb":
            continue
        addr = (env.get(dep.address_env, "") if dep.address_env else "") or f"{dep.service}:{dep.port}"
        route = resolve_route(world, ns, addr, dep.port)
        if route.ok <= 0 or not route.servers:
            continue
        server = world.pod_by_uid(route.servers[0][0])
        store = user_store(world, server) if server is not None else None
        if store is None:
            continue
        coll = _seed_collection(world, component, dep.service)
        error = client_error(store, env, _default_db(dep.service), (("count", coll),))
        if error is not None:
            return route.target, error
    return None


def _seed_collection(world: "World", component: "Component", callee: str) -> str:
    for app in world.apps:
        ops = _ops(app, component.name, callee)
        if ops:
            return ops[0][1]
    return callee.removeprefix("mongodb-")


def refused_start(world: "World", pod: Obj, component: "Component", env: dict[str, str]) -> Any:
    """The process outcome when a database refuses it at start-up (None: it starts normally).

    mgo fails fast on a refused handshake or command (no 10 s server-selection
    wait), and ``initializeDatabase`` panics with the server's message.
    """
    from sre_env.sim.kernel.pods import StartOutcome

    refused = start_error(world, pod, component, env)
    if refused is None:
        return None
    target, error = refused
    if error == AUTH_FAILED:
        _log_refused_start(world, pod, component, env)
    events: tuple[tuple[float, str, tuple[tuple[str, Any], ...]], ...] = (
        (0.0, "startup", (("partial", True),)),
        (0.2, "config", ()),
        (0.6, "dependency_error", (("target", target), ("error", error), ("phase", "start"))),
    )
    return StartOutcome(exit_after=0.8, exit_code=2, reason="Error", serve_after=None, log_events=events, memory_mib=component.memory_mib / 2)


def _server_error(store: UserStore, user: str, source: str) -> str:
    if store.get(source, user) is None:
        return f'UserNotFound: Could not find user "{user}" for db "{source}"'
    return "AuthenticationFailed: SCRAM authentication failed, storedKey mismatch"


def log_auth_failure(world: "World", server_uid: str, client_uid: str, client_env: dict[str, str]) -> None:
    """mongod's own ``Authentication failed`` line (ACCESS 20249), as it prints for every refused login."""
    server = world.pod_by_uid(server_uid)
    rt = world.runtimes.get(server_uid)
    if server is None or rt is None:
        return
    store = user_store(world, server)
    user = client_env.get("MONGO_USERNAME", "")
    if store is None or not user:
        return
    source = client_env.get("MONGO_AUTH_SOURCE") or "admin"
    client = world.runtimes.get(client_uid)
    remote = f"{client.ip if client else '10.244.0.1'}:{40000 + int(world.clock.now) % 20000}"
    fields = {"user": user, "auth_db": source, "remote": remote, "error": _server_error(store, user, source), "connection_id": 100 + int(world.clock.now // 5) % 900}
    for ctr in rt.containers.values():
        if ctr.state == "running":
            container_log(world, server, ctr, "auth_failed", world.clock.now, fields)
            return


def note_edge_failure(world: "World", plan: Any, caller: str, callee: str, error: str) -> None:
    """Server-side trace of a caller's refused logins on a failing edge (once per tick)."""
    if error != AUTH_FAILED:
        return
    servers = plan.serving.get(callee, ())
    callers = plan.serving.get(caller, ())
    if not servers or not callers:
        return
    comp = next((c for (ns, _), c in world.components.items() if c.name == caller), None)
    env = pod_env(world, callers[0], comp.container) if comp is not None else {}
    log_auth_failure(world, servers[0], callers[0], env)


def _log_refused_start(world: "World", pod: Obj, component: "Component", env: dict[str, str]) -> None:
    from sre_env.sim.network.routing import resolve_route

    for dep in component.dependencies:
        if dep.protocol != "mongodb":
            continue
        addr = (env.get(dep.address_env, "") if dep.address_env else "") or f"{dep.service}:{dep.port}"
        route = resolve_route(world, pod["metadata"]["namespace"], addr, dep.port)
        if route.servers:
            log_auth_failure(world, route.servers[0][0], pod["metadata"]["uid"], env)
            return
