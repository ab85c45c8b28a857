"""The generic on-call runbook baseline: triage by symptom, then the textbook repair.

``RunbookAgent`` plays what an SRE runbook tells an on-call engineer to do, and
nothing more. It reads only what its own commands print (tables, ``describe``
output, logs, ``-o json``/jsonpath of the objects it looked at) and the dashboard the
observation carries (alerts, the trace summary); from the environment it takes
nothing but the namespace it was paged for. It never sees the scenario, its
family, root cause or reference solution (``tests/test_runbook.py`` checks
this), so what it solves is what a symptom -> fix table solves:

* a NotReady node: ``systemctl status kubelet`` -> start/enable or restart it;
* Pending pods: the scheduler's reason -> a request larger than any node (set
  it back to what the namespace's other workloads request), a node selector
  that matches no node (drop the unmatched keys), a leftover maintenance taint
  (remove it), a volume that cannot be placed (roll back a recent rollout);
* no pod at all: ``FailedCreate`` -> an exceeded ResourceQuota (raise it to fit
  what runs plus headroom); a deployment scaled to 0 -> scale it back;
* ImagePullBackOff / CreateContainerConfigError / a crash loop after a recent
  rollout -> diff the revisions, ``rollout undo``;
* OOMKilled -> revert a limit the last rollout lowered, else double it;
* failing liveness/readiness probes -> point the probe at the container's port
  with sane timings;
* disk read errors in the logs and the node's kernel log -> move the node's
  local volumes elsewhere and cordon it;
* every pod healthy: Services without endpoints (selector vs pod labels), a
  targetPort no pod declares, a Service that no longer exists (recreate it
  the way ``kubectl expose`` would, labelled like its siblings),
  DNS overrides for the failing name in CoreDNS's Corefile, authentication
  failures after a credential rotation (restart the client), a deployment on
  the failing path rolled out recently (diff the revisions, undo), HPAs that
  cannot compute utilisation (set the usual CPU request), an Ingress whose
  backend Service does not exist (point it at the one on that port);
* a crash with nothing in the process's log: hardware errors in the node's
  kernel log -> cordon and drain it, move its local volumes;
* node disk pressure: ``df`` says full, out of inodes, or neither (eviction
  thresholds) -> diagnosed, not repaired;
* nothing matched: an honest "no root cause found".

It is a calibration baseline, not an oracle: an incident it solves is one a
table of symptoms solves; one it fails needs reasoning. Some of its textbook
moves (a restart, doubling a limit) are the wrong fix for some incidents, and
the grader rightly scores them 0.

The playbooks are written as one generator (``_play``) that yields commands and
receives their output, so the runbook reads top to bottom like the document it
imitates. Same seed, same cluster -> same transcript.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Generator, Iterable
from typing import Any

import gymnasium as gym

from sre_env.agents.runbook_text import (
    ago_s,
    common_prefix,
    corefile_overrides,
    describe_events,
    describe_field,
    flatten,
    fmt_cpu_m,
    json_patch_cmd,
    last_error,
    load_json,
    parse_table,
    quantity,
    restart_count,
    selector_text,
    tables,
    template_env,
)

__all__ = ["RunbookAgent", "parse_table"]

#: the play yields a command and receives that command's output
Play = Generator[str, str, None]

_IO_ERROR = re.compile(r"I/O error|\bEIO\b|Medium Error|Unrecovered read error|WiredTiger.*(?:error|panic)", re.IGNORECASE)
_HARDWARE_ERROR = re.compile(r"\[Hardware Error\]|Machine Check|EDAC MC\d+: \d+ UE|Memory failure: .*SIGBUS", re.IGNORECASE)
_DNS_ERROR = re.compile(r"no such host|server misbehaving|NXDOMAIN|Temporary failure in name resolution|could not resolve", re.IGNORECASE)
_AUTH_ERROR = re.compile(r"Authentication failed|authentication failed|WRONGPASS|NOAUTH|invalid password|password authentication failed|not authorized", re.IGNORECASE)
_SYSTEM_TAINT = re.compile(r"^node(?:-role)?\.kubernetes\.io/")
#: restarts this recent (seconds) mean the workload is crashing now, not at start-up long ago
_RECENT_RESTART_S = 600
_RUN_LIMIT = 40  # commands before the runbook gives up and submits what it has


class RunbookAgent:
    """A generic on-call runbook: triage (pods, events, workloads, nodes), then the matching repair.

    See the module docstring for the playbooks. ``reset(env)`` reads only the
    namespace of the page; ``act`` only the observation.
    """

    def __init__(self, seed: int | None = None) -> None:  # seed: accepted for make_agent's uniform signature; the runbook is deterministic
        self._play_gen: Play | None = None
        self._findings: list[str] = []

    # ---------------------------------------------------------------- agent protocol
    def reset(self, env: gym.Env) -> None:
        scenario = getattr(env.unwrapped, "scenario", None)
        if scenario is None:
            raise RuntimeError("the environment has no scenario yet: call env.reset() before agent.reset(env)")
        self._ns: str = scenario.namespace  # the page names the namespace; nothing else is read from the env
        self._findings = []
        self._claim: dict[str, Any] | None = None
        self._traces = ""
        self._alerts = ""
        self._commands: list[str] = []
        self._play_gen = self._play()
        self._started = False
        self._done = False

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        if self._play_gen is None:
            raise RuntimeError("RunbookAgent.act() before reset(env)")
        if observation.get("traces"):
            self._traces = str(observation["traces"])
        if observation.get("alerts"):
            self._alerts = str(observation["alerts"])
        command: str | None = None
        if not self._done and len(self._commands) < _RUN_LIMIT:
            try:
                if not self._started:
                    self._started = True
                    command = next(self._play_gen)
                else:
                    command = self._play_gen.send(str(observation.get("output", "")))
            except StopIteration:
                self._done = True
            except Exception as exc:  # noqa: BLE001 - a runbook that trips over odd output still submits what it saw
                self._findings.append(f"(The runbook stopped on unexpected output: {type(exc).__name__}.)")
                self._done = True
        if command is None:
            self._done = True
            return "submit " + self._diagnosis()
        self._commands.append(command)
        return command

    # ---------------------------------------------------------------- diagnosis
    def _found(self, component: str | None, layer: str | None, mechanism: str | None, text: str, details: dict[str, Any] | None = None,
               namespace: str | None = None) -> None:
        """Record what a playbook saw; the first claim with a component is the structured one submitted."""
        self._findings.append(text)
        if component and self._claim is None:
            self._claim = {"component": component, "namespace": namespace or self._ns, "layer": layer, "mechanism": mechanism,
                           "details": {k: v for k, v in (details or {}).items() if v is not None}}

    def _failing_calls(self) -> list[tuple[str, str, str]]:
        """(caller, callee, error) from the trace summary's ``failing call`` lines."""
        return [(m.group(1), m.group(2), m.group(3).strip()) for m in re.finditer(r"failing call: ([\w.-]+) -> ([\w.-]+): (.*)", self._traces)]

    def _alerting_services(self) -> set[str]:
        """Services the firing alerts name (users' errors show up there), minus the component blamed."""
        named = set(re.findall(r"service=([\w.-]+)", self._alerts))
        blamed = str((self._claim or {}).get("component", "")).split("/")[-1]
        return {n for n in named if n != blamed}

    def _diagnosis(self) -> str:
        """The findings in prose, the affected callers from the trace summary, and the structured claim."""
        text = " ".join(self._findings) or "No root cause found: triage showed no failing workload, node or service the runbook covers."
        callers = sorted({caller for caller, _, _ in self._failing_calls()} | self._alerting_services())
        if callers:
            text += " Impact: " + ", ".join(f"deployment/{c}" for c in callers) + " fail on it (users see errors)."
        if self._claim:
            claim = dict(self._claim, affected=[f"deployment/{c}" for c in callers])
            text += "\n" + json.dumps(claim, sort_keys=True)
        return text

    # ---------------------------------------------------------------- the runbook
    def _play(self) -> Play:
        ns = self._ns
        pods_out = yield f"kubectl get pods -n {ns} -o wide"
        events_out = yield f"kubectl get events -n {ns}"
        work_out = yield f"kubectl get deployments,statefulsets -n {ns}"
        nodes_out = yield "kubectl get nodes"

        workloads = self._workloads(work_out)
        pods = parse_table(pods_out)
        events = parse_table(events_out)
        nodes = parse_table(nodes_out)

        not_ready = [n["NAME"] for n in nodes if n.get("STATUS", "").split(",")[0] != "Ready"]
        if not_ready:
            yield from self._node_not_ready(not_ready)
            return

        problem = self._worst_workload(pods, workloads)
        if problem is not None:
            yield from self._unhealthy_workload(*problem, events)
            return

        # no pod is failing: workloads that have no pods at all
        for (kind, name), row in workloads.items():
            ready = row.get("READY", "0/0")
            have, want = (int(x) if x.isdigit() else 0 for x in (ready.split("/") + ["0"])[:2])
            if want == 0 and kind == "deployment":
                yield from self._scaled_to_zero(name)
                return
            if have < want and not any(self._owner(p["NAME"], workloads) == (kind, name) for p in pods):
                yield from self._no_pods(kind, name, events)
                return

        hpa_events = [e for e in events if e.get("OBJECT", "").startswith("horizontalpodautoscaler/") and "missing request for" in e.get("MESSAGE", "")]
        if hpa_events:
            yield from self._hpa_without_requests(hpa_events)
            return

        yield from self._services_and_calls(workloads)

    # ---------------------------------------------------------------- triage helpers
    @staticmethod
    def _workloads(text: str) -> dict[tuple[str, str], dict[str, str]]:
        out: dict[tuple[str, str], dict[str, str]] = {}
        for table in tables(text):
            for row in table:
                full = row.get("NAME", "")
                if "/" not in full:
                    continue
                kind, name = full.split("/", 1)
                out[(kind.split(".")[0], name)] = row
        return out

    @staticmethod
    def _owner(pod: str, workloads: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
        """The workload a pod name belongs to (``name-<rs hash>-<id>`` or ``name-<ordinal>``)."""
        best: tuple[str, str] | None = None
        for kind, name in workloads:
            rest = pod[len(name) + 1:] if pod.startswith(name + "-") else None
            if rest is None:
                continue
            shaped = re.fullmatch(r"\d+", rest) if kind == "statefulset" else re.fullmatch(r"[a-z0-9]+-[a-z0-9]+", rest)
            if shaped and (best is None or len(name) > len(best[1])):
                best = (kind, name)
        return best

    def _worst_workload(self, pods: list[dict[str, str]], workloads: dict[tuple[str, str], dict[str, str]]) -> tuple[str, str, dict[str, str]] | None:
        """The workload whose pod shows the most telling symptom (image, config, scheduling, crash, probe)."""
        ranked = []
        for i, pod in enumerate(pods):
            status, ready = pod.get("STATUS", ""), pod.get("READY", "1/1")
            have, _, want = ready.partition("/")
            restarts = pod.get("RESTARTS", "0")
            recent = (ago_s(restarts) or 1e9) < _RECENT_RESTART_S and restart_count(restarts) >= 2
            if status in ("ImagePullBackOff", "ErrImagePull", "InvalidImageName"):
                rank = 0
            elif status in ("CreateContainerConfigError", "CreateContainerError", "ContainerCreating", "RunContainerError"):
                rank = 1
            elif status == "Pending":
                rank = 2
            elif status in ("CrashLoopBackOff", "Error", "OOMKilled") or recent:
                rank = 3
            elif status.startswith("Init:"):
                rank = 4
            elif status == "Running" and have != want:
                rank = 5
            else:
                continue
            owner = self._owner(pod["NAME"], workloads)
            if owner is not None:
                ranked.append((rank, -restart_count(restarts), i, owner, pod))
        if not ranked:
            return None
        rank, _, _, (kind, name), pod = min(ranked, key=lambda r: r[:3])
        return kind, name, pod

    def _revisions(self, history: str) -> list[int]:
        return [int(m.group(1)) for m in re.finditer(r"^(\d+)\s", history, re.MULTILINE)]

    def _get_containers(self, kind: str, name: str) -> Generator[str, str, list[dict[str, Any]]]:
        """The pod template's containers, read with jsonpath (a whole object can exceed the output limit)."""
        out = yield f"kubectl get {kind} {name} -n {self._ns} -o jsonpath='{{.spec.template.spec.containers}}'"
        try:
            data = json.loads(out)
        except (ValueError, TypeError):
            return []
        return [c for c in data if isinstance(c, dict)] if isinstance(data, list) else []

    # ---------------------------------------------------------------- playbooks: nodes
    def _node_not_ready(self, nodes: list[str]) -> Play:
        """NotReady nodes: is the kubelet running? Start (and enable) it; if it will not stay up, read why."""
        stuck: list[tuple[str, str]] = []
        started: list[str] = []
        for node in nodes:
            yield f"kubectl describe node {node}"
            status = yield f"ssh {node} systemctl status kubelet"
            active = re.search(r"Active:\s+(\S+)", status)
            state = active.group(1) if active else "unknown"
            if state == "active":
                journal = yield f"ssh {node} journalctl -u kubelet -n 20 --no-pager"
                stuck.append((node, last_error(journal)))
                yield f"ssh {node} systemctl restart kubelet"
                continue
            yield f"ssh {node} systemctl enable --now kubelet"
            after = yield f"ssh {node} systemctl is-active kubelet"
            if after.strip().splitlines()[:1] == ["active"]:
                started.append(node)
            else:
                journal = yield f"ssh {node} journalctl -u kubelet -n 20 --no-pager"
                stuck.append((node, last_error(journal)))
        names = ", ".join(f"node/{n}" for n in nodes)
        if started and not stuck:
            self._found(f"node/{started[0]}", "os", "kubelet stopped",
                        f"Root cause: {names} {'is' if len(nodes) == 1 else 'are'} NotReady because the kubelet is not running there (systemctl: inactive); "
                        f"the node stopped posting status and its pods are unreachable. Started the kubelet and enabled it so it survives a reboot.",
                        {"node": started[0], "service": "kubelet"})
        else:
            node, error = stuck[0]
            self._found(f"node/{node}", "os", "kubelet failing",
                        f"{names} {'is' if len(nodes) == 1 else 'are'} NotReady; the kubelet on {node} does not stay healthy after a (re)start. "
                        f"Its journal says: {error[:220] or 'nothing conclusive'}. The runbook has no further step for this error.", {"node": node})
        yield "sleep 30"
        yield "kubectl get nodes"

    # ---------------------------------------------------------------- playbooks: unhealthy pods
    def _unhealthy_workload(self, kind: str, name: str, pod: dict[str, str], events: list[dict[str, str]]) -> Play:
        ns = self._ns
        status = pod.get("STATUS", "")
        desc = yield f"kubectl describe pod {pod['NAME']} -n {ns}"
        ev = describe_events(desc)
        messages = " ".join(m for _, _, m in ev)
        history = ""
        if kind == "deployment":
            history = yield f"kubectl rollout history deployment/{name} -n {ns}"
        revisions = self._revisions(history)

        if status == "Pending":
            yield from self._pending(kind, name, messages, revisions)
            return
        if status in ("ImagePullBackOff", "ErrImagePull", "InvalidImageName"):
            pulled = re.search(r'Failed to pull image "([^"]+)"', messages)
            image = pulled.group(1) if pulled else next(iter(describe_field(desc, "Image")), "?")
            self._found(f"{kind}/{name}", "application", "image pull failure",
                        f"Root cause: {kind}/{name} runs image {image}, which cannot be pulled (ImagePullBackOff: {self._short(messages, 'Failed to pull')}); "
                        f"no new pod can start.", {"image": image})
            yield from self._roll_back(kind, name, revisions, "the image reference changed in the last rollout")
            return
        if status in ("CreateContainerConfigError", "CreateContainerError", "ContainerCreating", "RunContainerError"):
            yield from self._config_error(kind, name, messages, revisions)
            return
        if "OOMKilled" in desc:
            yield from self._oom_killed(kind, name, desc, revisions)
            return
        probe = re.search(r"(Liveness|Readiness|Startup) probe failed: (.*?)(?:\s{2,}|$)", messages)
        if probe:
            yield from self._probe_failing(kind, name, desc, probe.group(1), probe.group(2))
            return
        yield from self._crash_loop(kind, name, pod, desc, revisions)

    @staticmethod
    def _short(messages: str, anchor: str) -> str:
        i = messages.find(anchor)
        return (messages[i:] if i >= 0 else messages)[:180].strip()

    def _roll_back(self, kind: str, name: str, revisions: list[int], why: str) -> Play:
        """``rollout undo`` when the workload has a previous revision; otherwise say so."""
        if kind == "deployment" and len(revisions) > 1:
            self._findings.append(f"The workload was rolled out recently ({why}); rolled {kind}/{name} back to revision {revisions[-2]}.")
            yield f"kubectl rollout undo deployment/{name} -n {self._ns}"
            yield f"kubectl rollout status deployment/{name} -n {self._ns} --timeout=60s"
        else:
            self._findings.append(f"There is no earlier revision of {kind}/{name} to roll back to; left it for a human to repair.")

    # ---- Pending
    def _pending(self, kind: str, name: str, messages: str, revisions: list[int]) -> Play:
        ns = self._ns
        taints = [t for t in re.findall(r"untolerated taint \{([^}]*)\}", messages) if not _SYSTEM_TAINT.match(t.split(":")[0].strip())]
        system_taints = [t.split(":")[0].strip() for t in re.findall(r"untolerated taint \{([^}]*)\}", messages) if _SYSTEM_TAINT.match(t.split(":")[0].strip())]
        insufficient = re.findall(r"Insufficient (cpu|memory)", messages)
        if insufficient:
            yield from self._insufficient(kind, name, insufficient[0])
            return
        if taints:
            yield from self._taint(kind, name, taints[0])
            return
        pressure = [t for t in system_taints if t.endswith("-pressure")]
        if pressure:
            yield from self._node_pressure(kind, name, pressure[0])
            return
        if "volume node affinity conflict" in messages:
            self._found(f"{kind}/{name}", "kubernetes", "volume node affinity conflict",
                        f"Root cause: {kind}/{name}'s pod is Pending: its persistent volume is pinned to a node the pod may not run on (volume node affinity conflict).", {})
            yield from self._roll_back(kind, name, revisions, "its placement changed")
            return
        if re.search(r"didn't match Pod's node affinity/selector|node\(s\) didn't match node selector", messages):
            yield from self._node_selector(kind, name)
            return
        claim = re.search(r'persistentvolumeclaim "([^"]+)" not found', messages)
        if claim:
            self._found(f"{kind}/{name}", "kubernetes", "missing persistentvolumeclaim",
                        f"Root cause: {kind}/{name}'s pod is Pending: persistentvolumeclaim \"{claim.group(1)}\" not found, so its volume cannot be bound.",
                        {"claim": claim.group(1)})
            yield f"kubectl get pvc -n {ns}"
            yield from self._roll_back(kind, name, revisions, "its volume wiring changed")
            return
        reason = self._short(messages, "0/") or "no FailedScheduling event"
        self._found(f"{kind}/{name}", "kubernetes", "pod unschedulable",
                    f"{kind}/{name}'s pod is Pending and the scheduler says: {reason}. The runbook has no repair for this reason.", {})
        yield from self._roll_back(kind, name, revisions, "its pod template changed")

    def _insufficient(self, kind: str, name: str, resource: str) -> Play:
        ns = self._ns
        containers = yield from self._get_containers(kind, name)
        sizes = yield (f"kubectl get deployments,statefulsets -n {ns} -o custom-columns=NAME:.metadata.name,"
                       f"REQ:.spec.template.spec.containers[*].resources.requests.{resource},LIM:.spec.template.spec.containers[*].resources.limits.{resource}")
        alloc_out = yield f"kubectl get nodes -o custom-columns=NAME:.metadata.name,ALLOCATABLE:.status.allocatable.{resource}"
        allocatable = [quantity(r.get("ALLOCATABLE", "0")) for r in parse_table(alloc_out) if r.get("ALLOCATABLE") not in (None, "", "<none>")]
        biggest = max(allocatable) if allocatable else 0.0
        siblings = [r for table in tables(sizes) for r in table if r.get("NAME", "").split("/")[-1] != name]
        if not containers:
            self._findings.append(f"{kind}/{name} is Pending with Insufficient {resource}, but its manifest could not be read.")
            return
        for idx, ctr in enumerate(containers):
            res = ctr.get("resources") or {}
            req = (res.get("requests") or {}).get(resource)
            if req is None or (biggest and quantity(req) <= biggest * 0.5):
                continue
            # what the namespace's other workloads ask for: the usual size of a container here
            sib_req = sorted(v for r in siblings for v in r.get("REQ", "").split(",") if v and v != "<none>")
            sib_lim = sorted(v for r in siblings for v in r.get("LIM", "").split(",") if v and v != "<none>")
            new = json.loads(json.dumps(res))
            if sib_req:
                new.setdefault("requests", {})[resource] = max(set(sib_req), key=sib_req.count)
                if sib_lim:
                    new.setdefault("limits", {})[resource] = max(set(sib_lim), key=sib_lim.count)
                else:
                    (new.get("limits") or {}).pop(resource, None)
            else:
                for key in ("requests", "limits"):
                    (new.get(key) or {}).pop(resource, None)
            new = {k: v for k, v in new.items() if v}
            self._found(f"{kind}/{name}", "kubernetes", "resource request exceeds node allocatable capacity",
                        f"Root cause: {kind}/{name} requests {resource}={req}, more than any node's allocatable {resource} "
                        f"(largest {self._fmt(resource, biggest)}): the scheduler reports Insufficient {resource} on every node and the pod stays Pending. "
                        f"Set the request back to the size the namespace's other workloads use ({new.get('requests', {}).get(resource, 'none')}).",
                        {"resource": resource, "request": req, "container": ctr.get("name")})
            yield json_patch_cmd(kind, name, ns, [{"op": "replace", "path": f"/spec/template/spec/containers/{idx}/resources", "value": new}])
            yield f"kubectl rollout status {kind}/{name} -n {ns} --timeout=60s"
            return
        self._found(None, None, None,
                    f"{kind}/{name}'s pod is Pending with Insufficient {resource}, yet its request is modest: the nodes' capacity is taken by other pods. "
                    f"The runbook has no safe repair for a full cluster.")
        yield "kubectl get pods -A -o wide"

    @staticmethod
    def _fmt(resource: str, amount: float) -> str:
        return fmt_cpu_m(amount * 1000) if resource == "cpu" else f"{amount / 1024**3:.1f}Gi"

    def _node_selector(self, kind: str, name: str) -> Play:
        ns = self._ns
        selector = load_json((yield f"kubectl get {kind} {name} -n {ns} -o jsonpath='{{.spec.template.spec.nodeSelector}}'"))
        labels_out = yield "kubectl get nodes --show-labels"
        node_labels = [dict(kv.split("=", 1) for kv in row.get("LABELS", "").split(",") if "=" in kv) for row in parse_table(labels_out)]
        unmatched = sorted(k for k, v in selector.items() if not any(lbl.get(k) == v for lbl in node_labels))
        if not unmatched:
            self._found(f"{kind}/{name}", "kubernetes", "node affinity matches no node",
                        f"{kind}/{name}'s pod is Pending: no node matches its node affinity/selector. Its nodeSelector matches existing nodes, "
                        f"so the affinity rule itself needs a human.", {})
            return
        pairs = ", ".join(f"{k}={selector[k]}" for k in unmatched)
        self._found(f"{kind}/{name}", "kubernetes", "nodeSelector matches no node",
                    f"Root cause: {kind}/{name} has nodeSelector {pairs}, which no node carries (non-existent node label), so its pod stays Pending "
                    f"(didn't match Pod's node affinity/selector). Removed the unmatched selector.", {"nodeSelector": pairs})
        if len(unmatched) == len(selector):
            ops = [{"op": "remove", "path": "/spec/template/spec/nodeSelector"}]
        else:
            ops = [{"op": "remove", "path": "/spec/template/spec/nodeSelector/" + k.replace("~", "~0").replace("/", "~1")} for k in unmatched]
        yield json_patch_cmd(kind, name, ns, ops)
        yield f"kubectl rollout status {kind}/{name} -n {ns} --timeout=60s"

    def _node_taints(self) -> Generator[str, str, list[tuple[str, list[dict[str, Any]]]]]:
        """(node, taints) for every node, read compactly (``describe nodes`` of a whole cluster exceeds the output limit)."""
        out = yield "kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{\"\\t\"}{.spec.taints}{\"\\n\"}{end}'"
        rows = []
        for line in out.splitlines():
            node, _, raw = line.partition("\t")
            try:
                taints = json.loads(raw) if raw.strip() else []
            except ValueError:
                taints = []
            rows.append((node.strip(), [t for t in taints if isinstance(t, dict)] if isinstance(taints, list) else []))
        return rows

    def _taint(self, kind: str, name: str, taint: str) -> Play:
        key, _, value = (part.strip() for part in taint.partition(":"))
        tainted = []
        for node, taints in (yield from self._node_taints()):
            for t in taints:
                if t.get("key") == key and t.get("effect") in ("NoSchedule", "NoExecute"):
                    tainted.append((node, str(t["effect"])))
        if not tainted:
            self._found(f"{kind}/{name}", "kubernetes", "untolerated taint", f"{kind}/{name}'s pod is Pending on an untolerated taint {key}, but no node shows it now.", {})
            return
        names = ", ".join(n for n, _ in tainted)
        self._found(f"node/{tainted[0][0]}", "kubernetes", "node taint without toleration",
                    f"Root cause: node(s) {names} carry the taint {key}{'=' + value if value else ''} (left from maintenance) that {kind}/{name} "
                    f"does not tolerate, so its pod stays Pending (untolerated taint) and the pods evicted from there cannot come back. Removed the taint.",
                    {"taint": key, "node": tainted[0][0]})
        for node, effect in tainted:
            yield f"kubectl taint nodes {node} {key}:{effect}-"
        yield "sleep 30"
        yield f"kubectl get pods -n {self._ns} -o wide"

    def _node_pressure(self, kind: str, name: str, taint: str) -> Play:
        condition = taint.split("/")[-1]
        node = next((n for n, taints in (yield from self._node_taints()) if any(t.get("key") == taint for t in taints)), None)
        if node is None:
            self._findings.append(f"{kind}/{name}'s pod is Pending on a {condition} taint, but no node shows it now.")
            return
        df = yield f"ssh {node} df -h /"
        dfi = yield f"ssh {node} df -i /"
        space, inodes = self._df_use(df), self._df_use(dfi)
        if space is not None and space >= 85:
            what, mechanism = f"its root file system is {space}% full (disk full)", "node root disk full (DiskPressure evictions)"
        elif inodes is not None and inodes >= 85:
            what, mechanism = f"its root file system has used {inodes}% of its inodes (inode exhaustion) with disk space left", "node inodes exhausted (DiskPressure evictions)"
        else:
            what = f"yet its root file system is only {space if space is not None else '?'}% full: the kubelet's eviction thresholds are stricter than the disk"
            mechanism = "kubelet eviction threshold misconfigured"
        self._found(f"node/{node}", "os" if "threshold" not in mechanism else "kubernetes", mechanism,
                    f"node/{node} reports {condition} (taint {taint}) and the kubelet evicts pods from it; {what}. {kind}/{name} cannot be placed. "
                    f"Freeing the node needs to know what filled it or why the kubelet thinks so; the runbook stops here.", {"node": node})

    @staticmethod
    def _df_use(text: str) -> int | None:
        """The use percentage of the last line of ``df -h`` / ``df -i`` output."""
        for line in reversed(text.splitlines()):
            m = re.search(r"\s(\d+)%\s+/\S*\s*$", line)
            if m:
                return int(m.group(1))
        return None

    # ---- FailedCreate / scaled to zero
    def _no_pods(self, kind: str, name: str, events: list[dict[str, str]]) -> Play:
        ns = self._ns
        failed = [e.get("MESSAGE", "") for e in events if e.get("REASON") == "FailedCreate" and name in e.get("OBJECT", "")]
        if not failed:
            desc = yield f"kubectl describe {kind} {name} -n {ns}"
            failed = [m for _, r, m in describe_events(desc) if r == "FailedCreate"]
        message = failed[-1] if failed else ""
        quota = re.search(r"exceeded quota: ([\w.-]+), requested: ([\w.]+)=(\S+?), used: [\w.]+=(\S+?), limited: [\w.]+=(\S+)", message)
        if quota:
            qname, resource, requested, used, limited = quota.groups()
            yield f"kubectl describe quota {qname} -n {ns}"
            need = (quantity(used) + quantity(requested)) * 1.25
            if resource.endswith("cpu"):
                value = str(int(-(-need // 1))) if need >= 1 else fmt_cpu_m(need * 1000)
            elif resource.endswith("memory"):
                value = f"{int(-(-need // 1024**3))}Gi"
            else:
                value = str(int(-(-need // 1)))
            self._found(f"resourcequota/{qname}", "kubernetes", "resourcequota exceeded",
                        f"Root cause: ResourceQuota {qname} caps {resource} at {limited}, below what the namespace already uses ({used}); "
                        f"{kind}/{name}'s ReplicaSet cannot create its pod (FailedCreate: exceeded quota), so it has no pod. Raised the quota's {resource} to {value} "
                        f"(what runs now plus the new pod, with headroom).", {"quota": qname, "resource": resource, "hard": limited})
            yield f"kubectl patch resourcequota {qname} -n {ns} --type=merge -p '{json.dumps({'spec': {'hard': {resource: value}}})}'"
            yield "sleep 20"
            yield f"kubectl get pods -n {ns}"
            return
        if message:
            webhook = re.search(r'failed calling webhook "([^"]+)"', message)
            if webhook:
                self._found(f"validatingwebhookconfiguration/{webhook.group(1)}", "kubernetes", "admission webhook failing",
                            f"{kind}/{name} has no pod: its ReplicaSet's pod creation is rejected because the admission webhook {webhook.group(1)} cannot be called "
                            f"({self._short(message, 'failed calling')}). The runbook does not change admission policy; escalated.", {"webhook": webhook.group(1)})
                return
            self._found(f"{kind}/{name}", "kubernetes", "pod creation forbidden",
                        f"{kind}/{name} has no pod: pod creation fails ({message[:220]}). The runbook has no repair for this.", {})
            return
        self._findings.append(f"{kind}/{name} has fewer pods than it wants, and no event says why.")

    def _scaled_to_zero(self, name: str) -> Play:
        ns = self._ns
        hpa = yield f"kubectl get hpa -n {ns}"
        replicas = 1
        for row in parse_table(hpa):
            if row.get("REFERENCE", "").endswith("/" + name) and row.get("MINPODS", "").isdigit():
                replicas = max(1, int(row["MINPODS"]))
        self._found(f"deployment/{name}", "kubernetes", "deployment scaled to zero replicas",
                    f"Root cause: deployment/{name} is scaled to 0 replicas, so it has no pod and its Service has no endpoints; "
                    f"its callers fail. Scaled it back to {replicas}.", {"replicas": 0})
        yield f"kubectl scale deployment/{name} -n {ns} --replicas={replicas}"
        yield f"kubectl rollout status deployment/{name} -n {ns} --timeout=60s"

    # ---- config errors
    def _config_error(self, kind: str, name: str, messages: str, revisions: list[int]) -> Play:
        missing = re.search(r'(configmap|secret|persistentvolumeclaim)s? "([^"]+)" not found', messages)
        if missing:
            what, obj = missing.groups()
            self._found(f"{what}/{obj}", "kubernetes", f"missing {what}",
                        f"Root cause: {kind}/{name}'s container cannot be created: {what} \"{obj}\" not found (it was deleted or never created), "
                        f"so the pod never starts.", {what: obj})
            yield from self._roll_back(kind, name, revisions, f"it may have started referencing {what} {obj}")
            return
        if "runAsNonRoot" in messages:
            self._found(f"{kind}/{name}", "kubernetes", "security context runAsNonRoot", f"{kind}/{name}'s container cannot start: {self._short(messages, 'Error')}.", {})
            yield from self._roll_back(kind, name, revisions, "its security context changed")
            return
        sandbox = re.search(r"Failed to create pod sandbox: (.*)", messages)
        if sandbox:
            self._found(f"{kind}/{name}", "network", "pod sandbox network setup failed",
                        f"{kind}/{name}'s pod is stuck ContainerCreating: {sandbox.group(1)[:220]}. The node's pod network (CNI/IPAM) needs a human.", {})
            return
        self._found(f"{kind}/{name}", "kubernetes", "container creation failed", f"{kind}/{name}'s container cannot be created: {messages[:220]}.", {})
        yield from self._roll_back(kind, name, revisions, "its pod template changed")

    # ---- OOMKilled
    def _oom_killed(self, kind: str, name: str, desc: str, revisions: list[int]) -> Play:
        ns = self._ns
        limits = re.search(r"Limits:\s*\n(?:\s+\w+:\s+\S+\n)*?\s+memory:\s+(\S+)", desc)
        limit = limits.group(1) if limits else None
        previous: str | None = None
        if kind == "deployment" and len(revisions) > 1:
            before = yield f"kubectl rollout history deployment/{name} -n {ns} --revision={revisions[-2]}"
            m = re.search(r"Limits:\s*\n(?:\s+\w+:\s+\S+\n)*?\s+memory:\s+(\S+)", before)
            previous = m.group(1) if m else "none"
        self._found(f"{kind}/{name}", "kubernetes", "memory limit too low (OOMKilled)",
                    f"Root cause: {kind}/{name}'s container is OOMKilled (exit code 137) over and over: its memory limit {limit} is below what the process needs, "
                    f"so it restarts in a loop.", {"memory_limit": limit})
        if previous is not None and (previous == "none" or (limit and quantity(previous) > quantity(limit))):
            self._findings.append(f"The last rollout lowered the memory limit (revision {revisions[-2]}: {previous}); rolled it back.")
            yield f"kubectl rollout undo deployment/{name} -n {ns}"
            yield f"kubectl rollout status deployment/{name} -n {ns} --timeout=60s"
            return
        containers = yield from self._get_containers(kind, name)
        for ctr in containers:
            lim = ((ctr.get("resources") or {}).get("limits") or {}).get("memory")
            if lim:
                doubled = f"{int(quantity(lim) * 2 / 1024**2)}Mi"
                self._findings.append(f"Doubled the memory limit of container {ctr.get('name')} ({lim} -> {doubled}).")
                yield f"kubectl set resources {kind}/{name} -n {ns} -c {ctr.get('name')} --limits=memory={doubled}"
                return

    # ---- probes
    def _probe_failing(self, kind: str, name: str, desc: str, which: str, failure: str) -> Play:
        ns = self._ns
        containers = yield from self._get_containers(kind, name)
        key = which.lower() + "Probe"
        for idx, ctr in enumerate(containers):
            probe = ctr.get(key)
            ports = [p.get("containerPort") for p in ctr.get("ports") or [] if p.get("containerPort")]
            if not probe or not ports:
                continue
            handler = "httpGet" if "httpGet" in probe else "tcpSocket" if "tcpSocket" in probe else None
            port = (probe.get(handler) or {}).get("port") if handler else None
            named = {p.get("name"): p.get("containerPort") for p in ctr.get("ports") or []}
            port_n = named.get(port, port) if isinstance(port, str) else port
            wrong_port = handler is not None and port_n not in ports
            # an HTTP probe the port cannot answer: no such path, or the port speaks another protocol (gRPC, Thrift)
            bad_http = handler == "httpGet" and re.search(r"statuscode: (?:404|400|405)|malformed HTTP response|connection reset by peer|EOF", failure)
            tight = (probe.get("initialDelaySeconds", 0) < 5 and probe.get("failureThreshold", 3) <= 1) or probe.get("periodSeconds", 10) <= 1
            if not (wrong_port or bad_http or tight):
                continue
            good = {"tcpSocket": {"port": ports[0]}} if (wrong_port or bad_http or handler is None) else {handler: probe[handler]}
            good.update({"initialDelaySeconds": max(10, int(probe.get("initialDelaySeconds", 0))), "periodSeconds": 10,
                         "timeoutSeconds": max(2, int(probe.get("timeoutSeconds", 1))), "failureThreshold": 3})
            if wrong_port:
                what = f"probes port {port}" + (f" path {probe['httpGet'].get('path')}" if handler == "httpGet" else "") + f" but the container listens on {ports[0]}"
                mechanism = f"{which.lower()} probe misconfigured (wrong port)"
            elif bad_http:
                what = f"sends HTTP GET {probe['httpGet'].get('path', '/')} to port {port}, which does not answer it (wrong path or not an HTTP port)"
                mechanism = f"{which.lower()} probe misconfigured (wrong path/protocol)"
            else:
                what = (f"fires after {probe.get('initialDelaySeconds', 0)}s with failureThreshold {probe.get('failureThreshold', 3)} "
                        f"and period {probe.get('periodSeconds', 10)}s, too aggressive: it kills the container before it has started")
                mechanism = f"{which.lower()} probe too aggressive"
            self._found(f"{kind}/{name}", "kubernetes", mechanism,
                        f"Root cause: {kind}/{name}'s {which.lower()} probe {what} ({which} probe failed: {failure[:120]}). "
                        + ("The container is restarted in a loop." if which == "Liveness" else "The pod never becomes Ready and is kept out of its Service's endpoints.")
                        + f" Pointed the probe at port {ports[0]} with sane timings.",
                        {"probe_port": port, "listen_port": ports[0]})
            yield json_patch_cmd(kind, name, ns, [{"op": "replace", "path": f"/spec/template/spec/containers/{idx}/{key}", "value": good}])
            yield f"kubectl rollout status {kind}/{name} -n {ns} --timeout=90s"
            return
        self._found(f"{kind}/{name}", "kubernetes", f"{which.lower()} probe failing",
                    f"{kind}/{name}'s {which.lower()} probe fails ({failure[:160]}) although it targets the port the container declares; the process itself is not answering.", {})

    # ---- crash loops
    def _crash_loop(self, kind: str, name: str, pod: dict[str, str], desc: str, revisions: list[int]) -> Play:
        ns = self._ns
        crashed = [c for c in re.findall(r"Back-off restarting failed container (\S+)", desc)]
        container = f" -c {crashed[0]}" if crashed and len(describe_field(desc, "Container ID")) > 1 else ""
        logs = yield f"kubectl logs {pod['NAME']} -n {ns}{container} --previous --tail=30"
        if "previous terminated container" in logs or not logs.strip():
            logs = yield f"kubectl logs {pod['NAME']} -n {ns}{container} --tail=30"
        fatal = [line.strip() for line in logs.splitlines() if re.search(r"\b(?:FTL|fatal|panic|FATAL|ERROR|ERR|Exception|error)\b", line)]
        last = fatal[-1][:200] if fatal else (logs.strip().splitlines() or [""])[-1][:200]

        if _IO_ERROR.search(logs):
            node = pod.get("NODE", "")
            if node and node != "<none>":
                dmesg = yield f"ssh {node} dmesg | tail -20"
                if _IO_ERROR.search(dmesg):
                    yield from self._evacuate(kind, name, node, last)
                    return
        if kind == "deployment" and len(revisions) > 1:
            undone = yield from self._diff_and_undo(kind, name, revisions, last)
            if undone:
                return
        node = pod.get("NODE", "")
        if node and node != "<none>" and not _IO_ERROR.search(logs):
            # a process that dies with nothing in its own log: what does the machine's kernel say?
            dmesg = yield f"ssh {node} dmesg | tail -20"
            hardware = [line for line in dmesg.splitlines() if _HARDWARE_ERROR.search(line)]
            if hardware:
                yield from self._evacuate(kind, name, node, last, hardware=hardware[-1].split("]", 1)[-1].strip())
                return
        if _DNS_ERROR.search(logs):
            yield from self._dns(name, logs)
            return
        self._found(f"{kind}/{name}", "application", "container crash-looping",
                    f"{kind}/{name} keeps restarting (CrashLoopBackOff); its last log line before exiting: {last or 'nothing'}. "
                    f"No recent rollout to revert; restarted it.", {})
        yield f"kubectl rollout restart {kind}/{name} -n {ns}"
        yield f"kubectl rollout status {kind}/{name} -n {ns} --timeout=60s"

    def _diff_and_undo(self, kind: str, name: str, revisions: list[int], last: str, crash: bool = True) -> Generator[str, str, bool]:
        """What did the last rollout change? Roll it back when it changed the pod spec (not for a mere restart)."""
        ns = self._ns
        before_out = yield f"kubectl rollout history deployment/{name} -n {ns} --revision={revisions[-2]}"
        after_out = yield f"kubectl rollout history deployment/{name} -n {ns} --revision={revisions[-1]}"
        before, after = template_env(before_out), template_env(after_out)
        removed = [f"{k} (= {v})" for k, v in before.items() if k not in after]
        changed = [f"{k} ({before[k]} -> {after[k]})" for k in before if k in after and before[k] != after[k]]
        added = [f"{k} (= {v})" for k, v in after.items() if k not in before]
        other = [line.strip() for line in difflib.unified_diff(before_out.splitlines()[1:], after_out.splitlines()[1:], lineterm="", n=0)
                 if line[:1] in "+-" and not line.startswith(("+++", "---")) and "Environment" not in line
                 and not re.match(r"[+-]\s+(?:Annotations:\s+)?[\w./-]+:\s", line) or re.match(r"[+-]\s+(?:Image|Port|Command|Args|Limits|Requests):", line)][:4]
        parts = [x for x in (
            ("env var " + ", ".join(removed) + " was removed from the pod template") if removed else "",
            ("env var " + ", ".join(changed) + " was changed") if changed else "",
            ("env var " + ", ".join(added) + " was added") if added else "",
        ) if x]
        if not parts and not other:
            # `rollout history` does not print every field (dnsPolicy, probes, strategy...): compare the ReplicaSets' pod specs
            spec_diff = yield from self._replicaset_diff(name, revisions[-2], revisions[-1])
            other = spec_diff
            if not spec_diff:
                self._findings.append(f"The last rollout of {kind}/{name} (revision {revisions[-1]}) only restarted its pods; nothing to roll back.")
                return False
            last = ""  # the changed field is the evidence; a start-up error quoted from the logs only names bystanders
        what = "; ".join(parts) or ("its pod template changed: " + "; ".join(other) if other else "its pod template changed")
        if removed:
            mechanism = "missing required environment variable"
        elif changed or added:
            mechanism = "bad configuration change (environment variable)"
        else:
            mechanism = "bad configuration change in the last rollout"
        details = {k: v for k, v in before.items() if k not in after} or {k: before[k] for k in before if k in after and before[k] != after[k]}
        self._found(f"{kind}/{name}", "application", mechanism,
                    f"Root cause: {kind}/{name} — in its last rollout {what}" + (f"; the process exits at start-up with: {last}" if last else "")
                    + (", so it crash-loops." if crash else ", and its callers' requests have failed since.") + f" Rolled {kind}/{name} back to revision {revisions[-2]}.",
                    {"variable": next(iter(details), None), "expected_value": next(iter(details.values()), None)} if details else {})
        yield f"kubectl rollout undo deployment/{name} -n {ns}"
        if not crash:  # a serving workload: wait until the rolled-back pods have replaced the bad ones
            yield f"kubectl rollout status deployment/{name} -n {ns} --timeout=90s"
        return True

    def _replicaset_diff(self, name: str, old: int, new: int) -> Generator[str, str, list[str]]:
        """``field: before -> after`` for the pod-spec fields that differ between two revisions' ReplicaSets."""
        ns = self._ns
        labels = load_json((yield f"kubectl get deployment {name} -n {ns} -o jsonpath='{{.spec.selector.matchLabels}}'"))
        if not labels:
            return []
        selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        out = yield (f"kubectl get rs -n {ns} -l {selector} -o jsonpath='{{range .items[*]}}"
                     f"{{.metadata.annotations.deployment\\.kubernetes\\.io/revision}}{{\"\\t\"}}{{.spec.template.spec}}{{\"\\n\"}}{{end}}'")
        specs: dict[int, dict[str, Any]] = {}
        for line in out.splitlines():
            rev, _, spec = line.partition("\t")
            if rev.strip().isdigit():
                specs[int(rev)] = load_json(spec)
        if old not in specs or new not in specs:
            return []
        before, after = flatten(specs[old]), flatten(specs[new])
        return [f"{path}: {before.get(path, '<unset>')} -> {after.get(path, '<unset>')}"
                for path in sorted(set(before) | set(after)) if before.get(path) != after.get(path)][:6]

    def _evacuate(self, kind: str, name: str, node: str, last: str, hardware: str | None = None) -> Play:
        """A failing machine: cordon it, recreate the namespace's local volumes there elsewhere (and drain it for non-disk faults).

        Disk read errors only hurt what reads that disk, so the volumes move and the
        rest stays; memory or CPU errors (``hardware``) hit every pod there, so the
        node is drained as well.
        """
        ns = self._ns
        tab = '{"\\t"}'
        claims_out = yield (f"kubectl get pvc -n {ns} -o jsonpath='{{range .items[*]}}{{.metadata.name}}{tab}{{.spec.volumeName}}{tab}"
                            f"{{.spec.storageClassName}}{tab}{{.spec.resources.requests.storage}}{tab}{{.spec.accessModes}}{tab}{{.metadata.labels}}{{\"\\n\"}}{{end}}'")
        pv_out = yield ("kubectl get pv -o custom-columns=NAME:.metadata.name,"
                        "NODE:.spec.nodeAffinity.required.nodeSelectorTerms[*].matchExpressions[*].values[*]")
        pods_out = yield f"kubectl get pods -n {ns} -o custom-columns=NAME:.metadata.name,CLAIMS:.spec.volumes[*].persistentVolumeClaim.claimName"
        pv_node = {r.get("NAME"): r.get("NODE", "").split(",")[0] for r in parse_table(pv_out)}
        local = []
        for line in claims_out.splitlines():
            cells = line.split("\t")
            if len(cells) == 6 and pv_node.get(cells[1]) == node:
                local.append(cells)
        if hardware:
            self._found(f"node/{node}", "hardware", "hardware memory errors (machine check, EDAC uncorrectable errors) on the node",
                        f"Root cause: node/{node} has hardware errors in its kernel log ({hardware[:160]}); processes on it are killed (SIGBUS) and "
                        f"{kind}/{name} restarts with nothing in its own log. Cordoned and drained {node} and moved its local volumes to healthy nodes.",
                        {"node": node})
        else:
            self._found(f"node/{node}", "hardware", "disk read errors (I/O errors, bad sectors) on the node's disk",
                        f"Root cause: the disk of node/{node} has read errors (I/O errors in its kernel log); {kind}/{name} keeps its data on a local volume there "
                        f"and crash-loops ({last[:120]}). Moved the local volumes off {node} and cordoned it.", {"node": node, "database": name})
        yield f"kubectl cordon {node}"
        if not local and not hardware:
            return
        manifests = []
        for claim, _volume, klass, size, modes, labels in sorted(local):
            yield f"kubectl delete pvc {claim} -n {ns} --wait=false"
            for row in parse_table(pods_out):
                if not hardware and claim in row.get("CLAIMS", "").split(","):
                    yield f"kubectl delete pod {row['NAME']} -n {ns} --wait=false"
            manifest = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": claim, **({"labels": load_json(labels)} if load_json(labels) else {})},
                        "spec": {"accessModes": load_json(f'{{"m": {modes}}}').get("m") or ["ReadWriteOnce"], "resources": {"requests": {"storage": size or "1Gi"}},
                                 **({"storageClassName": klass} if klass else {})}}
            manifests.append("---\n" + json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        if hardware:
            yield f"kubectl drain {node} --ignore-daemonsets --delete-emptydir-data"
        yield "sleep 15"
        if manifests:
            yield f"kubectl apply -n {ns} -f - <<'EOF'\n" + "".join(manifests) + "EOF"
        yield "sleep 30"

    # ---------------------------------------------------------------- playbooks: every pod healthy
    def _services_and_calls(self, workloads: dict[tuple[str, str], dict[str, str]]) -> Play:
        ns = self._ns
        endpoints = parse_table((yield f"kubectl get endpoints -n {ns}"))
        empty = [e["NAME"] for e in endpoints if e.get("ENDPOINTS", "") in ("<none>", "")]
        if empty:
            yield from self._selector(empty[0])
            return
        tab, nl = '{"\\t"}', '{"\\n"}'
        services = yield f"kubectl get svc -n {ns} -o jsonpath='{{range .items[*]}}{{.metadata.name}}{tab}{{.spec.selector}}{tab}{{.spec.ports[*].targetPort}}{nl}{{end}}'"
        listing = yield (f"kubectl get deployments,statefulsets -n {ns} -o jsonpath='{{range .items[*]}}{{.metadata.name}}{tab}"
                         f"{{.spec.template.metadata.labels}}{tab}{{.spec.template.spec.containers[*].ports[*].containerPort}}{nl}{{end}}'")
        declared_by: list[tuple[str, dict[str, str], list[int]]] = []
        for line in listing.splitlines():
            cells = line.split("\t")
            if len(cells) == 3:
                labels = load_json(cells[1])
                declared_by.append((cells[0], {str(k): str(v) for k, v in labels.items()}, [int(p) for p in cells[2].split() if p.isdigit()]))
        callees = {callee for _, callee, _ in self._failing_calls()}
        for line in services.splitlines():
            cells = line.split("\t")
            if callees and cells[0] not in callees:
                continue
            if len(cells) != 3 or not cells[2].split() or not cells[2].split()[0].isdigit():
                continue
            name, sel, port = cells[0], {str(k): str(v) for k, v in load_json(cells[1]).items()}, int(cells[2].split()[0])
            selected = [(w, labels, ports) for w, labels, ports in declared_by if sel and all(labels.get(k) == v for k, v in sel.items())]
            declared = [p for _, _, ports in selected for p in ports]
            namesake = next(((labels, ports) for w, labels, ports in declared_by if w == name), None)
            if (declared and port not in declared and selected and namesake is not None and name not in [w for w, _, _ in selected]
                    and port in namesake[1] and all(k in namesake[0] for k in sel)):
                # the Service selects another workload's pods; its own workload (same name) serves the targetPort
                fixed = {k: namesake[0][k] for k in sel}
                others = ", ".join(f"deployment/{w}" for w, _, _ in selected)
                self._found(f"service/{name}", "kubernetes", "service selector matches the wrong pods",
                            f"Root cause: service/{name}'s selector {selector_text(sel)} matches the pods of {others}, not deployment/{name}'s (wrong selector), "
                            f"so its traffic goes to pods that do not serve port {port}. Changed the selector to {selector_text(fixed)}.",
                            {"selector": selector_text(sel), "expected_selector": selector_text(fixed)})
                yield json_patch_cmd("service", name, ns, [{"op": "replace", "path": "/spec/selector", "value": fixed}])
                return
            if declared and port not in declared:
                self._found(f"service/{name}", "kubernetes", "service targetPort misconfigured",
                            f"Root cause: service/{name} has targetPort {port}, but its pods listen on {declared[0]}, so connections to it are refused. "
                            f"Repointed the targetPort to {declared[0]}.", {"service": name, "targetPort": port, "expected_targetPort": declared[0]})
                yield json_patch_cmd("service", name, ns, [{"op": "replace", "path": "/spec/ports/0/targetPort", "value": declared[0]}])
                return
        changed = yield from self._recent_change()
        if changed:
            return
        calls = self._failing_calls()
        if not calls:
            # users fail but no call inside the app does: look at the front door
            fixed = yield from self._ingress(services)
            if fixed:
                return
            self._found(None, None, None, "Triage found every pod running and ready, every Service with endpoints on the declared ports, and no failing call in the traces. "
                                          "No root cause found; nothing was changed.")
            return
        caller, callee, error = calls[0]
        if _DNS_ERROR.search(error):
            yield from self._dns(caller, error)
            return
        if _AUTH_ERROR.search(error):
            yield from self._auth(caller, callee, error)
            return
        logs = yield f"kubectl logs deployment/{callee} -n {ns} --tail=20" if ("deployment", callee) in workloads else f"kubectl logs deployment/{caller} -n {ns} --tail=20"
        self._found(None, None, None,
                    f"Every pod is running and ready and every Service has endpoints, but calls {caller} -> {callee} fail ({error[:160]}). "
                    f"No root cause the runbook covers; nothing was changed.")
        del logs

    def _errors_by_service(self) -> list[str]:
        m = re.search(r"errors by service: (.*)", self._traces)
        return [part.split()[0] for part in m.group(1).split(",") if part.strip()] if m else []

    def _recent_change(self) -> Generator[str, str, bool]:
        """What changed recently on the failing path? A deployment there with a new revision is rolled back."""
        ns = self._ns
        tab, nl = '{"\\t"}', '{"\\n"}'
        out = yield (f"kubectl get deployments -n {ns} -o jsonpath='{{range .items[*]}}{{.metadata.name}}{tab}"
                     f"{{.metadata.annotations.deployment\\.kubernetes\\.io/revision}}{nl}{{end}}'")
        revised = {cells[0]: int(cells[1]) for cells in (line.split("\t") for line in out.splitlines()) if len(cells) == 2 and cells[1].strip().isdigit()}
        path: list[str] = []
        for caller, callee, _ in self._failing_calls():
            path += [callee, caller]
        path += self._errors_by_service() + sorted(re.findall(r"service=([\w.-]+)", self._alerts))
        candidates = [n for n in dict.fromkeys(path) if revised.get(n, 1) > 1]
        if not candidates:
            return False
        for name in candidates[:3]:
            history = yield f"kubectl rollout history deployment/{name} -n {ns}"
            revisions = self._revisions(history)
            if len(revisions) >= 2:
                undone = yield from self._diff_and_undo("deployment", name, revisions, "", crash=False)
                if undone:
                    return True
        return False

    def _hpa_without_requests(self, events: list[dict[str, str]]) -> Play:
        """HPAs that cannot compute utilisation because the target's containers request no CPU: set the usual request."""
        ns = self._ns
        hpas = parse_table((yield f"kubectl get hpa -n {ns}"))
        targets = []
        for row in hpas:
            ref = row.get("REFERENCE", "")
            if ref.lower().startswith("deployment/") and any(e.get("OBJECT") == f"horizontalpodautoscaler/{row.get('NAME')}" for e in events):
                targets.append(ref.split("/", 1)[1])
        resource = "memory" if any("missing request for memory" in e.get("MESSAGE", "") for e in events) else "cpu"
        sizes = yield (f"kubectl get deployments -n {ns} -o custom-columns=NAME:.metadata.name,"
                       f"REQ:.spec.template.spec.containers[*].resources.requests.{resource},LIM:.spec.template.spec.containers[*].resources.limits.{resource}")
        rows = parse_table(sizes)
        sib_req = sorted(v for r in rows if r.get("NAME") not in targets for v in r.get("REQ", "").split(",") if v and v != "<none>")
        sib_lim = sorted(v for r in rows if r.get("NAME") not in targets for v in r.get("LIM", "").split(",") if v and v != "<none>")
        if not targets or not sib_req:
            self._found(None, None, None, f"HorizontalPodAutoscalers report missing {resource} requests, but the runbook found no usual request size to set.")
            return
        req = max(set(sib_req), key=sib_req.count)
        lim = max(set(sib_lim), key=sib_lim.count) if sib_lim else None
        self._found(f"deployment/{targets[0]}", "kubernetes", f"HPA cannot compute utilisation: containers have no {resource} requests",
                    f"Root cause: the HorizontalPodAutoscalers of {', '.join('deployment/' + t for t in targets)} cannot compute {resource} utilisation "
                    f"(FailedGetResourceMetric: missing request for {resource}) because their containers set no {resource} requests, so they never scale out "
                    f"and the service buckles under load. Set {resource} requests={req}" + (f", limits={lim}" if lim else "") + " as on the other workloads.",
                    {"deployments": ", ".join(targets), "resource": resource})
        for target in targets:
            containers = yield from self._get_containers("deployment", target)
            for idx, ctr in enumerate(containers):
                res = json.loads(json.dumps(ctr.get("resources") or {}))
                if (res.get("requests") or {}).get(resource):
                    continue
                res.setdefault("requests", {})[resource] = req
                if lim and not (res.get("limits") or {}).get(resource):
                    res.setdefault("limits", {})[resource] = lim
                yield json_patch_cmd("deployment", target, ns, [{"op": "replace" if ctr.get("resources") is not None else "add",
                                                         "path": f"/spec/template/spec/containers/{idx}/resources", "value": res}])
        yield "sleep 45"
        yield f"kubectl get hpa -n {ns}"

    def _ingress(self, services: str) -> Generator[str, str, bool]:
        """An Ingress whose backend names a Service that does not exist: point it at the existing Service on that port."""
        ns = self._ns
        ingresses = parse_table((yield f"kubectl get ingress -n {ns}"))
        existing = [line.split("\t")[0] for line in services.splitlines() if line.strip()]
        for row in ingresses:
            name = row.get("NAME", "")
            desc = yield f"kubectl describe ingress {name} -n {ns}"
            broken = re.search(r"(\S+):(\d+) \(<error: services \"([^\"]+)\" not found>\)", desc)
            if not broken:
                continue
            missing, port = broken.group(3), int(broken.group(2))
            obj = load_json((yield f"kubectl get ingress {name} -n {ns} -o json"))
            ports_out = yield f"kubectl get svc -n {ns} -o jsonpath='{{range .items[*]}}{{.metadata.name}}{{\"\\t\"}}{{.spec.ports[*].port}}{{\"\\n\"}}{{end}}'"
            on_port = [c[0] for c in (line.split("\t") for line in ports_out.splitlines()) if len(c) == 2 and str(port) in c[1].split()]
            best = difflib.get_close_matches(missing, on_port, n=1, cutoff=0.5) or (on_port if len(on_port) == 1 else [])
            ops = []
            for r, rule in enumerate((obj.get("spec") or {}).get("rules") or []):
                for i, path in enumerate(((rule.get("http") or {}).get("paths")) or []):
                    if ((path.get("backend") or {}).get("service") or {}).get("name") == missing and best:
                        ops.append({"op": "replace", "path": f"/spec/rules/{r}/http/paths/{i}/backend/service/name", "value": best[0]})
            if not ops and missing not in existing:
                # nothing to repoint to: the Service itself is gone (a workload of that name may still run)
                yield from self._missing_service(missing, f"ingress/{name}")
                return True
            if not ops:
                self._found(f"ingress/{name}", "network", "ingress backend service missing",
                            f"ingress/{name} routes to service {missing}, which does not exist, and no existing Service on port {port} is an obvious replacement "
                            f"(services: {', '.join(existing[:8])}).", {"backend": missing})
                return False
            self._found(f"ingress/{name}", "network", "ingress routes to the wrong backend (service not found)",
                        f"Root cause: ingress/{name} sends users' requests to service {missing}:{port}, which does not exist, so the edge answers 503 for every page. "
                        f"Pointed its backend at service {best[0]}, the Service that serves port {port}.", {"backend": missing, "expected_backend": best[0]})
            yield json_patch_cmd("ingress", name, ns, ops)
            return True
        return False

    def _selector(self, service: str) -> Play:
        ns = self._ns
        svc = load_json((yield f"kubectl get svc {service} -n {ns} -o json"))
        labels_out = yield f"kubectl get pods -n {ns} --show-labels"
        selector = (svc.get("spec") or {}).get("selector") or {}
        pod_labels = [dict(kv.split("=", 1) for kv in row.get("LABELS", "").split(",") if "=" in kv) for row in parse_table(labels_out)]
        if not selector:
            self._found(f"service/{service}", "kubernetes", "service without selector", f"service/{service} has no selector and no endpoints.", {})
            return
        if any(all(lbl.get(k) == v for k, v in selector.items()) for lbl in pod_labels):
            self._found(f"service/{service}", "kubernetes", "service endpoints not ready",
                        f"service/{service} selects existing pods but has no ready endpoints.", {})
            return
        fixed = dict(selector)
        for key, value in selector.items():
            values = sorted({lbl[key] for lbl in pod_labels if key in lbl})
            if value in values:
                continue
            best = [v for v in values if v == service] or difflib.get_close_matches(value, values, n=1, cutoff=0.6)
            if not best:
                fixed = {}
                break
            fixed[key] = best[0]
        sel_text = ",".join(f"{k}={v}" for k, v in selector.items())
        if not fixed or not any(all(lbl.get(k) == v for k, v in fixed.items()) for lbl in pod_labels):
            self._found(f"service/{service}", "kubernetes", "service selector matches no pods",
                        f"service/{service} has no endpoints: its selector {sel_text} matches no pod, and no pod label is close to it.", {})
            return
        new_text = ",".join(f"{k}={v}" for k, v in fixed.items())
        self._found(f"service/{service}", "kubernetes", "service selector matches no pods",
                    f"Root cause: service/{service}'s selector {sel_text} matches no pod (wrong selector), so it has no endpoints and its callers fail. "
                    f"Changed the selector to {new_text}, the labels its pods carry.", {"selector": sel_text, "expected_selector": new_text})
        yield json_patch_cmd("service", service, ns, [{"op": "replace", "path": "/spec/selector", "value": fixed}])

    def _dns(self, caller: str, error: str) -> Play:
        ns = self._ns
        host = re.search(r"lookup ([\w.-]+)", error)
        name = host.group(1).split(".")[0] if host else None
        if name:
            svc_out = yield f"kubectl get svc {name} -n {ns}"
            if "NotFound" in svc_out or "not found" in svc_out:
                yield from self._missing_service(name, caller)
                return
        coredns = yield "kubectl get pods -n kube-system -l k8s-app=kube-dns"
        config = load_json((yield "kubectl get configmap coredns -n kube-system -o json"))
        corefile = ((config.get("data") or {}).get("Corefile")) or ""
        rows = parse_table(coredns)
        if rows and not all(r.get("STATUS") == "Running" for r in rows):
            self._found("deployment/coredns", "network", "coredns pods not running", f"CoreDNS pods are not all Running; {caller} cannot resolve {name}. Restarted CoreDNS.", {},
                        namespace="kube-system")
            yield "kubectl rollout restart deployment/coredns -n kube-system"
            return
        stanzas = corefile_overrides(corefile, name) if name else []
        if not stanzas:
            self._found("configmap/coredns", "network", "DNS resolution failure",
                        f"{caller} fails to resolve {name or 'a service'} ({error[:140]}) although the Service exists and CoreDNS is running; "
                        f"its Corefile shows no override for that name. The runbook has no further step.", {"service": name}, namespace="kube-system")
            return
        cleaned = corefile
        for stanza in stanzas:
            cleaned = cleaned.replace(stanza, "")
        self._found("configmap/coredns", "network", "coredns config override breaks service DNS",
                    f"Root cause: CoreDNS's Corefile (configmap/coredns in kube-system) has an entry for {name} ({stanzas[0].strip().splitlines()[0][:100]}), "
                    f"so lookups of {name} fail (no such host / NXDOMAIN) and {caller} cannot reach it. Removed the override and restored the Corefile.",
                    {"service": name}, namespace="kube-system")
        manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "coredns", "namespace": "kube-system"}, "data": dict(config.get("data") or {}, Corefile=cleaned)}
        yield "kubectl apply -f - <<'EOF'\n" + json.dumps(manifest, indent=2) + "\nEOF"
        yield "sleep 30"

    def _missing_service(self, name: str, caller: str) -> Play:
        ns = self._ns
        containers = yield from self._get_containers("deployment", name)
        ports = [p for c in containers for p in c.get("ports") or [] if p.get("containerPort")]
        if not ports:
            self._found(f"service/{name}", "kubernetes", "service missing",
                        f"{caller} cannot resolve {name}: service/{name} does not exist and no deployment named {name} declares a port to expose.", {"service": name})
            return
        port = int(ports[0]["containerPort"])
        labels = load_json((yield f"kubectl get deployment {name} -n {ns} -o jsonpath='{{.spec.selector.matchLabels}}'"))
        if not labels:
            self._found(f"service/{name}", "kubernetes", "service missing", f"{caller} cannot resolve {name}: service/{name} does not exist.", {"service": name})
            return
        self._found(f"service/{name}", "kubernetes", "service missing (deleted)",
                    f"Root cause: service/{name} does not exist (it was deleted), so {caller}'s lookups of {name} fail with no such host. "
                    f"Recreated it for deployment/{name}'s pods on port {port} (what kubectl expose would create).", {"service": name, "port": port})
        # model it on the most similar sibling Service (same chart, same conventions: labels, port naming)
        tab, nl = '{"\\t"}', '{"\\n"}'
        siblings = yield (f"kubectl get svc -n {ns} -o jsonpath='{{range .items[*]}}{{.metadata.name}}{tab}{{.metadata.labels}}{tab}"
                          f"{{.spec.selector}}{tab}{{.spec.ports[0].name}}{tab}{{.spec.ports[0].port}}{nl}{{end}}'")
        rows = [line.split("\t") for line in siblings.splitlines() if line.count("\t") == 4]
        nearest = max(rows, key=lambda r: (len(common_prefix(r[0], name)), -rows.index(r)), default=None)
        meta: dict[str, Any] = {"name": name}
        port_spec: dict[str, Any] = {"port": port, "protocol": "TCP", "targetPort": port}
        if nearest is not None:
            sib_name, sib_labels, sib_selector, sib_port_name, sib_port = nearest
            if load_json(sib_labels) and load_json(sib_labels) == load_json(sib_selector):
                meta["labels"] = labels
            if sib_port_name == sib_name:
                port_spec["name"] = name
            elif sib_port_name:
                port_spec["name"] = str(port) if sib_port_name == sib_port else sib_port_name
        manifest = {"apiVersion": "v1", "kind": "Service", "metadata": meta,
                    # spelled out with the API server's defaults, as `kubectl get -o yaml` of any sibling Service shows them
                    "spec": {"type": "ClusterIP", "selector": labels, "ports": [port_spec],
                             "sessionAffinity": "None", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster"}}
        yield f"kubectl apply -n {ns} -f - <<'EOF'\n" + json.dumps(manifest, indent=2, sort_keys=True) + "\nEOF"

    def _auth(self, caller: str, callee: str, error: str) -> Play:
        ns = self._ns
        yield f"kubectl logs deployment/{caller} -n {ns} --tail=20"
        self._found(f"deployment/{caller}", "application", "stale credentials",
                    f"{caller} fails to authenticate to {callee} ({error[:140]}): its pods may hold credentials from before a rotation. "
                    f"Restarted {caller} so it reads the current secret.", {"service": caller})
        yield f"kubectl rollout restart deployment/{caller} -n {ns}"
        yield f"kubectl rollout status deployment/{caller} -n {ns} --timeout=60s"
