"""DiskFull / InodeExhaustion: a cron job fills a node's root disk (or its inode table).

A packet capture left scheduled after an investigation writes a multi-GB pcap
every minute; a journal export split into one file per line leaves millions of
tiny files. Either way the kubelet's ``nodefs`` signals cross their
thresholds: the node reports DiskPressure, is tainted, and the kubelet evicts
its pods. Stateless pods land elsewhere; a database whose local volume lives on
that node cannot follow and stays Pending, so the features that need it fail.

The evidence is on the node — ``df -h`` / ``df -i``, ``du``, ``/etc/cron.d``,
the kubelet's eviction manager in ``journalctl`` — and in the node's conditions
and the pods' Evicted status. The repair has two halves: stop the writer (its
cron line) and free the space; either alone leaves the incident in place
(the disk stays full, or refills).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.cron_writer import CronWriter
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.node.diskfill import usage, writers_into

from .base import RootCause, SimScenario
from .briefs import impact, user_report
from .node_isolation import node_cause

if TYPE_CHECKING:
    from sre_env.sim.model import ModelBackend

__all__ = ["DiskFull", "InodeExhaustion"]

_DATABASES = ("mongodb-profile", "mongodb-rate", "mongodb-reservation")


class _CronFill(SimScenario):
    """Shared parts: the node is the one holding a database's local volume."""

    app = HOTEL_RESERVATION
    layer = "os"
    difficulty = "hard"
    develop_s = 180.0
    #: the disk is full, not failing: the databases' data stays where it is
    evacuation_repair = False
    #: cron file name, the directory its job fills, and its lines
    cron_name: ClassVar[str]
    directory: ClassVar[str]
    history_s: ClassVar[float]
    #: the program the job runs (what an engineer greps the cron line for)
    program: ClassVar[str]

    def cron_lines(self) -> tuple[str, ...]:
        raise NotImplementedError

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        db = str(rng.choice(_DATABASES))
        node = self._pv_node(backend, db)
        pinned = sorted(c.name for c in self.app.components if c.volume_claim and self._pv_node(backend, c.name) == node)
        callers = sorted({c.name for c in self.app.components for d in c.dependencies if d.service in pinned})
        return {"database": db, "node": node, "pinned": tuple(pinned), "callers": tuple(callers)}

    def _pv_node(self, backend: "ModelBackend", component: str) -> str:
        comp = self.app.component(component)
        pvc = backend.api.get("PersistentVolumeClaim", comp.volume_claim, self.namespace)
        pv = backend.api.get("PersistentVolume", pvc["spec"]["volumeName"])
        return str(pv["metadata"]["annotations"]["local.path.provisioner/selected-node"])

    def inject(self, backend: "ModelBackend") -> None:
        CronWriter(self.variant["node"], self.cron_name, self.cron_lines(), self.directory, self.history_s).inject(backend)

    def _affected(self) -> tuple[str, ...]:
        v = self.variant
        return (*(f"deployment/{d}" for d in v["pinned"]), *(f"deployment/{c}" for c in v["callers"]))

    def brief(self) -> str:
        return user_report(self.app, self.variant["database"], intermittent=False)

    def _cron_path(self) -> str:
        return f"/etc/cron.d/{self.cron_name}"

    def reference_solution(self) -> list[str]:
        ns, n = self.namespace, self.variant["node"]
        return [
            f"kubectl get pods -n {ns} -o wide",
            f"kubectl describe node {n}",
            *self.evidence_commands(),
            f"ssh {n} ls /etc/cron.d",
            f"ssh {n} cat {self._cron_path()}",
            # stop the writer first, then free what it wrote
            f"ssh {n} \"sed -i '/{self.program}/d' {self._cron_path()}\"",
            f"ssh {n} rm -rf {self.directory}",
            f"ssh {n} df -h /",
            # the kubelet keeps the pressure condition for evictionPressureTransitionPeriod (5m)
            "sleep 330",
            # evicted pods stay behind as Failed records until removed
            f"kubectl delete pods -n {ns} --field-selector=status.phase==Failed",
            f"kubectl get pods -n {ns} -o wide",
        ]

    def evidence_commands(self) -> list[str]:
        raise NotImplementedError

    def wrong_fixes(self) -> dict[str, list[str]]:
        v, ns, n = self.variant, self.namespace, self.variant["node"]
        return {
            # space comes back, but the job keeps writing and fills it again
            "free_space_only": [f"ssh {n} rm -rf {self.directory}", "sleep 330", f"kubectl delete pods -n {ns} --field-selector=status.phase==Failed"],
            # no new files, but the disk stays full
            "remove_writer_only": [f"ssh {n} rm -f {self._cron_path()}", "sleep 330"],
            "remove_taint": [f"kubectl taint nodes {n} node.kubernetes.io/disk-pressure:NoSchedule-", "sleep 60"],
            "restart_kubelet": [f"ssh {n} systemctl restart kubelet", "sleep 60"],
            "restart_app_pods": [f"kubectl delete pods -n {ns} --field-selector spec.nodeName={n}", "sleep 60"],
            "rollout_restart": [f"kubectl rollout restart deployment/{v['database']} -n {ns}", "sleep 60"],
            "drain_node": [f"kubectl drain {n} --ignore-daemonsets --delete-emptydir-data", "sleep 60"],
            "scale_to_zero": [f"kubectl scale deployment/{v['database']} -n {ns} --replicas=0", "sleep 30"],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        host = backend.model.host(self.variant["node"])
        writers = writers_into(host, self.directory)
        root = host.disks[0]
        filled_b, filled_f = usage(host, self.directory)
        free_b = root.size_bytes - root.used_bytes
        free_i = root.inodes_total - root.inodes_used
        headroom = free_b >= 0.3 * root.size_bytes and free_i >= 0.3 * root.inodes_total
        return [
            Check("writer_stopped", not writers, f"{', '.join(writers)} still writes into {self.directory}" if writers else f"no cron job writes into {self.directory}"),
            Check(
                "disk_headroom",
                headroom,
                f"{host.name} root file system: {free_b / root.size_bytes:.0%} space and {free_i / root.inodes_total:.0%} inodes free ({self.directory}: {filled_b // 2**30} GiB in {filled_f} files)",
            ),
        ]

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("Deployment", self.namespace, "*", "modified")]


class DiskFull(_CronFill):
    family = "DiskFull"
    summary = "hotel-reservation pods were evicted from one node and a database will not come back."
    description = (
        "Several hotel-reservation features started failing for every user within the last hour. Some pods show as "
        "Evicted and one database has been stuck since. Nothing was deployed today; last week the network team was "
        "chasing intermittent connection resets on the workers."
    )
    mechanism = Mechanism(
        "disk_full",
        "os",
        "a runaway writer filled the node's root disk, so the kubelet evicts pods under DiskPressure",
        (
            r"\b(?:root |node(?:'s)? |host )?(?:disk|file ?system|partition)s? (?:is |was |got |were )?(?:full|filled|filling up|out of space|exhausted|100 ?%)",
            r"\b(?:filled|fills|filling) (?:up )?(?:the )?(?:root |node(?:'s)? )?(?:disk|file ?system|partition)\b",
            r"\b(?:out of|ran out of|no) (?:free )?(?:disk )?space\b",
            r"\bdisk (?:space )?exhaust\w*\b",
            r"\b(?:tcpdump|packet captures?|pcaps?)\b",
        ),
        detail_keys=("node", "directory", "cron_file"),
        compatible=("resource_exhaustion", "untolerated_taint"),
    )
    cron_name = "netcapture"
    program = "tcpdump"
    directory = "/var/tmp/netcapture"
    history_s = 3 * 3600.0

    def cron_lines(self) -> tuple[str, ...]:
        return (
            "# packet capture for the connection-reset investigation; remove when done",
            "SHELL=/bin/sh",
            f"* * * * * root mkdir -p {self.directory} && tcpdump -i any -s 0 -G 60 -W 1 -w {self.directory}/node-\\%Y\\%m\\%d-\\%H\\%M.pcap >/dev/null 2>&1",
        )

    def evidence_commands(self) -> list[str]:
        n = self.variant["node"]
        return [f"ssh {n} df -h /", f"ssh {n} du -sh /var/*", f"ssh {n} du -sh /var/tmp/*"]

    def root_cause(self) -> RootCause:
        v = self.variant
        return node_cause(
            self,
            "root disk full: a forgotten packet-capture cron job filled it",
            f"A cron job ({self._cron_path()}) on {v['node']} runs tcpdump every minute and writes a multi-GB pcap into {self.directory}; "
            f"nobody removed it, and the captures filled the node's root disk. The kubelet reports DiskPressure, the node is tainted "
            f"and the kubelet evicts its pods; deployment/{', deployment/'.join(v['pinned'])} cannot move off the node (local volumes) "
            f"and stay Pending, so {', '.join(v['callers'])} fail. " + impact(self.app, v["database"]),
            {"directory": self.directory, "cron_file": self._cron_path()},
            self._affected(),
        )


class InodeExhaustion(_CronFill):
    family = "InodeExhaustion"
    summary = "hotel-reservation pods were evicted from one node that has plenty of free disk space."
    description = (
        "Several hotel-reservation features fail for every user. Some pods show as Evicted and one database has not "
        "come back, although the on-call engineer says the node's disk is far from full. No deploys today; the "
        "logging team retired an old log-archive agent last month."
    )
    mechanism = Mechanism(
        "inode_exhaustion",
        "os",
        "millions of small files exhausted the root file system's inodes, so the kubelet evicts pods under DiskPressure",
        (
            r"\binodes?\b",
            r"\bdf -i\b",
            r"\b(?:millions of|too many) (?:small |tiny )?files\b",
        ),
        detail_keys=("node", "directory", "cron_file"),
        compatible=("resource_exhaustion", "untolerated_taint"),
    )
    cron_name = "journal-export"
    program = "journalctl"
    directory = "/var/tmp/journal-export"
    history_s = 3 * 86400.0

    def cron_lines(self) -> tuple[str, ...]:
        return (
            "# export the node journal for the log-archive agent (it collects and deletes the files)",
            f"* * * * * root mkdir -p {self.directory} && journalctl --since -1min -o json | split -l 1 - {self.directory}/$(date +\\%s)-",
        )

    def evidence_commands(self) -> list[str]:
        n = self.variant["node"]
        return [f"ssh {n} df -h /", f"ssh {n} df -i /", f"ssh {n} du --inodes -s /var/tmp/*"]

    def root_cause(self) -> RootCause:
        v = self.variant
        return node_cause(
            self,
            "inode exhaustion: a cron job leaves millions of small files",
            f"A cron job ({self._cron_path()}) on {v['node']} splits the journal into one file per line in {self.directory} every minute, "
            f"and the agent that used to collect them is gone; millions of tiny files used up the root file system's inodes while "
            f"space is still free. The kubelet reports DiskPressure (inodes), the node is tainted and the kubelet evicts its pods; "
            f"deployment/{', deployment/'.join(v['pinned'])} cannot move off the node (local volumes) and stay Pending, so "
            f"{', '.join(v['callers'])} fail. " + impact(self.app, v["database"]),
            {"directory": self.directory, "cron_file": self._cron_path()},
            self._affected(),
        )
