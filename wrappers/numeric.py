"""A numeric observation for RL libraries: a Box of features plus the action mask.

Wraps a ``CatalogWrapper``. The features are what an on-call engineer has in
front of them, in fixed slots aligned with the catalog's targets:

* **always visible** (the dashboard: the env's metrics window and alerts):
  client success ratio, client p99 latency, alert count, the step budget used;
  per workload slot its ready replicas, whether it restarted during the window,
  its error ratio and whether it serves traffic; per node whether it is
  cordoned and whether it hosts a pod of a workload that restarted during the
  window (restarts by node, as a kube-state-metrics dashboard shows them);
* **revealed by inspecting** (the agent's notebook): a fact about a target only
  appears once the agent ran the catalog action that would show it, and is then
  kept up to date. ``get_pods`` reveals each workload's waiting reason, and per
  node how many not-ready pods it hosts and the most restarts of a pod on it
  (the READY, RESTARTS and NODE columns of ``get pods -o wide``); ``logs`` and ``dmesg`` reveal keyword
  classes found in that command's actual output (I/O errors, refused
  connections, crashes, config errors); describing a service reveals whether
  it has ready endpoints and whether its targetPort is a port its pods declare;
* **what the agent did**: which repair verbs it applied to which slot.

No feature reads the scenario's ground truth: everything comes from the live
cluster's API objects, the observation's metrics and the text of outputs.

    env = NumericObservation(CatalogWrapper(gym.make("SREGym/DiskSector-v0")))
    obs, info = env.reset(seed=0)
    obs["observations"].shape, obs["action_mask"].shape
"""

from __future__ import annotations

import re
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .catalog import WORKLOAD_KINDS, CatalogWrapper, _pv_node

__all__ = ["NumericObservation", "KEYWORD_CLASSES", "feature_names"]

#: keyword classes looked for in inspected outputs (order = feature order)
KEYWORD_CLASSES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("io_error", re.compile(r"I/O error|\bEIO\b|medium error|Medium Error|UNC\b|read error|bad sector", re.I)),
    ("refused", re.compile(r"connection refused|no route to host|connect: |Unavailable|i/o timeout", re.I)),
    ("crash", re.compile(r"panic|fatal|FTL|abort|Back-off|CrashLoopBackOff|exited with", re.I)),
    ("config", re.compile(r"environment variable|not set|missing|invalid|no such host|unknown", re.I)),
    ("error", re.compile(r"\bERR\b|\berror\b", re.I)),
)

_G = ("step_frac", "alerts", "client_success", "client_p99_log", "last_exit_nonzero", "repairs", "did_get_pods", "did_get_events", "did_describe_services")
_W = ("exists", "ready_zero", "restarting", "error_ratio", "serving", "seen_pods", "waiting_crash", "waiting_config", "waiting_image", "pending", "pod_restarts", "logs_seen", *[f"logs_{k}" for k, _ in KEYWORD_CLASSES], "undone", "restarted")
_S = ("exists", "described", "no_endpoints", "port_mismatch", "port_fixed")
_N = ("exists", "cordoned", "local_volumes", "hosts_restarting", "seen_pods", "not_ready_pods", "pod_restarts", "dmesg_seen", *[f"dmesg_{k}" for k, _ in KEYWORD_CLASSES], "evacuated")


def feature_names(workloads: int, services: int, nodes: int) -> list[str]:
    """The name of every feature, in order (for documentation and debugging)."""
    out = [f"g.{n}" for n in _G]
    out += [f"w{i}.{n}" for i in range(workloads) for n in _W]
    out += [f"s{i}.{n}" for i in range(services) for n in _S]
    out += [f"n{i}.{n}" for i in range(nodes) for n in _N]
    return out


def _keywords(text: str) -> list[float]:
    return [1.0 if rx.search(text) else 0.0 for _, rx in KEYWORD_CLASSES]


def _series_label(name: str, label: str) -> str | None:
    m = re.search(label + r"=([^,}]+)", name)
    return m.group(1) if m else None


class NumericObservation(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """``{"observations": Box(F), "action_mask": Box(N)}`` for RLlib-style masked policies."""

    def __init__(self, env: gym.Env) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        super().__init__(env)
        catalog_env = env
        while not isinstance(catalog_env, CatalogWrapper):
            if not isinstance(catalog_env, gym.Wrapper):
                raise TypeError("NumericObservation needs a CatalogWrapper underneath")
            catalog_env = catalog_env.env
        self._catalog_env = catalog_env
        self.catalog = catalog_env.catalog
        w, s, n = self.catalog.capacity
        self.names = feature_names(w, s, n)
        self.observation_space = spaces.Dict(
            {
                "observations": spaces.Box(-1.0, 1.0, shape=(len(self.names),), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(len(self.catalog),), dtype=np.int8),
            }
        )
        self._metric_names: list[str] = []
        self._index: dict[tuple[str, str | None], int] = {}
        self._index_for: list[str] | None = None
        self._reset_notebook()

    def _reset_notebook(self) -> None:
        self._did: set[str] = set()
        self._logs: dict[int, list[float]] = {}
        self._dmesg: dict[int, list[float]] = {}
        self._described: set[int] = set()
        self._applied: set[tuple[str, int]] = set()
        self._last_exit = 0
        self._repairs = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        self._reset_notebook()
        obs, info = self.env.reset(seed=seed, options=options)
        self._metric_names = list(info.get("metric_names", self._metric_names))
        return self.observation(obs), info

    def step(self, action: int) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        a = self.catalog.layout[int(action)]
        obs, reward, terminated, truncated, info = self.env.step(action)
        text = str(obs.get("output", ""))
        self._last_exit = int(info.get("exit_code", 0))
        if a.kind == "global":
            self._did.add(a.verb)
        elif a.verb == "logs":
            self._logs[a.slot] = _keywords(text)
        elif a.verb == "dmesg":
            self._dmesg[a.slot] = _keywords(text)
        elif a.verb == "describe_service":
            self._described.add(a.slot)
        if a.repair and a.verb != "submit":
            self._applied.add((a.verb, a.slot))
            self._repairs += 1
        return self.observation(obs), reward, terminated, truncated, info

    # ------------------------------------------------------------ features
    def observation(self, obs: dict[str, Any]) -> dict[str, Any]:
        cat = self.catalog
        t = cat._require()
        inner = self.env.unwrapped
        api = inner.backend.api
        ns = t.namespace
        w_cap, s_cap, n_cap = cat.capacity
        metrics = np.asarray(obs["metrics"], dtype=np.float64)
        names = self._metric_names or list(getattr(inner, "_metric_names", []))
        last = metrics[-1] if len(metrics) else np.zeros(len(names))
        first = metrics[0] if len(metrics) else np.zeros(len(names))

        if self._index_for is not names:
            self._index = _series_index(names)
            self._index_for = names
        index = self._index

        def metric(prefix: str, service: str | None = None, row: np.ndarray = last) -> float:
            j = index.get((prefix, service))
            return float(row[j]) if j is not None and j < len(row) else 0.0

        g = np.zeros(len(_G), dtype=np.float32)
        g[0] = float(obs["step"][0]) / max(1, getattr(inner, "max_steps", 50))
        g[1] = min(1.0, len([ln for ln in str(obs.get("alerts", "")).splitlines() if ln.strip()]) / 10.0)
        g[2] = metric("client_success_ratio")
        g[3] = min(1.0, np.log1p(metric("client_latency_p99_ms")) / 10.0)
        g[4] = 1.0 if self._last_exit else 0.0
        g[5] = min(1.0, self._repairs / 3.0)
        g[6:9] = [1.0 if v in self._did else 0.0 for v in ("get_pods", "get_events", "describe_services")]

        pods = api.list("Pod", ns)
        seen_pods = "get_pods" in self._did
        w = np.zeros((w_cap, len(_W)), dtype=np.float32)
        restarting_nodes: set[str] = set()
        live = {(k, o["metadata"]["name"]): o for k in WORKLOAD_KINDS for o in api.list(k, ns)}
        for i, (kind, name) in enumerate(t.workloads):
            obj = live.get((kind, name))
            if obj is None:
                continue
            row = w[i]
            row[0] = 1.0
            row[1] = 1.0 if metric("ready_replicas", name) < 0.5 else 0.0
            owned = [p for p in pods if _owned_by(p, name)]
            row[2] = 1.0 if metric("restarts", name) > metric("restarts", name, first) else 0.0
            if row[2]:
                restarting_nodes.update(str(p["spec"]["nodeName"]) for p in owned if p["spec"].get("nodeName"))
            row[3] = float(np.clip(metric("error_ratio", name), 0.0, 1.0))
            row[4] = 1.0 if metric("rps", name) > 0.0 else 0.0
            if seen_pods:
                row[5] = 1.0
                reasons = _waiting_reasons(owned)
                row[6] = 1.0 if reasons & {"CrashLoopBackOff", "Error"} else 0.0
                row[7] = 1.0 if reasons & {"CreateContainerConfigError", "CreateContainerError"} else 0.0
                row[8] = 1.0 if reasons & {"ErrImagePull", "ImagePullBackOff", "InvalidImageName"} else 0.0
                row[9] = 1.0 if "Pending" in reasons else 0.0
                row[10] = _restarts_feature(owned)
            if i in self._logs:
                row[11] = 1.0
                row[12 : 12 + len(KEYWORD_CLASSES)] = self._logs[i]
            row[-2] = 1.0 if ("rollout_undo", i) in self._applied else 0.0
            row[-1] = 1.0 if ("rollout_restart", i) in self._applied else 0.0

        s = np.zeros((s_cap, len(_S)), dtype=np.float32)
        services = {o["metadata"]["name"]: o for o in api.list("Service", ns)}
        for i, name in enumerate(t.services):
            svc = services.get(name)
            if svc is None:
                continue
            s[i, 0] = 1.0
            if i in self._described or "describe_services" in self._did:
                s[i, 1] = 1.0
                s[i, 2] = 1.0 if not _ready_addresses(api, name, ns) else 0.0
                declared = cat._declared_port(name)
                ports = svc.get("spec", {}).get("ports") or []
                target = ports[0].get("targetPort", ports[0].get("port")) if ports else None
                s[i, 3] = 1.0 if declared is not None and isinstance(target, int) and int(target) != declared else 0.0
            s[i, 4] = 1.0 if ("fix_target_port", i) in self._applied else 0.0

        n = np.zeros((n_cap, len(_N)), dtype=np.float32)
        nodes = {o["metadata"]["name"]: o for o in api.list("Node")}
        local = {node for pv in api.list("PersistentVolume") if (node := _pv_node(pv))}
        for i, name in enumerate(t.nodes):
            node = nodes.get(name)
            if node is None:
                continue
            n[i, 0] = 1.0
            n[i, 1] = 1.0 if node.get("spec", {}).get("unschedulable") else 0.0
            n[i, 2] = 1.0 if name in local else 0.0
            n[i, 3] = 1.0 if name in restarting_nodes else 0.0
            if seen_pods:
                hosted = [p for p in pods if p.get("spec", {}).get("nodeName") == name]
                n[i, 4] = 1.0
                n[i, 5] = min(1.0, sum(1 for p in hosted if not _pod_ready(p)) / 3.0)
                n[i, 6] = _restarts_feature(hosted)
            if i in self._dmesg:
                n[i, 7] = 1.0
                n[i, 8 : 8 + len(KEYWORD_CLASSES)] = self._dmesg[i]
            n[i, -1] = 1.0 if ("evacuate_node", i) in self._applied else 0.0

        features = np.concatenate([g, w.ravel(), s.ravel(), n.ravel()]).astype(np.float32)
        np.clip(features, -1.0, 1.0, out=features)
        return {"observations": features, "action_mask": np.asarray(obs["action_mask"], dtype=np.int8)}


def _series_index(names: list[str]) -> dict[tuple[str, str | None], int]:
    """(metric name, service label or None) -> column of the metrics window."""
    out: dict[tuple[str, str | None], int] = {}
    for j, name in enumerate(names):
        key = (name.split("{", 1)[0], _series_label(name, "service"))
        out.setdefault(key, j)
    return out


def _owned_by(pod: dict[str, Any], workload: str) -> bool:
    """Pods of a Deployment are named <name>-<rs hash>-<suffix>; a StatefulSet's <name>-<ordinal>."""
    name = pod["metadata"]["name"]
    rest = name[len(workload) + 1 :] if name.startswith(workload + "-") else None
    if rest is None:
        return False
    parts = rest.split("-")
    return (len(parts) == 2) or (len(parts) == 1 and parts[0].isdigit())


def _waiting_reasons(pods: list[dict[str, Any]]) -> set[str]:
    out: set[str] = set()
    for pod in pods:
        status = pod.get("status", {})
        if status.get("phase") == "Pending" and not status.get("containerStatuses"):
            out.add("Pending")
        for cs in status.get("containerStatuses", []) or []:
            waiting = (cs.get("state") or {}).get("waiting")
            if waiting and waiting.get("reason"):
                out.add(str(waiting["reason"]))
            terminated = (cs.get("state") or {}).get("terminated")
            if terminated and terminated.get("reason"):
                out.add(str(terminated["reason"]))
    return out


def _restarts_feature(pods: Any) -> float:
    """The most restarts of one pod among ``pods``, scaled so 5 or more reads 1.

    A pod that crash-loops stands out against the one restart many services take
    at startup (their database was not up yet), which is how an engineer reads
    the RESTARTS column.
    """
    most = max((sum(int(cs.get("restartCount", 0) or 0) for cs in p.get("status", {}).get("containerStatuses") or ()) for p in pods), default=0)
    return min(1.0, most / 5.0)


def _pod_ready(pod: dict[str, Any]) -> bool:
    for cond in pod.get("status", {}).get("conditions", []) or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def _ready_addresses(api: Any, service: str, namespace: str) -> int:
    try:
        ep = api.get("Endpoints", service, namespace)
    except Exception:  # noqa: BLE001 - no Endpoints object: no addresses
        return 0
    return sum(len(sub.get("addresses", []) or []) for sub in ep.get("subsets", []) or [])
