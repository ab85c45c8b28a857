"""The network model: CoreDNS config, dnsPolicy, NetworkPolicy, Ingress, kube-proxy, firewalls, IPAM."""

from __future__ import annotations

import pytest

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.shell import ShellContext, run_command
from sre_env.sim.backend import SimBackend
from sre_env.sim.engine import reboot_node
from sre_env.sim.episodes import healthy_world
from sre_env.sim.network import dns, ingress, kubeproxy, netpol, nodenet
from sre_env.sim.network.netmodel import client_for, resolve_from
from sre_env.sim.network.routing import resolve_route

NS = "hotel-reservation"


@pytest.fixture()
def backend() -> SimBackend:
    return SimBackend(healthy_world(HOTEL_RESERVATION))


def _pod(b: SimBackend, comp: str) -> dict:
    return next(p for p in b.api.list("Pod", NS) if p["metadata"]["labels"].get("io.kompose.service") == comp and not p["metadata"].get("deletionTimestamp"))


def _route(b: SimBackend, comp: str, addr: str):
    return resolve_route(b.world, NS, addr, None, client=_pod(b, comp)["metadata"]["uid"])


def _sh(b: SimBackend, cmd: str) -> str:
    return run_command(ShellContext(b, NS), cmd).output


def _set_corefile(b: SimBackend, text: str) -> None:
    b.api.patch("ConfigMap", "coredns", "kube-system", {"data": {"Corefile": text}}, "merge")


# --------------------------------------------------------------------------- CoreDNS
def test_default_cluster_has_coredns_kube_proxy_and_ingress(backend: SimBackend) -> None:
    cm = backend.api.get("ConfigMap", "coredns", "kube-system")
    assert "kubernetes cluster.local in-addr.arpa ip6.arpa" in cm["data"]["Corefile"]
    ds = backend.api.get("DaemonSet", "kube-proxy", "kube-system")
    assert ds["status"]["numberReady"] == ds["status"]["desiredNumberScheduled"] == len(backend.world.hosts)
    assert backend.api.list("Ingress", NS)
    assert _route(backend, "search", "geo:8083").ok == 1.0


def test_template_nxdomain_breaks_one_name_with_go_error(backend: SimBackend) -> None:
    snippet = '    template ANY ANY hotel-reservation.svc.cluster.local {\n       match "^geo[.]hotel-reservation[.]svc[.]cluster[.]local[.]$"\n       rcode NXDOMAIN\n       fallthrough\n    }\n'
    text = dns.DEFAULT_COREFILE.replace("    kubernetes ", snippet + "    kubernetes ")
    _set_corefile(backend, text)
    r = _route(backend, "search", "geo:8083")
    assert r.ok == 0.0 and r.error == "dial tcp: lookup geo on 10.96.0.10:53: no such host"
    assert _route(backend, "search", "rate:8084").ok == 1.0


def test_rewrite_to_missing_namespace_and_reload_keeps_last_good_config(backend: SimBackend) -> None:
    text = dns.DEFAULT_COREFILE.replace("    kubernetes ", "    rewrite name rate.hotel-reservation.svc.cluster.local rate.old-ns.svc.cluster.local\n    kubernetes ")
    _set_corefile(backend, text)
    assert "no such host" in (_route(backend, "search", "rate:8084").error or "")
    # a Corefile that does not parse is not loaded: CoreDNS keeps serving the previous one
    _set_corefile(backend, ".:53 {\n    errors\n")
    assert "no such host" in (_route(backend, "search", "rate:8084").error or "")
    _set_corefile(backend, dns.DEFAULT_COREFILE)
    assert _route(backend, "search", "rate:8084").ok == 1.0


def test_corefile_parser_reads_blocks_and_plugins() -> None:
    core = dns.parse_corefile(dns.DEFAULT_COREFILE)
    assert core.error is None and core.blocks[0].zones == (".",)
    assert [d.name for d in core.blocks[0].directives][:4] == ["errors", "health", "ready", "kubernetes"]
    assert core.blocks[0].plugin("kubernetes")[0].block[0] == ("pods", "insecure")
    assert dns.parse_corefile("garbage").error


# --------------------------------------------------------------------------- dnsPolicy
def test_resolv_conf_per_dns_policy() -> None:
    pod = {"metadata": {"namespace": NS}, "spec": {"dnsPolicy": "ClusterFirst"}}
    conf = dns.resolv_conf(pod)
    assert conf.nameservers == ("10.96.0.10",) and conf.ndots == 5 and conf.searches[0] == f"{NS}.svc.cluster.local"
    assert dns.resolv_conf({"metadata": {}, "spec": {"dnsPolicy": "Default"}}).nameservers == (dns.NODE_NAMESERVER,)
    custom = dns.resolv_conf({"metadata": {}, "spec": {"dnsPolicy": "None", "dnsConfig": {"nameservers": ["8.8.8.8"], "options": [{"name": "ndots", "value": "2"}]}}})
    assert custom.nameservers == ("8.8.8.8",) and custom.ndots == 2
    assert dns.resolv_conf({"metadata": {}, "spec": {"hostNetwork": True}}).nameservers == (dns.NODE_NAMESERVER,)


def test_default_dns_policy_pod_crash_loops_on_lookup(backend: SimBackend) -> None:
    backend.api.patch("Deployment", "geo", NS, {"spec": {"strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}, "template": {"spec": {"dnsPolicy": "Default"}}}}, "strategic")
    backend.advance(120)
    pod = _pod(backend, "geo")
    assert pod["spec"]["dnsPolicy"] == "Default"
    src = client_for(backend.world, pod["metadata"]["uid"])
    ans = resolve_from(backend.world, src, "mongodb-geo")
    assert ans.ip is None and ans.error == f"lookup mongodb-geo on {dns.NODE_NAMESERVER}:53: no such host"
    out = _sh(backend, f"kubectl get pods -n {NS} -l io.kompose.service=geo")
    assert int(out.splitlines()[1].split()[3]) >= 2  # it keeps exiting at start-up


# --------------------------------------------------------------------------- NetworkPolicy
def _policy(name: str, spec: dict) -> dict:
    return {"kind": "NetworkPolicy", "apiVersion": "networking.k8s.io/v1", "metadata": {"name": name, "namespace": NS}, "spec": spec}


def test_ingress_policy_drops_unlisted_callers_as_timeouts(backend: SimBackend) -> None:
    backend.api.create(_policy("db", {"podSelector": {"matchLabels": {"io.kompose.service": "mongodb-rate"}}, "policyTypes": ["Ingress"], "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "rate"}}}], "ports": [{"protocol": "TCP", "port": 27017}]}]}))
    r = _route(backend, "rate", "mongodb-rate:27017")
    assert r.ok == 0.0 and r.error.endswith(":27017: i/o timeout") and r.error.startswith("dial tcp 10.96.")
    backend.api.patch("NetworkPolicy", "db", NS, [{"op": "replace", "path": "/spec/ingress/0/from/0/podSelector", "value": {"matchLabels": {"io.kompose.service": "rate"}}}], "json")
    assert _route(backend, "rate", "mongodb-rate:27017").ok == 1.0
    # still isolated for everyone else
    w = backend.world
    assert not netpol.allowed(w, netpol.peer_for_pod(w, _pod(backend, "frontend")), netpol.peer_for_pod(w, _pod(backend, "mongodb-rate")), 27017)


def test_egress_lockdown_without_dns_times_out_lookups(backend: SimBackend) -> None:
    backend.api.create(_policy("lockdown", {"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"to": [{"podSelector": {}}]}]}))
    r = _route(backend, "search", "geo:8083")
    assert r.ok == 0.0 and "lookup geo on 10.96.0.10:53: read udp" in r.error and r.error.endswith("i/o timeout")
    pod = _pod(backend, "search")["metadata"]["name"]
    assert _sh(backend, f"kubectl exec {pod} -n {NS} -- nslookup geo").startswith(";; connection timed out; no servers could be reached")
    out = _sh(backend, f"kubectl get netpol -n {NS}")
    assert out.splitlines()[0].split() == ["NAME", "POD-SELECTOR", "AGE"] and "lockdown   <none>" in out
    desc = _sh(backend, f"kubectl describe networkpolicy lockdown -n {NS}")
    assert "PodSelector:     <none> (Allowing the specific traffic to all pods in this namespace)" in desc
    assert "Not affecting ingress traffic" in desc and "Policy Types: Egress" in desc


# --------------------------------------------------------------------------- internalTrafficPolicy
def test_internal_traffic_policy_local_drops_remote_clients(backend: SimBackend) -> None:
    geo_node = _pod(backend, "geo")["spec"]["nodeName"]
    search_node = _pod(backend, "search")["spec"]["nodeName"]
    backend.api.patch("Service", "geo", NS, {"spec": {"internalTrafficPolicy": "Local"}}, "merge")
    r = _route(backend, "search", "geo:8083")
    if geo_node == search_node:
        assert r.ok == 1.0
    else:
        assert r.ok == 0.0 and r.error.endswith("i/o timeout")
    assert _route(backend, "geo", "geo:8083").ok == 1.0  # a client on the endpoint's node is served


# --------------------------------------------------------------------------- kube-proxy
def test_kube_proxy_bad_image_freezes_rules_on_its_node(backend: SimBackend) -> None:
    world = backend.world
    node = _pod(backend, "search")["spec"]["nodeName"]
    backend.api.patch("DaemonSet", "kube-proxy", "kube-system", {"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": None}, "template": {"spec": {"containers": [{"name": "kube-proxy", "image": "registry.k8s.io/kube-proxy:v1.32.20"}]}}}}, "strategic")
    for pod in backend.api.list("Pod", "kube-system", label_selector="k8s-app=kube-proxy"):
        if pod["spec"]["nodeName"] == node:
            backend.api.delete("Pod", pod["metadata"]["name"], "kube-system")
    backend.advance(60)
    assert not kubeproxy.proxy_live(world, node)
    out = _sh(backend, "kubectl get pods -n kube-system -l k8s-app=kube-proxy -o wide")
    assert "ImagePullBackOff" in out or "ErrImagePull" in out
    assert _route(backend, "search", "geo:8083").ok == 1.0  # frozen rules still match the old endpoints
    backend.api.delete("Pod", _pod(backend, "geo")["metadata"]["name"], NS)
    backend.advance(60)
    r = _route(backend, "search", "geo:8083")
    assert r.ok == 0.0 and r.error.endswith("i/o timeout")
    ds = _sh(backend, "kubectl get ds kube-proxy -n kube-system")
    assert ds.splitlines()[1].split()[:6] == ["kube-proxy", "4", "4", "3", "1", "3"]
    # the right image and a new pod: live rules again
    _sh(backend, "kubectl set image daemonset/kube-proxy -n kube-system kube-proxy=" + kubeproxy.KUBE_PROXY_IMAGE)
    _sh(backend, "kubectl delete pod -n kube-system -l k8s-app=kube-proxy --field-selector spec.nodeName=" + node)
    backend.advance(60)
    assert kubeproxy.proxy_live(world, node) and _route(backend, "search", "geo:8083").ok == 1.0


def test_daemonset_rolling_update_stalls_on_an_unready_pod(backend: SimBackend) -> None:
    backend.api.patch("DaemonSet", "kube-proxy", "kube-system", {"spec": {"template": {"spec": {"containers": [{"name": "kube-proxy", "image": "registry.k8s.io/kube-proxy:v9.9.9"}]}}}}, "strategic")
    backend.advance(120)
    st = backend.api.get("DaemonSet", "kube-proxy", "kube-system")["status"]
    assert st["updatedNumberScheduled"] == 1 and st["numberReady"] == 3 and st["numberUnavailable"] == 1


# --------------------------------------------------------------------------- Ingress
def test_ingress_routes_and_nginx_errors(backend: SimBackend) -> None:
    world = backend.world
    routes = ingress.entry_routes(world, HOTEL_RESERVATION)
    assert routes and all(r.ok == 1.0 for r in routes.values())
    out = _sh(backend, f"kubectl get ingress -n {NS}")
    assert out.splitlines()[0].split() == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    assert "frontend-ingress   nginx   *       localhost   80" in out
    ing = backend.api.get("Ingress", "frontend-ingress", NS)
    ing["spec"]["rules"][0]["http"]["paths"].insert(0, {"path": "/recommendations", "pathType": "Prefix", "backend": {"service": {"name": "recommendation", "port": {"number": 8085}}}})
    backend.api.replace(ing)
    routes = ingress.entry_routes(world, HOTEL_RESERVATION)
    assert routes["recommend"].ok == 0.0 and routes["recommend"].error.startswith("HTTP 502")
    assert routes["search_hotels"].ok == 1.0
    ing = backend.api.get("Ingress", "frontend-ingress", NS)
    ing["spec"]["rules"][0]["http"]["paths"][1]["backend"]["service"]["name"] = "nope"
    backend.api.replace(ing)
    assert ingress.entry_routes(world, HOTEL_RESERVATION)["search_hotels"].error.startswith("HTTP 503")
    backend.advance(60)
    assert list(world.client_history["hotel-reservation"])[-1][1] < 0.05
    desc = _sh(backend, f"kubectl describe ingress frontend-ingress -n {NS}")
    assert "/recommendations recommendation:8085 (" in desc and "Ingress Class:    nginx" in desc and "nope:5000 (<error: services \"nope\" not found>)" in desc


# --------------------------------------------------------------------------- node firewall
def test_iptables_partition_saved_rules_and_boot(backend: SimBackend) -> None:
    world = backend.world
    a, b = "worker-1", "worker-2"
    peer = world.hosts[b]
    for cmd in (f"iptables -I INPUT -s {peer.internal_ip}/32 -j DROP", "iptables -I FORWARD -s 10.244.2.0/24 -j DROP", "iptables -I FORWARD -d 10.244.2.0/24 -j DROP", "netfilter-persistent save"):
        assert backend.nodes.exec(a, cmd.split()).exit_code == 0
    rules = backend.nodes.exec(a, ["iptables", "-S", "FORWARD"]).output
    assert "-A FORWARD -s 10.244.2.0/24 -j DROP" in rules and "-P FORWARD ACCEPT" in rules
    assert "-A INPUT -s 172.18.0.4/32 -j DROP" in backend.nodes.exec(a, ["cat", "/etc/iptables/rules.v4"]).output
    v = nodenet.packet_verdict(world.hosts[b], "10.244.2.5", False, world.hosts[a], "10.244.1.5", False, "tcp", 80)
    assert v == "DROP"
    # pod traffic across the two nodes times out; within a node it flows
    pods = [p for p in backend.api.list("Pod", NS) if p["spec"].get("nodeName") in (a, b)]
    server = next(p for p in pods if p["spec"]["nodeName"] == a and HOTEL_RESERVATION.component(p["metadata"]["labels"]["io.kompose.service"]).service_ports)
    comp = HOTEL_RESERVATION.component(server["metadata"]["labels"]["io.kompose.service"])
    client = next(p for p in pods if p["spec"]["nodeName"] == b)
    r = resolve_route(world, NS, f"{comp.name}:{comp.service_ports[0][1]}", None, client=client["metadata"]["uid"])
    assert r.ok == 0.0 and r.error.endswith("i/o timeout")
    assert "-j DROP" in backend.nodes.exec(a, ["iptables", "-L", "FORWARD", "-n"]).output or "DROP" in backend.nodes.exec(a, ["iptables", "-L", "FORWARD", "-n"]).output
    # removing the runtime rules only: a reboot brings the saved ones back
    backend.nodes.exec(a, ["iptables", "-F", "FORWARD"])
    assert nodenet.packet_verdict(world.hosts[b], "10.244.2.5", False, world.hosts[a], "10.244.1.5", False, "tcp", 80) is None
    reboot_node(world, a)
    assert nodenet.packet_verdict(world.hosts[b], "10.244.2.5", False, world.hosts[a], "10.244.1.5", False, "tcp", 80) == "DROP"
    bad = backend.nodes.exec(a, ["iptables", "-D", "FORWARD", "-s", "10.9.9.9", "-j", "DROP"])
    assert bad.exit_code == 1 and "Bad rule" in bad.output


# --------------------------------------------------------------------------- IPAM
def test_leaked_reservations_exhaust_the_pod_cidr(backend: SimBackend) -> None:
    world = backend.world
    node = _pod(backend, "geo")["spec"]["nodeName"]
    host = world.hosts[node]
    _, _, usable = nodenet.ipam_range(backend.api.get("Node", node)["spec"]["podCIDR"])
    live = set(nodenet.in_use(world, node))
    for ip in usable:
        if ip not in live:
            host.files[f"{nodenet.CNI_DIR}/{ip}"] = f"{'ab' * 32}\neth0"
    name = _pod(backend, "geo")["metadata"]["name"]
    backend.api.patch("Deployment", "geo", NS, {"spec": {"template": {"spec": {"nodeSelector": {"kubernetes.io/hostname": node}}}}}, "strategic")
    backend.advance(30)
    stuck = [p for p in backend.api.list("Pod", NS) if p["metadata"]["labels"].get("io.kompose.service") == "geo" and p["metadata"]["name"] != name]
    assert stuck and stuck[0]["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "ContainerCreating"
    events = _sh(backend, f"kubectl get events -n {NS} --field-selector reason=FailedCreatePodSandBox")
    assert "no IP addresses available in range set: " in events and 'plugin type="ptp" failed (add)' in events
    listing = backend.nodes.exec(node, ["ls", nodenet.CNI_DIR]).output
    assert usable[-1] in listing
    # freeing the leaked files lets the sandbox come up
    for ip in usable[-5:]:
        backend.nodes.exec(node, ["rm", f"{nodenet.CNI_DIR}/{ip}"])
    backend.advance(60)
    assert any(p["status"].get("phase") == "Running" and p["metadata"]["name"] != name for p in backend.api.list("Pod", NS) if p["metadata"]["labels"].get("io.kompose.service") == "geo")


# --------------------------------------------------------------------------- what the add-ons log
def test_coredns_logs_reloads_and_rejects_bad_corefiles(backend: SimBackend) -> None:
    _set_corefile(backend, dns.DEFAULT_COREFILE.replace("cache 30", "cache 60"))
    backend.advance(10)
    logs = _sh(backend, "kubectl logs -n kube-system deploy/coredns --tail=3")
    assert "[INFO] Reloading" in logs and "[INFO] plugin/reload: Running configuration SHA512 = " in logs and "[INFO] Reloading complete" in logs
    _set_corefile(backend, ".:53 {\n    errors\n")
    backend.advance(10)
    assert "[ERROR] Restart failed: " in _sh(backend, "kubectl logs -n kube-system deploy/coredns --tail=2")


def test_ingress_controller_logs_upstream_errors(backend: SimBackend) -> None:
    ing = backend.api.get("Ingress", "frontend-ingress", NS)
    ing["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["port"] = {"number": 8080}
    backend.api.replace(ing)
    backend.advance(30)
    logs = _sh(backend, "kubectl logs -n ingress-nginx deploy/ingress-nginx-controller --tail=2")
    assert 'controller.go:1216] Service "hotel-reservation/frontend" does not have any active Endpoint.' in logs


def test_ingress_path_matching_follows_nginx() -> None:
    def ing(paths: list[tuple[str, str, str]]) -> dict:
        return {"metadata": {"name": "x"}, "spec": {"ingressClassName": "nginx", "rules": [{"http": {"paths": [{"path": p, "pathType": t, "backend": {"service": {"name": s, "port": {"number": 80}}}} for p, t, s in paths]}}]}}

    rules = [ing([("/", "Prefix", "web"), ("/api", "Prefix", "api"), ("/api/v1/login", "Exact", "auth")])]
    pick = lambda path: ingress.match_backend(rules, path)[1]["service"]["name"]  # noqa: E731
    assert pick("/api/v1/login") == "auth"
    assert pick("/api/v1/login/x") == "api"
    assert pick("/apix") == "web"  # Prefix matches whole path elements only
    assert pick("/hotels") == "web"
    assert ingress.match_backend([ing([("/api", "Prefix", "api")])], "/hotels") is None
