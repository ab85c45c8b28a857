"""The kubelet: image pulls, container starts, crash back-off, probes, pod status.

Per pod it keeps a small runtime record and only does work when the pod's
spec changed or one of its timers is due, so a settled node costs nothing.
Container state transitions and their Events follow the real kubelet:
ContainerCreating -> (ErrImagePull -> ImagePullBackOff) | CreateContainerConfigError
| Running -> (Error/OOMKilled -> CrashLoopBackOff with 10 s .. 5 min back-off).
"""

from __future__ import annotations

import hashlib
from collections import deque
from typing import TYPE_CHECKING, Any

from sre_env.kube.timefmt import iso
from sre_env.sim.kernel.images import image_id
from sre_env.sim.kernel.pods import ContainerRuntime, PodRuntime, StartOutcome
from sre_env.sim.kubelet import initcontainers
from sre_env.sim.kubelet.probes import run_probe
from sre_env.sim.kubelet.seccontext import run_as_non_root_error
from sre_env.sim.logs.streams import container_log
from sre_env.sim.network.netsystem import allocate_for_pod
from sre_env.sim.node.volumes import multi_attach_error
from sre_env.sim.runtime import programs
from sre_env.sim.runtime.appconfig import start_dependency_error
from sre_env.sim.runtime.config_checks import start_config_error
from sre_env.sim.runtime.mongo_auth import refused_start
from sre_env.sim.runtime.podenv import resolve_env
from sre_env.sim.runtime.process import start_outcome

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["ContainerRuntime", "PodRuntime", "run_kubelets", "MAX_BACKOFF_S"]

Obj = dict[str, Any]
MAX_BACKOFF_S = 300.0
INITIAL_BACKOFF_S = 10.0
#: how often a failing readiness probe's Unhealthy event is re-recorded (its count grows)
_READINESS_EVENT_EVERY_S = 60.0
NEVER = float("inf")


def _hex(seed: str, n: int = 64) -> str:
    out = ""
    i = 0
    while len(out) < n:
        out += hashlib.blake2b(f"{seed}/{i}".encode(), digest_size=32).hexdigest()
        i += 1
    return out[:n]


def run_kubelets(world: "World") -> bool:
    from sre_env.sim.network.netsystem import sandbox_failed

    """Sync every pod that needs it; True when a process started or stopped serving."""
    now = world.clock.now
    if world.store.revision == world.kubelet_rev and now < world.kubelet_wake:
        return False
    synced = False
    wake = NEVER
    for pod in world.store.bound_pods():
        node = pod["spec"].get("nodeName")
        if not node:
            continue
        host = world.hosts.get(node)
        if host is None or not host.kubelet_running:
            continue
        meta = pod["metadata"]
        rt = world.runtimes.get(meta["uid"])
        if meta.get("deletionTimestamp"):
            _terminate(world, pod, rt)
            synced = True
            continue
        if rt is None and (pod.get("status") or {}).get("reason") == "Evicted":
            continue  # the eviction manager killed it; the pod object stays as a record
        if rt is None:
            ip = allocate_for_pod(world, node, pod)
            if ip is None:
                # the CNI found no free address: the sandbox is retried, the pod waits in ContainerCreating
                wake = min(wake, sandbox_failed(world, pod, node))
                continue
            rt = world.runtimes[meta["uid"]] = PodRuntime(uid=meta["uid"], ip=ip, started=now, debug_pod=meta.get("labels", {}).get("app.kubernetes.io/managed-by") == "kubectl-debug" or meta["name"].startswith("node-debugger-"))
            waiting = "PodInitializing" if pod["spec"].get("initContainers") else "ContainerCreating"
            for ctr in pod["spec"].get("containers", []):
                rt.containers[ctr["name"]] = ContainerRuntime(name=ctr["name"], since=now, wake_at=now, waiting_reason=waiting)
            rt.seen_rv = ""
        if rt.wake_at > now and rt.seen_rv == meta["resourceVersion"]:
            wake = min(wake, rt.wake_at)
            continue
        if _sync_pod(world, pod, rt):
            synced = True
        wake = min(wake, rt.wake_at)
    world.kubelet_wake = wake
    world.kubelet_rev = world.store.revision
    return synced


def _terminate(world: "World", pod: Obj, rt: PodRuntime | None) -> None:
    if rt is not None:
        for ctr in rt.containers.values():
            if ctr.state == "running":
                world.event(pod, "Normal", "Killing", f"Stopping container {ctr.name}", "kubelet")
        world.runtimes.pop(rt.uid, None)
    world.store.remove("Pod", pod["metadata"]["name"], pod["metadata"]["namespace"])


def _event_once(world: "World", pod: Obj, ctr: ContainerRuntime, key: str, type_: str, reason: str, message: str, every: float = 60.0) -> None:
    last = ctr.last_event_at.get(key)
    if last is None or world.clock.now - last >= every:
        ctr.last_event_at[key] = world.clock.now
        world.event(pod, type_, reason, message, "kubelet")


def _volumes_ready(world: "World", pod: Obj) -> str | None:
    ns = pod["metadata"]["namespace"]
    for vol in pod["spec"].get("volumes") or ():
        if "persistentVolumeClaim" in vol:
            claim = vol["persistentVolumeClaim"].get("claimName")
            pvc = world.store.find("PersistentVolumeClaim", claim, ns)
            if pvc is None or pvc.get("status", {}).get("phase") != "Bound":
                return f'Unable to attach or mount volumes: unmounted volumes=[{vol["name"]}]: timed out waiting for the condition'
            attach_error = multi_attach_error(world, pod, claim)
            if attach_error:
                world.event(pod, "Warning", "FailedAttachVolume", attach_error, "attachdetach-controller")
                return f'Unable to attach or mount volumes: unmounted volumes=[{vol["name"]}], unattached volumes=[{vol["name"]}]: timed out waiting for the condition'
        if "configMap" in vol:
            name = vol["configMap"].get("name")
            if world.store.find("ConfigMap", name, ns) is None and not vol["configMap"].get("optional"):
                return f'MountVolume.SetUp failed for volume "{vol["name"]}" : configmap "{name}" not found'
        if "secret" in vol:
            name = vol["secret"].get("secretName")
            if world.store.find("Secret", name, ns) is None and not vol["secret"].get("optional"):
                return f'MountVolume.SetUp failed for volume "{vol["name"]}" : secret "{name}" not found'
    return None


def _sync_pod(world: "World", pod: Obj, rt: PodRuntime) -> bool:
    """Advance the pod's containers; True when whether a process serves changed."""
    now = world.clock.now
    host = world.hosts[pod["spec"]["nodeName"]]
    restart_policy = pod["spec"].get("restartPolicy", "Always")
    wake = NEVER
    mount_error = _volumes_ready(world, pod)
    specs = {c["name"]: c for c in pod["spec"].get("containers", [])}
    if pod["spec"].get("initContainers") and not rt.initialized:
        rt.initialized, init_wake = initcontainers.sync_init_containers(world, pod, rt, host, mount_error)
        wake = min(wake, init_wake)
    if rt.initialized or not pod["spec"].get("initContainers"):
        for name, spec in specs.items():
            ctr = rt.containers.setdefault(name, ContainerRuntime(name=name, since=now, wake_at=now))
            wake = min(wake, _step_container(world, pod, rt, ctr, spec, host, mount_error, restart_policy))
    rt.wake_at = wake
    _write_status(world, pod, rt, specs)
    rt.seen_rv = pod["metadata"]["resourceVersion"]
    changed = False
    for ctr in rt.containers.values():
        serving = ctr.serving(now)
        if serving != ctr.was_serving:
            ctr.was_serving = serving
            changed = True
    return changed


def _step_container(world: "World", pod: Obj, rt: PodRuntime, ctr: ContainerRuntime, spec: Obj, host: Any, mount_error: str | None, restart_policy: str, *, init: bool = False) -> float:
    """Advance one container's state machine to ``now``; return when it next needs attention."""
    now = world.clock.now
    image = spec.get("image", "")
    for _ in range(8):  # a few transitions may happen within one tick
        st = ctr.state
        if st in ("creating", "config_error"):
            if mount_error:
                ctr.waiting_reason, ctr.waiting_message = "ContainerCreating", ""
                _event_once(world, pod, ctr, "mount", "Warning", "FailedMount", mount_error, 120.0)
                return now + 10.0
            if image in host.image_cache or (spec.get("imagePullPolicy") == "Never"):
                env, err = resolve_env(world.store, pod, spec)
                err = err or run_as_non_root_error(pod, spec)
                if err:
                    ctr.state = "config_error"
                    ctr.waiting_reason, ctr.waiting_message = "CreateContainerConfigError", err
                    _event_once(world, pod, ctr, "config", "Warning", "Failed", f"Error: {err}", 60.0)
                    return now + 10.0
                _start(world, pod, rt, ctr, spec, env, init=init)
                continue
            if world.images.exists(image):
                ctr.state = "pulling"
                ctr.since = now
                ctr.waiting_reason, ctr.waiting_message = "ContainerCreating", ""
                world.event(pod, "Normal", "Pulling", f'Pulling image "{image}"', "kubelet")
                ctr.wake_at = now + world.images.pull_seconds(image)
                return ctr.wake_at
            ctr.image_pull_failures += 1
            ctr.state = "image_backoff"
            ctr.since = now
            err = world.images.pull_error(image)
            ctr.waiting_reason, ctr.waiting_message = "ErrImagePull", err
            world.event(pod, "Normal", "Pulling", f'Pulling image "{image}"', "kubelet")
            _event_once(world, pod, ctr, "pullfail", "Warning", "Failed", err, 0.0)
            _event_once(world, pod, ctr, "pullerr", "Warning", "Failed", "Error: ErrImagePull", 0.0)
            ctr.wake_at = now + min(INITIAL_BACKOFF_S * 2 ** (ctr.image_pull_failures - 1), MAX_BACKOFF_S)
            return now + 5.0
        if st == "pulling":
            if now < ctr.wake_at:
                return ctr.wake_at
            host.image_cache.add(image)
            world.event(pod, "Normal", "Pulled", f'Successfully pulled image "{image}" in {world.images.pull_seconds(image):.3f}s ({world.images.pull_seconds(image):.3f}s including waiting). Image size: {20_000_000 + (sum(map(ord, image)) * 7919) % 180_000_000} bytes.', "kubelet")
            ctr.state = "creating"
            continue
        if st == "image_backoff":
            if now < ctr.wake_at:
                if now - ctr.since >= 5.0 and ctr.waiting_reason != "ImagePullBackOff":
                    ctr.waiting_reason = "ImagePullBackOff"
                    ctr.waiting_message = f'Back-off pulling image "{image}"'
                    _event_once(world, pod, ctr, "pullbackoff", "Normal", "BackOff", f'Back-off pulling image "{image}"', 60.0)
                    _event_once(world, pod, ctr, "pullbackoff2", "Warning", "Failed", "Error: ImagePullBackOff", 60.0)
                return min(ctr.wake_at, ctr.since + 5.0) if ctr.waiting_reason != "ImagePullBackOff" else ctr.wake_at
            ctr.state = "creating"
            continue
        if st == "running":
            if ctr.pending_logs:
                _flush_logs(world, pod, ctr)
            if ctr.image and image != ctr.image:
                # the pod's image was updated in place: the kubelet replaces the container at once
                world.event(pod, "Normal", "Killing", f"Container {ctr.name} definition changed, will be restarted", "kubelet")
                ctr.last_terminated = {"exitCode": 143, "reason": "Error", "startedAt": iso(ctr.started_at or now), "finishedAt": iso(now), "containerID": ctr.container_id}
                ctr.ready = False
                ctr.serve_at = ctr.exit_at = None
                ctr.pending_logs = []
                ctr.state, ctr.wake_at, ctr.since = "backoff", now, now
                ctr.waiting_reason, ctr.waiting_message = "ContainerCreating", ""
                continue
            if ctr.exit_at is not None and now >= ctr.exit_at:
                _exit(world, pod, ctr, restart_policy)
                continue
            ctr.ready = _probe_ready(world, pod, rt, spec, ctr, now)
            nxt = NEVER
            if ctr.exit_at is not None:
                nxt = min(nxt, ctr.exit_at)
            if ctr.pending_logs:
                nxt = min(nxt, ctr.pending_logs[0][0])
            if ctr.serve_at is not None and now < ctr.serve_at:
                nxt = min(nxt, ctr.serve_at)
            probe_delay = _probe_initial_delay(spec)
            if ctr.started_at is not None and now < ctr.started_at + probe_delay:
                nxt = min(nxt, ctr.started_at + probe_delay)
            live = spec.get("livenessProbe")
            if live and ctr.started_at is not None:
                failed, output, deadline = _liveness(world, pod, rt, ctr, spec, live, now)
                if failed:
                    text = f"Liveness probe failed: {output}"
                    # one Unhealthy per failed probe (folded into a count), then the kill
                    for _ in range(max(int(live.get("failureThreshold", 3)), 1)):
                        world.event(pod, "Warning", "Unhealthy", text, "kubelet")
                    world.event(pod, "Normal", "Killing", f"Container {ctr.name} failed liveness probe, will be restarted", "kubelet")
                    ctr.exit_at = now
                    # SIGTERM to a process without a handler: 128 + 15
                    ctr.outcome = StartOutcome(exit_after=0, exit_code=143, reason="Error")
                    ctr.live_fail_since = None
                    continue
                if now < deadline:
                    nxt = min(nxt, deadline)
            ready_probe = spec.get("readinessProbe")
            if ready_probe and not ctr.ready and ctr.started_at is not None and now >= ctr.started_at + float(ready_probe.get("initialDelaySeconds", 0)):
                # the prober keeps failing every period; the recorder folds repeats into a count
                period = max(float(ready_probe.get("periodSeconds", 10)), 1.0)
                _event_once(world, pod, ctr, "readiness", "Warning", "Unhealthy", f"Readiness probe failed: {run_probe(world, pod, rt, ctr, spec, ready_probe, now).output}", _READINESS_EVENT_EVERY_S)
                if ctr.serve_at is None or now >= ctr.serve_at:
                    nxt = min(nxt, ctr.last_event_at["readiness"] + max(period, _READINESS_EVENT_EVERY_S))
            return nxt
        if st == "backoff":
            if now < ctr.wake_at:
                return ctr.wake_at
            ctr.restart_count += 1
            env, err = resolve_env(world.store, pod, spec)
            err = err or run_as_non_root_error(pod, spec)
            if err:
                ctr.state = "config_error"
                ctr.waiting_reason, ctr.waiting_message = "CreateContainerConfigError", err
                continue
            if image not in host.image_cache:
                ctr.state = "creating"
                continue
            _start(world, pod, rt, ctr, spec, env, init=init)
            continue
        if st == "exited":
            return NEVER
        return NEVER
    return now + 1.0


def _start(world: "World", pod: Obj, rt: PodRuntime, ctr: ContainerRuntime, spec: Obj, env: dict[str, str], *, init: bool = False) -> None:
    now = world.clock.now
    component = programs.main_component(world, pod, spec) if not init else None
    if init:
        outcome = initcontainers.init_outcome(spec)
    elif component is None and world.component_for(pod) is not None and not rt.debug_pod:
        # a sidecar or a second process beside the app's own
        outcome = programs.peer_outcome(world, pod, spec)
    else:
        outcome = start_outcome(component, spec, env, debug_pod=rt.debug_pod, programs=world.images.programs(spec.get("image", "")))
    if component is not None and outcome.start_error is None and outcome.exit_after is None:
        dep_error = start_dependency_error(world, pod, component, env)
        if dep_error is not None:
            target, error = dep_error
            outcome = StartOutcome(
                exit_after=10.0,
                exit_code=2,
                reason="Error",
                serve_after=None,
                log_events=((0.0, "startup", (("partial", True),)), (0.2, "config", ()))
                + ((9.0, "dependency_error", (("target", target), ("error", error))), (10.0, "fatal_assertion", (("error", error if "mongo" not in target else "no reachable servers"),))),
                memory_mib=outcome.memory_mib / 2,
            )
        else:
            outcome = refused_start(world, pod, component, env) or outcome
    if component is not None and outcome.start_error is None:
        # a process that rejects its configuration exits before it dials anything
        outcome = start_config_error(world, pod, spec, component) or outcome
    if component is not None and outcome.start_error is None and outcome.exit_after is None and programs.data_dir_holder(world, pod, component) is not None:
        outcome = programs.dbpath_in_use(component, outcome.memory_mib)
    ctr.container_id = "containerd://" + _hex(f"{rt.uid}/{ctr.name}/{ctr.restart_count}")
    ctr.image_id = image_id(spec.get("image", ""))
    if outcome.start_error:
        world.event(pod, "Normal", "Created", f"Created container {ctr.name}", "kubelet")
        world.event(pod, "Warning", "Failed", f"Error: {outcome.start_error}", "kubelet")
        ctr.prev_log, ctr.log = list(ctr.log), deque(maxlen=1000)
        ctr.last_terminated = {"exitCode": 128, "reason": "StartError", "message": outcome.start_error, "startedAt": "1970-01-01T00:00:00Z", "finishedAt": iso(now), "containerID": ctr.container_id}
        _enter_backoff(world, pod, ctr)
        return
    if ctr.started_at is not None or ctr.restart_count:
        world.event(pod, "Normal", "Pulled", f'Container image "{spec.get("image", "")}" already present on machine', "kubelet")
    world.event(pod, "Normal", "Created", f"Created container {ctr.name}", "kubelet")
    world.event(pod, "Normal", "Started", f"Started container {ctr.name}", "kubelet")
    ctr.state = "running"
    ctr.image = spec.get("image", "")
    ctr.since = now
    ctr.started_at = now
    ctr.outcome = outcome
    ctr.exit_at = now + outcome.exit_after if outcome.exit_after is not None else None
    ctr.serve_at = now + outcome.serve_after if outcome.serve_after is not None else None
    ctr.listen_port = outcome.listen_port
    ctr.memory_mib = outcome.memory_mib
    ctr.started_env = dict(env)
    ctr.waiting_reason = ctr.waiting_message = ""
    if ctr.log:
        ctr.prev_log = list(ctr.log)
        ctr.log = deque(maxlen=1000)
    ctr.pending_logs = [(now + delay, event, dict(fields)) for delay, event, fields in outcome.log_events]
    ctr.live_fail_since = None
    _flush_logs(world, pod, ctr)
    programs.after_start(world, pod, rt, ctr)


def _flush_logs(world: "World", pod: Obj, ctr: ContainerRuntime) -> None:
    now = world.clock.now
    keep = []
    for t, event, fields in ctr.pending_logs:
        if t <= now:
            container_log(world, pod, ctr, event, t, fields)
        else:
            keep.append((t, event, fields))
    ctr.pending_logs = keep


def _exit(world: "World", pod: Obj, ctr: ContainerRuntime, restart_policy: str) -> None:
    now = world.clock.now
    out = ctr.outcome or StartOutcome()
    for t, event, fields in ctr.pending_logs:
        if t <= now:
            container_log(world, pod, ctr, event, t, fields)
    ctr.pending_logs = []
    ctr.last_terminated = {
        "exitCode": out.exit_code,
        "reason": out.reason,
        "startedAt": iso(ctr.started_at or now),
        "finishedAt": iso(ctr.exit_at or now),
        "containerID": ctr.container_id,
    }
    ctr.ready = False
    ctr.serve_at = None
    ctr.exit_at = None
    if restart_policy == "Never" or (restart_policy == "OnFailure" and out.exit_code == 0):
        ctr.state = "exited"
        return
    _enter_backoff(world, pod, ctr)


def _enter_backoff(world: "World", pod: Obj, ctr: ContainerRuntime) -> None:
    now = world.clock.now
    ran = (now - ctr.started_at) if ctr.started_at is not None else 0.0
    if ran > 600:
        ctr.crashes = 0
    ctr.crashes += 1
    ctr.state = "backoff"
    ctr.since = now
    if ctr.crashes == 1:
        # The kubelet's back-off has no entry for this container yet: it restarts
        # it at once and only then starts the 10 s, 20 s, 40 s ... 5 min curve.
        ctr.wake_at = now
        return
    delay = min(INITIAL_BACKOFF_S * 2 ** (ctr.crashes - 2), MAX_BACKOFF_S)
    ctr.wake_at = now + delay
    ctr.waiting_reason = "CrashLoopBackOff"
    ctr.waiting_message = f"back-off {int(delay) // 60}m{int(delay) % 60}s restarting failed container={ctr.name} pod={pod['metadata']['name']}_{pod['metadata']['namespace']}({pod['metadata']['uid']})" if delay >= 60 else f"back-off {int(delay)}s restarting failed container={ctr.name} pod={pod['metadata']['name']}_{pod['metadata']['namespace']}({pod['metadata']['uid']})"
    _event_once(world, pod, ctr, "backoff", "Warning", "BackOff", f"Back-off restarting failed container {ctr.name} in pod {pod['metadata']['name']}_{pod['metadata']['namespace']}({pod['metadata']['uid']})", 30.0)


# --------------------------------------------------------------------------- probes
def _probe_initial_delay(spec: Obj) -> float:
    delays = [float((spec.get(k) or {}).get("initialDelaySeconds", 0)) for k in ("readinessProbe", "livenessProbe") if spec.get(k)]
    return max(delays) if delays else 0.0


def _probe_ready(world: "World", pod: Obj, rt: PodRuntime, spec: Obj, ctr: ContainerRuntime, now: float) -> bool:
    """The readiness probe's verdict now (sre_env.sim.kubelet.probes); no probe: ready while running."""
    probe = spec.get("readinessProbe")
    if not probe:
        return True
    delay = float(probe.get("initialDelaySeconds", 0))
    if ctr.started_at is None or now < ctr.started_at + delay:
        return False
    return run_probe(world, pod, rt, ctr, spec, probe, now).ok


def _liveness(world: "World", pod: Obj, rt: PodRuntime, ctr: ContainerRuntime, spec: Obj, probe: Obj, now: float) -> tuple[bool, str, float]:
    """(kill now, the prober's output, when to look again) for a running container's liveness probe.

    The prober runs every ``periodSeconds`` after ``initialDelaySeconds`` (never in
    the container's first second); ``failureThreshold`` failures in a row kill it.
    Between looks the kubelet model assumes the verdict held, so a passing probe
    is looked at again one failure window later.
    """
    delay = float(probe.get("initialDelaySeconds", 0) or 0)
    period = max(float(probe.get("periodSeconds", 10) or 10), 1.0)
    threshold = max(int(probe.get("failureThreshold", 3) or 3), 1)
    first = (ctr.started_at or 0.0) + max(delay, 1.0)
    if now < first:
        return False, "", first
    if ctr.serve_at is None or ctr.serve_at > first:
        # every probe before the process listens is refused: does the threshold-th come first?
        kill_at = first + period * (threshold - 1)
        if ctr.serve_at is None or kill_at < ctr.serve_at:
            if now >= kill_at:
                return True, run_probe(world, pod, rt, ctr, spec, probe, kill_at).output, now
            return False, "", kill_at
    result = run_probe(world, pod, rt, ctr, spec, probe, now)
    if result.ok:
        ctr.live_fail_since = None
        return False, "", now + period * threshold
    if ctr.live_fail_since is None:
        # failing since the start: the first probe already failed
        ctr.live_fail_since = first if (ctr.serve_at is None or ctr.serve_at > first) and now - first < period * threshold else now
    kill_at = ctr.live_fail_since + period * (threshold - 1)
    if now >= kill_at:
        return True, result.output, now
    return False, result.output, kill_at


# --------------------------------------------------------------------------- status
def _container_status(ctr: ContainerRuntime, spec: Obj, now: float) -> Obj:
    st: Obj = {
        "name": ctr.name,
        "image": spec.get("image", ""),
        "imageID": ctr.image_id if ctr.started_at is not None or ctr.last_terminated else "",
        "ready": ctr.state == "running" and ctr.ready,
        "restartCount": ctr.restart_count,
        "started": ctr.state == "running",
    }
    if ctr.container_id:
        st["containerID"] = ctr.container_id
    if ctr.state == "running":
        st["state"] = {"running": {"startedAt": iso(ctr.started_at or now)}}
    elif ctr.state == "exited" and ctr.last_terminated:
        st["state"] = {"terminated": dict(ctr.last_terminated)}
    else:
        waiting: Obj = {"reason": ctr.waiting_reason or "ContainerCreating"}
        if ctr.waiting_message:
            waiting["message"] = ctr.waiting_message
        st["state"] = {"waiting": waiting}
    st["lastState"] = {"terminated": dict(ctr.last_terminated)} if ctr.last_terminated and ctr.state != "exited" else {}
    return st


def _write_status(world: "World", pod: Obj, rt: PodRuntime, specs: dict[str, Obj]) -> None:
    now = world.clock.now
    old = pod.get("status") or {}
    statuses = [_container_status(rt.containers[n], s, now) for n, s in specs.items()]
    states = [rt.containers[n] for n in specs]
    if states and all(c.state == "exited" for c in states):
        phase = "Succeeded" if all((c.last_terminated or {}).get("exitCode") == 0 for c in states) else "Failed"
    elif any(c.state == "running" or c.restart_count or c.last_terminated for c in states):
        phase = "Running"
    else:
        phase = "Pending"
    ready = bool(states) and all(c.state == "running" and c.ready for c in states)
    old_conds = {c["type"]: c for c in old.get("conditions") or ()}

    def cond(type_: str, ok: bool, reason: str | None = None) -> Obj:
        status = "True" if ok else "False"
        prev = old_conds.get(type_)
        c: Obj = {"type": type_, "status": status, "lastProbeTime": None, "lastTransitionTime": prev["lastTransitionTime"] if prev and prev["status"] == status else iso(now)}
        if reason and not ok:
            c["reason"] = reason
        return c

    sandbox = phase not in ("Succeeded", "Failed")
    init_specs = pod["spec"].get("initContainers") or []
    initialized = not init_specs or rt.initialized
    conditions = [
        cond("PodReadyToStartContainers", sandbox),
        cond("Initialized", initialized, "ContainersNotInitialized"),
        cond("Ready", ready, "PodCompleted" if phase in ("Succeeded", "Failed") else "ContainersNotReady"),
        cond("ContainersReady", ready, "PodCompleted" if phase in ("Succeeded", "Failed") else "ContainersNotReady"),
        cond("PodScheduled", True),
    ]
    if not ready and phase not in ("Succeeded", "Failed"):
        names = [c.name for c in states if not (c.state == "running" and c.ready)]
        conditions[2]["message"] = f"containers with unready status: [{' '.join(names)}]"
        conditions[3]["message"] = conditions[2]["message"]
    if not initialized:
        pending_inits = [c["name"] for c in init_specs if not ((rt.init.get(c["name"]) and rt.init[c["name"]].state == "exited" and (rt.init[c["name"]].last_terminated or {}).get("exitCode") == 0))]
        conditions[1]["message"] = f"containers with incomplete status: [{' '.join(pending_inits)}]"
    host = world.hosts[pod["spec"]["nodeName"]]
    status: Obj = {
        "phase": phase,
        "conditions": conditions,
        "hostIP": host.internal_ip,
        "hostIPs": [{"ip": host.internal_ip}],
        "podIP": rt.ip,
        "podIPs": [{"ip": rt.ip}],
        "startTime": old.get("startTime") or iso(rt.started),
        "containerStatuses": statuses,
        "qosClass": _qos(specs),
    }
    if init_specs:
        inits = []
        for c in init_specs:
            ictr = rt.init.get(c["name"])
            if ictr is None:
                inits.append({"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": False, "restartCount": 0, "started": False, "state": {"waiting": {"reason": "PodInitializing"}}, "lastState": {}})
                continue
            ist = _container_status(ictr, c, now)
            # a completed init container reports ready
            ist["ready"] = ictr.state == "exited" and (ictr.last_terminated or {}).get("exitCode") == 0
            inits.append(ist)
        status["initContainerStatuses"] = inits
    if status != old:
        pod["status"] = status
        world.store.touch(pod)


def _qos(specs: dict[str, Obj]) -> str:
    any_set = False
    guaranteed = True
    for s in specs.values():
        res = s.get("resources") or {}
        lim, req = res.get("limits") or {}, res.get("requests") or {}
        if lim or req:
            any_set = True
        for r in ("cpu", "memory"):
            if r not in lim or (r in req and req[r] != lim[r]):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"
