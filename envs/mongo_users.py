"""MongoDB access-control incidents on hotel-reservation's auth-enabled databases.

rate, profile and reservation log in to their MongoDB (``--auth``) as their own
user, with credentials from the ``mongodb-<svc>-credentials`` Secret.

* MongoAuthRevoked: someone revoked the service user's ``readWrite`` role. Its
  session still opens, every query fails with ``not authorized on <db> ...``;
  a restarted service dies at start-up on the same error.
* MongoUserMissing: the service user was dropped. Logins fail with
  ``Authentication failed.``
* StaleSecretCredentials: the user's password was rotated in the database and
  in the Secret together, but the running pods still hold the old password in
  their environment. Here a rollout restart *is* the repair.

The first two are fixed inside the database with the mongo shell, which changes
the users on the database's volume: restarts of anything, and edits to the
Secret, do not help.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.app_config import MongoShell, SetSecretKey
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.runtime.mongo_auth import client_error

from .app_common import COLLECTION, DB_CLIENTS, DB_NAME, live_pods, pods_serving
from .base import RootCause, SimScenario
from .blind import restart_repairs
from .briefs import impact, user_report

if TYPE_CHECKING:
    from sre_env.backend import Backend
    from sre_env.sim.model import ModelBackend

__all__ = ["MongoAuthRevoked", "MongoUserMissing", "StaleSecretCredentials"]


def _secret_value(backend: "Backend", namespace: str, name: str, key: str) -> str:
    sec = backend.api.get("Secret", name, namespace)
    return base64.b64decode(sec["data"][key]).decode()


class _MongoUserScenario(SimScenario):
    app = HOTEL_RESERVATION
    layer = "application"

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(DB_CLIENTS))
        secret = f"mongodb-{service}-credentials"
        return {
            "service": service,
            "database": f"mongodb-{service}",
            "db": DB_NAME[service],
            "user": _secret_value(backend, self.namespace, secret, "username"),
            "password": _secret_value(backend, self.namespace, secret, "password"),
            "root_user": _secret_value(backend, self.namespace, secret, "root-username"),
            "root_password": _secret_value(backend, self.namespace, secret, "root-password"),
            "secret": secret,
        }

    def brief(self) -> str:
        return user_report(self.app, self.variant["database"], intermittent=True)

    def _shell(self, statement: str, db: str = "admin") -> str:
        v = self.variant
        return f"kubectl exec deployment/{v['database']} -n {self.namespace} -- mongo {db} -u {v['root_user']} -p {v['root_password']} --authenticationDatabase admin --quiet --eval '{statement}'"

    def _user_cause(self, mechanism: str, summary: str, details: dict[str, Any]) -> RootCause:
        """The ground truth when the database's users are at fault: ``summary``, then what users lose."""
        v = self.variant
        return RootCause(
            component=f"deployment/{v['database']}",
            namespace=self.namespace,
            layer=self.layer,
            mechanism=mechanism,
            summary=summary + impact(self.app, v["database"]),
            details=details,
            affected=(f"deployment/{v['database']}", f"deployment/{v['service']}"),
        )

    def _common_wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return {
            "restart_service": [f"kubectl rollout restart deployment/{v['service']} -n {ns}"],
            "restart_database": [f"kubectl rollout restart deployment/{v['database']} -n {ns}"],
            "delete_pods": [f"kubectl delete pod -n {ns} -l io.kompose.service={v['service']}", f"kubectl delete pod -n {ns} -l io.kompose.service={v['database']}"],
            "scale_to_zero": [f"kubectl scale deployment/{v['service']} -n {ns} --replicas=0"],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        """The service's pods, with the environment they run with, may read and write their data."""
        v = self.variant
        dbs = live_pods(backend, self.namespace, v["database"])
        store = backend.model.mongo_users(dbs[0]) if dbs else None
        if store is None:
            return [Check("database_access", False, f"no {v['database']} pod with access control running")]
        ctr = self.app.component(v["service"]).container
        problems = []
        pods = live_pods(backend, self.namespace, v["service"])
        for pod in pods:
            env = backend.model.pod_env(pod["metadata"]["uid"], ctr)
            err = client_error(store, env, v["db"], (("find", COLLECTION[v["service"]]), ("insert", COLLECTION[v["service"]])))
            if err:
                problems.append(f"{pod['metadata']['name']}: {err}")
        return [
            Check("database_access", bool(pods) and not problems, "; ".join(problems) if problems else (f"every {v['service']} pod may use {v['db']}" if pods else f"no pod of {v['service']}")),
            pods_serving(backend, self.namespace, v["service"]),
        ]


class MongoAuthRevoked(_MongoUserScenario):
    family = "MongoAuthRevoked"
    difficulty = "medium"
    summary = "Some hotel-reservation pages fail intermittently; the pods are all running."
    description = (
        "Part of the hotel-reservation site intermittently returns HTTP 500 for some users. Every pod is Running "
        "and nothing restarted; a database maintenance script ran earlier today."
    )
    mechanism = Mechanism(
        "mongo_roles_revoked",
        "application",
        "a database user's roles were revoked (not authorized)",
        (
            r"\bnot authori[sz]ed\b",
            r"\bunauthori[sz]ed\b",
            r"\b(?:roles?|privileges?|permissions?|grants?)\b[^.;\n]{0,40}?\b(?:revoked|removed|missing|lost|dropped|stripped)\b",
            r"\brevok\w*\b[^.;\n]{0,40}?\b(?:roles?|privileges?|permissions?|readwrite)\b",
            r"\blacks? (?:the )?(?:readwrite|read|roles?|privileges?|permissions?)\b",
        ),
        detail_keys=("user", "role", "db"),
    )

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        roles = f'[{{role: "readWrite", db: "{v["db"]}"}}]'
        MongoShell(self.namespace, v["database"], v["root_user"], v["root_password"], f'db.revokeRolesFromUser("{v["user"]}", {roles})', f'db.grantRolesToUser("{v["user"]}", {roles})').inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return self._user_cause(
            "database user's roles revoked",
            f"The readWrite role on {v['db']} was revoked from the MongoDB user {v['user']} in {v['database']}, so every query "
            f"deployment/{v['service']} sends fails with 'not authorized on {v['db']}'. ",
            {"user": v["user"], "role": "readWrite", "db": v["db"], "mechanism_id": "mongo_roles_revoked"},
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        return [
            f"kubectl logs deployment/{v['service']} -n {self.namespace} --tail=20",
            self._shell(f'db.getUser("{v["user"]}")'),
            self._shell(f'db.grantRolesToUser("{v["user"]}", [{{role: "readWrite", db: "{v["db"]}"}}])'),
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        fixes = self._common_wrong_fixes()
        fixes["grant_on_wrong_db"] = [self._shell(f'db.grantRolesToUser("{v["user"]}", [{{role: "readWrite", db: "admin"}}])')]
        return fixes


class MongoUserMissing(_MongoUserScenario):
    family = "MongoUserMissing"
    difficulty = "medium"
    summary = "Some hotel-reservation pages fail intermittently after database maintenance."
    description = (
        "After a database clean-up job ran, part of the hotel-reservation site intermittently returns HTTP 500. "
        "The database pods are up and answer pings; no deployment changed."
    )
    mechanism = Mechanism(
        "mongo_user_missing",
        "application",
        "the service's database user no longer exists (authentication failed)",
        (
            r"\bauthentication failed\b",
            r"\b(?:user|account|login|credentials?)\b[^.;\n]{0,40}?\b(?:dropped|deleted|removed|missing|gone|does not exist|doesn't exist|no longer exists)\b",
            r"\b(?:dropped|deleted|removed|missing)\b[^.;\n]{0,30}?\b(?:db |database |mongo(?:db)? )?user\b",
            r"\bcould not find user\b|\buser ?not ?found\b",
        ),
        detail_keys=("user", "auth_db", "db"),
    )

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        undo = f'db.createUser({{user: "{v["user"]}", pwd: "{v["password"]}", roles: [{{role: "readWrite", db: "{v["db"]}"}}]}})'
        MongoShell(self.namespace, v["database"], v["root_user"], v["root_password"], f'db.dropUser("{v["user"]}")', undo).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return self._user_cause(
            "database user dropped",
            f"The MongoDB user {v['user']} (auth db admin) was dropped from {v['database']}, so deployment/{v['service']} "
            f"gets 'Authentication failed.' on every login and its queries on {v['db']} fail. ",
            {"user": v["user"], "auth_db": "admin", "db": v["db"], "mechanism_id": "mongo_user_missing"},
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        return [
            f"kubectl logs deployment/{v['service']} -n {self.namespace} --tail=20",
            self._shell("db.getUsers()"),
            f"kubectl get secret {v['secret']} -n {self.namespace} -o jsonpath='{{.data.password}}'",
            self._shell(f'db.createUser({{user: "{v["user"]}", pwd: "{v["password"]}", roles: [{{role: "readWrite", db: "{v["db"]}"}}]}})'),
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        fixes = self._common_wrong_fixes()
        # the service authenticates against admin; a user in the data database is another user
        fixes["create_user_in_wrong_db"] = [self._shell(f'db.createUser({{user: "{v["user"]}", pwd: "{v["password"]}", roles: ["readWrite"]}})', db=v["db"])]
        fixes["create_user_wrong_password"] = [self._shell(f'db.createUser({{user: "{v["user"]}", pwd: "changeme", roles: [{{role: "readWrite", db: "{v["db"]}"}}]}})')]
        return fixes


class StaleSecretCredentials(_MongoUserScenario):
    family = "StaleSecretCredentials"
    difficulty = "medium"
    summary = "Some hotel-reservation pages started failing after a routine credentials rotation."
    description = (
        "The security team ran the quarterly credentials rotation an hour ago; its job reported success. Since "
        "then part of the hotel-reservation site intermittently returns HTTP 500 for some users."
    )
    #: the cause is "restart needed": the pods read the password into their environment at start
    accepted_blind = restart_repairs("the service's new pods read the rotated password from the Secret at start")
    mechanism = Mechanism(
        "stale_secret_env",
        "application",
        "pods still use credentials from before a secret rotation",
        (
            r"\bstale\b[^.;\n]{0,30}?\b(?:credentials?|passwords?|secrets?|env\w*)\b",
            r"\b(?:old|previous|outdated|rotated)\b[^.;\n]{0,30}?\b(?:credentials?|passwords?|secrets?)\b",
            r"\b(?:credentials?|passwords?|secrets?)\b[^.;\n]{0,40}?\b(?:rotated|rotation|changed|outdated|stale)\b",
            r"\bauthentication failed\b",
        ),
        detail_keys=("secret", "user"),
        compatible=("mongo_user_missing",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        v = super().draw_variant(backend, rng)
        # the rotation job's output; a few fixed values keep developed incidents cacheable
        v["new_password"] = f"{v['service']}-" + str(rng.choice(("q7Rx2mWp9LtZ", "Hc4vN8eKs3Ju", "Zt6pB2wYg9Dm", "Lm3kV7rQx5Ea")))
        return v

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        MongoShell(self.namespace, v["database"], v["root_user"], v["root_password"], f'db.changeUserPassword("{v["user"]}", "{v["new_password"]}")', f'db.changeUserPassword("{v["user"]}", "{v["password"]}")').inject(backend)
        SetSecretKey(self.namespace, v["secret"], "password", v["new_password"], v["password"]).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"deployment/{v['service']}",
            namespace=self.namespace,
            layer="application",
            mechanism="stale credentials after secret rotation",
            summary=(
                f"The password of MongoDB user {v['user']} was rotated in {v['database']} and in secret {v['secret']}, but the running "
                f"deployment/{v['service']} pods still hold the old password in their environment (env is read at start), so their new "
                f"connections get 'Authentication failed.'; restarting them picks up the rotated secret. " + impact(self.app, v["service"])
            ),
            details={"secret": v["secret"], "user": v["user"], "mechanism_id": "stale_secret_env"},
            affected=(f"deployment/{v['service']}", f"deployment/{v['database']}"),
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl logs deployment/{v['service']} -n {ns} --tail=20",
            f"kubectl get secret {v['secret']} -n {ns} -o yaml",
            f"kubectl rollout restart deployment/{v['service']} -n {ns}",
            f"kubectl rollout status deployment/{v['service']} -n {ns}",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        old = base64.b64encode(v["password"].encode()).decode()
        return {
            "restart_database": [f"kubectl rollout restart deployment/{v['database']} -n {ns}"],
            "revert_secret": [f"kubectl patch secret {v['secret']} -n {ns} --type=merge -p '{{\"data\":{{\"password\":\"{old}\"}}}}'"],
            "revert_secret_and_restart": [
                f"kubectl patch secret {v['secret']} -n {ns} --type=merge -p '{{\"data\":{{\"password\":\"{old}\"}}}}'",
                f"kubectl rollout restart deployment/{v['service']} -n {ns}",
            ],
            "scale_to_zero": [f"kubectl scale deployment/{v['service']} -n {ns} --replicas=0"],
        }

    def allowed_changes(self) -> list[AllowedChange]:
        # the rotation itself is intended: the Secret keeps its new password
        return [AllowedChange("Secret", self.namespace, self.variant["secret"], "modified")]
