"""A grammar of what agents type, for fuzzing ``env.step`` (tests/test_fuzz.py, benchmarks/fuzz.py).

Command lines are drawn from the verbs, kinds, flags and names an agent uses --
names read from the live cluster, so most commands reach real code paths -- mixed
with hostile parts: huge and negative numbers, unicode and control characters,
unbalanced quotes, deeply nested YAML through a heredoc, lines past the action
limit and random junk. ``submit`` is never generated (an episode runs until its
step limit). :func:`run_fuzz` drives an env through them and records what broke
(exceptions, observations outside ``observation_space``) and how long each step
took; it asserts nothing, so tests and the benchmark decide what to report.
"""

from __future__ import annotations

import random
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import gymnasium as gym

from sre_env.env import ACTION_MAX, SREEnv

__all__ = ["Grammar", "FuzzStats", "run_fuzz", "rss_bytes", "passes_time", "pick_ids"]

KINDS = ["pods", "po", "deploy", "deployments", "svc", "services", "cm", "configmaps", "secrets", "nodes", "no", "events", "ev", "rs", "sts", "ds", "jobs", "cronjobs", "pvc", "pv", "ns", "ingress", "netpol", "hpa", "resourcequota", "quota", "sa", "roles", "rolebindings", "clusterroles", "endpoints", "ep", "storageclass", "priorityclass", "lease", "pdb", "limitrange", "mutatingwebhookconfigurations", "all", "foo", "pods,svc", "deploy/frontend"]
OUTPUTS = ["wide", "yaml", "json", "name", "jsonpath={.items[*].metadata.name}", "jsonpath={.spec.replicas}", "jsonpath='{range .items[*]}{.metadata.name}{\"\\t\"}{.status.phase}{\"\\n\"}{end}'", "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName", "jsonpath={.items[?(@.metadata.name=~/^(a*)*b$/)].metadata.name}", "go-template={{.metadata.name}}", "jsonpath={", "bogus"]
FILTERS = ["grep -i error", "grep -v Running", "grep -c .", "head -5", "tail -3", "wc -l", "sort", "sort -k2 -r", "uniq -c", "cut -d' ' -f1", "awk '{print $1}'", "awk '{print $NF}'", "grep -E '(a|b)+'", "grep -n image", "head -n 99999999999999999999", "tail -n -1", "grep -o '.*'", "tr a-z A-Z", "sed 's/a/b/g'", "jq .", "xargs echo", "cat", "less"]
SSH_CMDS = ["dmesg | tail -20", "df -h", "free -m", "uptime", "systemctl status kubelet", "journalctl -u kubelet --no-pager | tail -20", "top -bn1 | head -15", "ps aux", "cat /proc/meminfo", "cat /proc/loadavg", "ip route", "ip addr", "iptables -L -n", "iptables-save | head", "crictl ps", "crictl logs x", "ss -tlnp", "mount", "lsblk", "smartctl -a /dev/sda", "cat /etc/resolv.conf", "sysctl -a | grep conntrack", "ulimit -a", "date", "ls /var/log", "cat /var/log/syslog | tail", "systemctl restart kubelet", "rm -rf /", "yes", "cat /dev/zero", "dd if=/dev/zero of=/tmp/x bs=1M count=100000"]
PROMQL = ["up", "sum(rate(http_requests_total[5m])) by (service)", "histogram_quantile(0.99, sum(rate(http_request_duration_seconds_bucket[5m])) by (le, service))", "node_memory_MemAvailable_bytes", "kube_pod_status_phase", "rate(container_cpu_usage_seconds_total[1m])", '{__name__=~".+"}', 'count({__name__=~"(a*)*b"})', "topk(5, rate(node_cpu_seconds_total[5m]))", "absent(up)", "sum(", "1/0", "label_replace(up, \"x\", \"$1\", \"job\", \"(.*\")", "vector(1) + on() group_left vector(2)", "count_over_time(up[30d])", "scalar(up)", "predict_linear(node_filesystem_avail_bytes[1h], 3600)", "quantile_over_time(0.9, up[10m:1s])", "rate(up[1s])"]
LOGQL = ['{namespace="NS"}', '{namespace="NS"} |= "error"', '{namespace="NS", app="APP"} | json | level="error"', 'sum by (app) (count_over_time({namespace="NS"}[5m]))', 'rate({namespace=~".+"}[1m])', '{namespace=~".+"} |~ "(a*)*b"', '{app="APP"} | logfmt | line_format "{{.msg}}"', '{namespace="NS"} | pattern "<ip> - <_> <method>"', "{}", '{namespace="NS"', 'topk(3, sum by (pod) (rate({namespace="NS"}[5m])))', '{namespace="NS"} |~ "(?P<x>a)(?P=x)"']
#: what the episode treats as a catastrophe (left out by ``Grammar(safe=True)``)
CATASTROPHIC = ("delete ns", "delete node", "delete pods --all", "rm -rf", "drain", "dd if", "delete deploy", "delete svc", "--grace-period=0", "delete pod", "delete cm", "systemctl restart", "cordon", "taint")
SH_HI = 'sh -c "echo hi"'
TIME_PASSING = ("sleep", "wait", "kubectl rollout status", "kubectl wait", "watch")
HUGE = ["99999999999999999999", "-1", "0", "1e308", "9223372036854775808", "-9223372036854775809", "NaN", "0x10", "5000", "100000", "4294967296", "1_000", "", "٣"]
UNICODE = ["ünïcödé", "\u202e", "名前", "\U0001f600", "\x00", "\x1b[31m", "\r\n", "\t", "\x7f", "\ufeff", "\\", "$(rm -rf /)", "`id`", "${HOME}", "%s%n", "'", '"', "\\\"", "*", "?", "[", "{", "}"]


def passes_time(cmd: str) -> bool:
    """Whether a command lets simulated time pass (its wall time is not a step cost an agent controls)."""
    head = cmd.lstrip()
    return head.startswith(TIME_PASSING) or " -w" in cmd or "--watch" in cmd or "rollout status" in cmd or "sleep " in cmd or "wait " in cmd


def rss_bytes() -> int:
    """The process's resident set size now (not its peak), from /proc."""
    try:
        with open("/proc/self/statm") as f:
            import os

            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # not Linux: the peak is the best there is
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _nested_yaml(depth: int) -> str:
    inner = "x: 1"
    return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n  a: " + "{a: " * depth + "1" + "}" * depth + "\n"


class Grammar:
    """Command lines drawn from the live state of one env (re-read on :meth:`refresh`)."""

    def __init__(self, env: SREEnv, rng: random.Random, *, safe: bool = False) -> None:
        self.env = env
        self.rng = rng
        #: leave out what ends an episode as a catastrophe (one long episode, e.g. to watch its memory)
        self.safe = safe
        self.refresh()

    def refresh(self) -> None:
        api = self.env.backend.api
        names = lambda kind, ns=None: [o["metadata"]["name"] for o in api.list(kind, ns)][:200]  # noqa: E731
        self.namespaces = names("Namespace") or ["default"]
        self.ns = getattr(self.env.scenario, "namespace", None) or self.namespaces[0]
        self.pods = names("Pod", self.ns) or ["nopod"]
        self.deploys = names("Deployment", self.ns) or ["nodeploy"]
        self.services = names("Service", self.ns) or ["nosvc"]
        self.cms = names("ConfigMap", self.ns) or ["nocm"]
        self.nodes = names("Node") or ["worker-1"]
        self.sts = names("StatefulSet", self.ns)
        self.apps = sorted({(p.rsplit("-", 2)[0]) for p in self.pods}) or ["frontend"]

    # ------------------------------------------------------------------ pieces
    def c(self, seq: list[str] | tuple[str, ...]) -> str:
        return self.rng.choice(seq)

    def name(self) -> str:
        r = self.rng.random()
        if r < 0.08:
            return self.c(UNICODE) + self.c(self.pods)
        if r < 0.12:
            return "x" * self.rng.choice([1, 63, 64, 253, 254, 5000])
        return self.c(self.pods + self.deploys + self.services + self.cms + self.nodes)

    def number(self) -> str:
        return self.c(HUGE) if self.rng.random() < 0.4 else str(self.rng.randint(0, 20))

    def nsflag(self) -> str:
        r = self.rng.random()
        if r < 0.6:
            return f"-n {self.ns}"
        if r < 0.75:
            return "-A"
        if r < 0.85:
            return f"--namespace={self.c(self.namespaces)}"
        if r < 0.9:
            return "-n " + self.c(UNICODE)
        return ""

    def pipes(self, cmd: str) -> str:
        while self.rng.random() < 0.35:
            cmd += " | " + self.c(FILTERS)
        return cmd

    # ------------------------------------------------------------------ commands
    def kubectl(self) -> str:
        r = self.rng.random
        ns = self.nsflag()
        verb = self.c(["get", "get", "get", "describe", "describe", "logs", "top", "rollout", "scale", "delete", "label", "annotate", "patch", "set", "apply", "create", "expose", "exec", "run", "cordon", "uncordon", "drain", "taint", "auth", "explain", "api-resources", "version", "config", "edit", "replace", "autoscale", "debug", "port-forward", "cp", "certificate", "bogus"])
        if verb == "get":
            cmd = f"kubectl get {self.c(KINDS)} {ns}"
            if r() < 0.3:
                cmd += f" {self.name()}"
            if r() < 0.4:
                cmd += f" -o {self.c(OUTPUTS)}"
            if r() < 0.15:
                cmd += f" -l app={self.c(self.apps)}"
            if r() < 0.1:
                cmd += " --sort-by=.metadata.creationTimestamp"
            if r() < 0.1:
                cmd += " --field-selector=status.phase!=Running"
            if r() < 0.05:
                cmd += " --show-labels"
            return cmd
        if verb == "describe":
            return f"kubectl describe {self.c(KINDS)} {self.name() if r() < 0.7 else ''} {ns}"
        if verb == "logs":
            cmd = f"kubectl logs {self.c(self.pods) if r() < 0.8 else 'deploy/' + self.c(self.deploys)} {ns}"
            if r() < 0.4:
                cmd += f" --tail={self.number()}"
            if r() < 0.2:
                cmd += " --previous"
            if r() < 0.1:
                cmd += f" --since={self.number()}s"
            if r() < 0.1:
                cmd += " -c " + self.c(["app", "x", "istio-proxy"])
            return cmd
        if verb == "top":
            return f"kubectl top {self.c(['pods', 'nodes', 'pod', 'node --sort-by=cpu'])} {ns}"
        if verb == "rollout":
            sub = self.c(["history", "undo", "restart", "status", "pause", "resume"])
            return f"kubectl rollout {sub} {self.c(['deployment/', 'deploy/', 'sts/', ''])}{self.c(self.deploys)} {ns}" + (f" --to-revision={self.number()}" if sub == "undo" and r() < 0.3 else "")
        if verb == "scale":
            return f"kubectl scale deploy/{self.c(self.deploys)} {ns} --replicas={self.number()}"
        if verb == "delete":
            what = self.c(["pod " + self.c(self.pods), "pods --all", "deploy " + self.c(self.deploys), "svc " + self.c(self.services), "cm " + self.c(self.cms), "ns " + self.c(self.namespaces), "node " + self.c(self.nodes), "pod " + self.name() + " --grace-period=0 --force", "events --all"])
            return f"kubectl delete {what} {ns}"
        if verb in ("label", "annotate"):
            return f"kubectl {verb} {self.c(['pod', 'node', 'deploy', 'ns'])} {self.name()} {self.c(['a=b', 'a-', 'x' * 70 + '=1', 'bad key=v', 'k=' + self.c(UNICODE)])} {ns} --overwrite"
        if verb == "patch":
            body = self.c(['{"spec":{"replicas":' + self.number() + "}}", '{"spec":null}', "{", "[]", '{"spec":{"template":{"spec":{"containers":[{"name":"x","image":"y"}]}}}}', '[{"op":"remove","path":"/spec"}]', '{"metadata":{"labels":{"a":' + "[" * 200 + "]" * 200 + "}}}"])
            ptype = self.c(["", " --type=merge", " --type=json", " --type=strategic", " --type=bogus"])
            return f"kubectl patch {self.c(['deploy', 'svc', 'cm', 'pod', 'node'])} {self.name()} {ns}{ptype} -p '{body}'"
        if verb == "set":
            return f"kubectl set {self.c(['image', 'env', 'resources'])} deploy/{self.c(self.deploys)} {self.c(['app=nginx:1.0', 'FOO=bar', '--limits=cpu=' + self.number(), '--requests=memory=' + self.number() + 'Gi', '*=x'])} {ns}"
        if verb in ("apply", "create", "replace"):
            if verb == "create" and r() < 0.5:
                return f"kubectl create {self.c(['configmap', 'secret generic', 'deployment', 'ns', 'job', 'quota', 'serviceaccount', 'priorityclass'])} {self.c(['x', 'y', self.name()])} {self.c(['--from-literal=a=b', '--image=nginx', '--replicas=' + self.number(), '--hard=pods=' + self.number(), '--value=' + self.number(), ''])} {ns}"
            return f"kubectl {verb} -f - {ns} <<'EOF'\n{self.manifest()}\nEOF"
        if verb == "expose":
            return f"kubectl expose deploy {self.c(self.deploys)} --port={self.number()} --target-port={self.number()} {ns}"
        if verb == "exec":
            return f"kubectl exec {self.c(self.pods)} {ns} -- {self.c(['env', 'cat /etc/hosts', 'nslookup ' + self.c(self.services), 'curl -s ' + self.c(self.services) + ':' + self.number(), 'ps', SH_HI, 'redis-cli ping', 'mongo --eval 1', 'ls /'])}"
        if verb == "run":
            return f"kubectl run {self.c(['tmp', 'dbg', self.name()])} --image={self.c(['busybox', 'nginx', ''])} {self.c(['--restart=Never', '--rm -it', ''])} {ns} -- {self.c(['sleep 1', 'wget -qO- ' + self.c(self.services), 'true'])}"
        if verb in ("cordon", "uncordon", "drain"):
            return f"kubectl {verb} {self.c(self.nodes)}" + (" --ignore-daemonsets --delete-emptydir-data" if verb == "drain" else "")
        if verb == "taint":
            return f"kubectl taint nodes {self.c(self.nodes)} {self.c(['k=v:NoSchedule', 'k=v:NoSchedule-', 'node-role.kubernetes.io/control-plane:NoSchedule-', 'bad'])}"
        if verb == "auth":
            return f"kubectl auth can-i {self.c(['get', 'delete', '*'])} {self.c(KINDS)} {ns}"
        if verb == "explain":
            return f"kubectl explain {self.c(['pod.spec', 'deployment.spec.strategy', 'svc', 'pod.spec.containers.resources', 'x.y.z'])}"
        if verb == "config":
            return f"kubectl config {self.c(['view', 'current-context', 'get-contexts', 'use-context x', 'set-context --current --namespace=' + self.ns])}"
        return f"kubectl {verb} {self.name()} {ns}"

    def manifest(self) -> str:
        r = self.rng.random()
        kind = self.c(["Deployment", "ConfigMap", "Service", "Job", "Node", "Pod", "ResourceQuota", "NetworkPolicy", "HorizontalPodAutoscaler", "Bogus"])
        name = self.c(["fz", self.c(self.deploys), self.c(self.cms), self.c(self.services)])
        if r < 0.15:
            return _nested_yaml(self.rng.choice([50, 500, 3000]))
        if r < 0.3:
            return self.c(["", "---", "[]", "null", "- a\n- b", "{", "kind: Deployment", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + "x" * 300, "a: &a [*a]", "a: !!python/object/apply:os.system ['id']", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  k: " + "v" * 15000])
        if r < 0.5:
            spec = self.c(["spec: {}", "spec: null", "", "spec:\n  replicas: null", "spec:\n  replicas: " + self.number(), "status: {}", "spec:\n  template: 3"])
            return f"apiVersion: {self.c(['apps/v1', 'v1', 'batch/v1', 'x/y'])}\nkind: {kind}\nmetadata:\n  name: {name}\n  namespace: {self.ns}\n{spec}"
        if kind == "ConfigMap":
            return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {self.ns}\ndata:\n  k: \"{self.c(UNICODE).encode('unicode_escape').decode()}\""
        if kind == "ResourceQuota":
            return f"apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: fz\n  namespace: {self.ns}\nspec:\n  hard:\n    pods: \"{self.number()}\""
        return (
            f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: {self.ns}\nspec:\n  replicas: {self.number()}\n"
            f"  selector:\n    matchLabels:\n      app: fz\n  template:\n    metadata:\n      labels:\n        app: fz\n    spec:\n      containers:\n      - name: c\n        image: nginx\n"
            f"        resources:\n          requests:\n            cpu: {self.c(['100m', '1e9', '-1', 'abc', '99999'])}"
        )

    def ssh(self) -> str:
        return f"ssh {self.c(self.nodes + ['nonode', self.c(UNICODE)])} {self.c(SSH_CMDS)}"

    def promql(self) -> str:
        q = self.c(PROMQL)
        extra = ""
        if self.rng.random() < 0.3:
            extra = f" --range {self.c(['5m', '1h', '6h', '1d', '-1h', 'x'])} --step {self.c(['15s', '30s', '60s', '0s', '1ms', 'x'])}"
        return self.pipes(f"promql '{q}'{extra}")

    def logql(self) -> str:
        q = self.c(LOGQL).replace("NS", self.ns).replace("APP", self.c(self.apps))
        extra = self.c(["", " --since 5m", " --since 1h", " --since 720h", " --limit " + self.number(), " --forward", " -o json", " -o raw", " --since x"])
        return self.pipes(f"logql '{q}'{extra}")

    def traces(self) -> str:
        sub = self.c(["find --service " + self.c(self.apps), "find --service " + self.c(self.apps) + " --min-duration 500ms --limit " + self.number(), "get " + self.c(["0" * 32, "abc", "x"]), "deps", "summary", "find", "bogus", "find --service x --lookback " + self.c(["1h", "720h", "-1h", "x"])])
        return self.pipes(f"traces {sub}")

    def hostile(self) -> str:
        r = self.rng.random()
        if r < 0.15:
            return "x" * self.rng.choice([ACTION_MAX - 1, ACTION_MAX, ACTION_MAX + 1, 1 << 20])
        if r < 0.3:
            return "".join(self.rng.choice(" |&;<>()$`'\"\\*?[]{}~#!\n\tab-=") for _ in range(self.rng.randint(1, 80)))
        if r < 0.45:
            return "".join(chr(self.rng.randint(0, 0x2FFF)) for _ in range(self.rng.randint(1, 40)))
        if r < 0.55:
            return "echo " + "'" * self.rng.randint(1, 3) + self.c(UNICODE) + '"'
        if r < 0.65:
            return " | ".join(["cat"] * self.rng.randint(2, 300))
        if r < 0.75:
            return "kubectl " + " ".join(self.c(["-n", "-o", "--", "-", "=", "--replicas", "-f", "-A", "-l", "=="]) for _ in range(self.rng.randint(1, 30)))
        if r < 0.85:
            return self.c(["", " ", "\n", ";", "&&", "||", "|", "exit", "bash", "vim x", "python -c 1", "help", "kubectl", "man kubectl", "curl http://localhost", "echo $((2**64))", "history", "cd /", "export A=1", "while true; do :; done"])
        return self.c(["kubectl get pods -n " + self.ns + " -o json | jq '" + "." * 5000 + "'", "echo " + "a" * 16000 + " | wc -c", "kubectl get pods " + " ".join(["-n " + self.ns] * 500)])

    def time_passing(self) -> str:
        return self.c([f"sleep {self.c(['1', '10', '30', '0', '-1', 'x', '99999999'])}", f"kubectl rollout status deploy/{self.c(self.deploys)} -n {self.ns} --timeout={self.c(['10s', '60s', '0', 'x'])}", f"kubectl wait --for=condition=Ready pod/{self.c(self.pods)} -n {self.ns} --timeout=20s"])

    def command(self) -> str:
        r = self.rng.random()
        if r < 0.45:
            cmd = self.pipes(self.kubectl())
        elif r < 0.55:
            cmd = self.ssh()
        elif r < 0.65:
            cmd = self.promql()
        elif r < 0.73:
            cmd = self.logql()
        elif r < 0.78:
            cmd = self.traces()
        elif r < 0.93:
            cmd = self.hostile()
        else:
            cmd = self.time_passing()
        if cmd.lstrip().startswith("submit"):
            cmd = "# " + cmd
        if self.safe and any(p in cmd for p in CATASTROPHIC):
            return "kubectl get pods -n " + self.ns
        return cmd


@dataclass
class FuzzStats:
    """What one fuzz run saw."""

    commands: int = 0
    exceptions: list[tuple[str, str, str]] = field(default_factory=list)  # (id, command, traceback)
    out_of_space: list[tuple[str, str]] = field(default_factory=list)  # (id, command)
    #: (seconds, id, command) of steps that do not let simulated time pass
    times: list[tuple[float, str, str]] = field(default_factory=list)
    #: steps that let simulated time pass: time-passing commands and the steps that end (and grade) an episode
    passing_times: list[tuple[float, str, str]] = field(default_factory=list)
    ending_times: list[tuple[float, str, str]] = field(default_factory=list)
    resets: int = 0

    def slowest(self) -> tuple[float, str, str] | None:
        return max(self.times, default=None)


def _short(cmd: str, n: int = 160) -> str:
    return repr(cmd if len(cmd) <= n else cmd[:n] + f"...(+{len(cmd) - n} chars)")


def run_fuzz(env_id: str, n: int, seed: int = 0, *, stats: FuzzStats | None = None, refresh_every: int = 50, on_step: Callable[[int, Any], None] | None = None, max_steps: int | None = None, safe: bool = False, deadline: float | None = None, grade_every: int = 1) -> FuzzStats:
    """Run ``n`` generated commands on ``env_id`` (resetting when an episode ends); exceptions are caught and recorded.

    ``deadline``: a ``time.perf_counter()`` value after which no further command starts.
    ``grade_every``: grade one truncated episode in this many (grading simulates minutes of the
    cluster and costs more than the commands; long runs spend their time on commands).
    """
    stats = stats or FuzzStats()
    kwargs = {"max_steps": max_steps} if max_steps else {}
    env = gym.make(env_id, **kwargs)
    inner: SREEnv = env.unwrapped  # type: ignore[assignment]
    rng = random.Random(f"{env_id}/{seed}")
    episode = 0
    obs, _ = env.reset(seed=seed)
    stats.resets += 1
    inner.grade_truncated = True
    grammar = Grammar(inner, rng, safe=safe)
    try:
        for i in range(n):
            if deadline is not None and time.perf_counter() > deadline:
                break
            if i and i % refresh_every == 0:
                grammar.refresh()
            cmd = grammar.command()
            t0 = time.perf_counter()
            try:
                obs, _, term, trunc, _ = env.step(cmd)
            except Exception:  # noqa: BLE001 - the point is to catch anything that escapes step
                stats.exceptions.append((env_id, cmd, traceback.format_exc()))
                term = trunc = True
                obs = None
            dt = time.perf_counter() - t0
            stats.commands += 1
            # a step that ends the episode grades it, which lets simulated time pass (the durability window)
            ended = obs is not None and (term or trunc)
            (stats.passing_times if passes_time(cmd) or ended else stats.times).append((dt, env_id, _short(cmd)))
            if ended:
                stats.ending_times.append((dt, env_id, _short(cmd)))
            if obs is not None and not inner.observation_space.contains(obs):
                stats.out_of_space.append((env_id, _short(cmd)))
            if on_step is not None:
                on_step(i, inner)
            if term or trunc:
                episode += 1
                obs, _ = env.reset(seed=seed + episode)
                stats.resets += 1
                inner.grade_truncated = episode % grade_every == 0
                grammar = Grammar(inner, rng, safe=safe)
    finally:
        env.close()
    return stats


def pick_ids(k: int) -> list[str]:
    """``k`` ids spread over the scenario layers (round robin over layers, registry order within one)."""
    import sre_env
    from sre_env.envs.registry import scenario_class

    by_layer: dict[str, list[str]] = {}
    for env_id in sre_env.ENV_IDS:
        by_layer.setdefault(scenario_class(env_id).layer, []).append(env_id)
    out: list[str] = []
    while len(out) < k and any(by_layer.values()):
        for ids in by_layer.values():
            if ids and len(out) < k:
                out.append(ids.pop(0))
    return out
