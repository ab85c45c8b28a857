"""CronJobSidecarBlocks: a backup CronJob's runs never finish because a log-shipping sidecar never exits.

The data team deployed a CronJob that dumps the reservations database every
five minutes, with a Fluent Bit container beside ``mongodump`` to ship its
logs. ``mongodump`` finishes and exits 0, but a Job's pod only succeeds when
*every* container has exited, and Fluent Bit runs forever: the pod stays
``Running`` (1/2 ready), the Job ``Running`` at 0/1, and with
``concurrencyPolicy: Forbid`` every later run is skipped. Deleting the stuck
Job or its pod only starts another run that hangs the same way. The fix is the
pod spec: drop the sidecar (or make it a native sidecar, an init container with
``restartPolicy: Always``, which the kubelet stops once the main container is done).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.control_plane import CreateObject
from sre_env.kube.timefmt import EPOCH, parse_iso
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.control.jobs import next_schedule

from .app_common import find
from .base import RootCause, Scenario

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["CronJobSidecarBlocks"]

_SHIPPER = "cr.fluentbit.io/fluent/fluent-bit:3.1.9"
_SCHEDULE = "*/5 * * * *"
#: a backup run that is still active after this long is stuck (mongodump of these databases takes seconds)
_STUCK_AFTER_S = 240.0


class CronJobSidecarBlocks(Scenario):
    family = "CronJobSidecarBlocks"
    app = HOTEL_RESERVATION
    layer = "kubernetes"
    difficulty = "medium"
    develop_s = 420.0
    summary = "A new database backup CronJob in hotel-reservation has never produced a finished run."
    description = (
        "The data team deployed a CronJob this morning that backs up one of hotel-reservation's databases every "
        "five minutes. None of its runs has finished: the first one still shows as active, and no later run has "
        "started. The site itself works."
    )
    mechanism = Mechanism(
        "job_sidecar_never_exits",
        "kubernetes",
        "a sidecar container that never exits keeps a Job's pod running",
        (
            r"\bsidecar\b",
            r"\bfluent[- ]?bit\b[^.;\n]{0,80}\b(?:keeps?|never|still|forever|does not|doesn't)\b",
            r"\b(?:log shipper|log-shipping container)\b",
            r"\bnever (?:exits|terminates|stops)\b",
        ),
        detail_keys=("cronjob", "container"),
    )

    def extra_components(self) -> tuple[str, ...]:
        return (self.variant["cronjob"],)

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        db = str(rng.choice(("mongodb-reservation", "mongodb-profile", "mongodb-rate")))
        short = db.removeprefix("mongodb-")
        # the CronJob is created now; its first run is the controller's Job "<cronjob>-<minutes since epoch>"
        first = next_schedule(_SCHEDULE, backend.now)
        return {
            "database": db,
            "cronjob": f"{db}-backup",
            "first_job": f"{db}-backup-{int(EPOCH.timestamp()) // 60 + int(first // 60)}",
            "container": "fluent-bit",
            "main": "mongodump",
            "db_name": f"{short}-db",
        }

    def _cronjob(self) -> dict[str, Any]:
        v = self.variant
        labels = {"app": "mongodb-backup", "app.kubernetes.io/part-of": "hotel-reservation", "backup.target": v["database"]}
        script = (
            f"mongodump --uri=mongodb://{v['database']}:27017/{v['db_name']} --gzip --archive=/backup/{v['db_name']}-$(date +%Y%m%dT%H%M).gz "
            f"2>&1 | tee /var/log/backup/mongodump.log && exit 0"
        )
        return {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": v["cronjob"], "namespace": self.namespace, "labels": dict(labels)},
            "spec": {
                "schedule": _SCHEDULE,
                "concurrencyPolicy": "Forbid",
                "startingDeadlineSeconds": 120,
                "successfulJobsHistoryLimit": 3,
                "failedJobsHistoryLimit": 1,
                "suspend": False,
                "jobTemplate": {
                    "metadata": {"labels": dict(labels)},
                    "spec": {
                        "backoffLimit": 2,
                        "template": {
                            "metadata": {"labels": dict(labels)},
                            "spec": {
                                "restartPolicy": "OnFailure",
                                "containers": [
                                    {
                                        "name": v["main"],
                                        "image": "mongo:4.4.6",
                                        "command": ["/bin/sh", "-c", script],
                                        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                                        "volumeMounts": [{"name": "backup", "mountPath": "/backup"}, {"name": "logs", "mountPath": "/var/log/backup"}],
                                    },
                                    {
                                        "name": v["container"],
                                        "image": _SHIPPER,
                                        "args": ["-i", "tail", "-p", "path=/var/log/backup/*.log", "-o", "forward", "-p", "host=fluentd.logging.svc", "-p", "port=24224"],
                                        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                                        "volumeMounts": [{"name": "logs", "mountPath": "/var/log/backup", "readOnly": True}],
                                    },
                                ],
                                "volumes": [{"name": "backup", "emptyDir": {}}, {"name": "logs", "emptyDir": {}}],
                            },
                        },
                    },
                },
            },
        }

    def inject(self, backend: "Backend") -> None:
        CreateObject(self._cronjob()).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"cronjob/{v['cronjob']}",
            namespace=self.namespace,
            layer="kubernetes",
            mechanism="sidecar container keeps the job pod alive",
            summary=(
                f"cronjob/{v['cronjob']} runs {v['main']} with a {v['container']} log-shipping sidecar in the same pod. {v['main']} finishes and exits 0, "
                f"but the {v['container']} sidecar never exits, so the pod stays Running and the Job never reaches Complete; with concurrencyPolicy "
                f"Forbid every later scheduled run is skipped. Impact: no backup of {v['database']} completes, so the database has no recent backup."
            ),
            details={"cronjob": v["cronjob"], "container": v["container"], "database": v["database"]},
            affected=(f"cronjob/{v['cronjob']}", f"deployment/{v['database']}"),
        )

    def brief(self) -> str:
        v = self.variant
        return (
            f"PAGE: the backup CronJob for {v['database']} (namespace {self.namespace}), deployed this morning, has not produced a single "
            "finished backup: its first run still shows as active after several minutes and no later run has started. The site works. "
            "Find the root cause, repair it durably, and submit your diagnosis."
        )

    def reference_solution(self) -> list[str]:
        v, ns = self.variant, self.namespace
        return [
            f"kubectl get cronjob,jobs -n {ns}",
            f"kubectl get pods -n {ns} -l app=mongodb-backup",
            f"kubectl describe pod -n {ns} -l app=mongodb-backup",
            # drop the sidecar from the pod template; the stuck run goes, the next one completes
            f"kubectl patch cronjob {v['cronjob']} -n {ns} --type=json -p '[{{\"op\": \"remove\", \"path\": \"/spec/jobTemplate/spec/template/spec/containers/1\"}}]'",
            f"kubectl delete job {v['first_job']} -n {ns}",
            "sleep 300",
            f"kubectl get jobs -n {ns}",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v, ns = self.variant, self.namespace
        deadline = json.dumps({"spec": {"jobTemplate": {"spec": {"activeDeadlineSeconds": 120}}}})
        return {
            "delete_stuck_job": [f"kubectl delete job {v['first_job']} -n {ns}", "sleep 300"],
            "delete_cronjob": [f"kubectl delete cronjob {v['cronjob']} -n {ns}"],
            "deadline_only": [f"kubectl patch cronjob {v['cronjob']} -n {ns} -p '{deadline}'", f"kubectl delete job {v['first_job']} -n {ns}", "sleep 300"],
        }

    def cause_checks(self, backend: "Backend") -> list[Check]:
        v, ns = self.variant, self.namespace
        cj = find(backend, "CronJob", v["cronjob"], ns)
        if cj is None:
            return [Check("backups_complete", False, f"cronjob/{v['cronjob']} was deleted: the database is no longer backed up")]
        if cj["spec"].get("suspend"):
            return [Check("backups_complete", False, f"cronjob/{v['cronjob']} is suspended")]
        now = backend.now
        stuck = []
        for job in backend.api.list("Job", ns):
            if not any(r.get("uid") == cj["metadata"]["uid"] for r in job["metadata"].get("ownerReferences") or ()):
                continue
            st = job.get("status") or {}
            done = any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True" for c in st.get("conditions") or ())
            if not done and st.get("startTime") and now - parse_iso(st["startTime"]) > _STUCK_AFTER_S:
                stuck.append(job["metadata"]["name"])
        last_ok = (cj.get("status") or {}).get("lastSuccessfulTime")
        checks = [Check("no_stuck_runs", not stuck, f"runs active for more than {int(_STUCK_AFTER_S)}s: {', '.join(stuck)}" if stuck else "no run is stuck")]
        checks.append(Check("backups_complete", bool(last_ok), f"last successful run at {last_ok}" if last_ok else f"no run of cronjob/{v['cronjob']} has completed"))
        return checks

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("CronJob", self.namespace, self.variant["cronjob"], "*")]
