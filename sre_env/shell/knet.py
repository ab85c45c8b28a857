"""kubectl get/describe for the networking.k8s.io kinds: NetworkPolicy, Ingress, IngressClass.

Columns and describe layouts follow kubectl's printers (``POD-SELECTOR``;
``CLASS HOSTS ADDRESS PORTS``) and its NetworkPolicy describer, which spells
out what a policy allows ("Allowing ingress traffic: ... From: PodSelector").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .kctx import K

__all__ = ["NET_COLUMNS", "NET_DESCRIBERS"]

Obj = dict[str, Any]


def _age(o: Obj, now: float) -> str:
    from .printers import age

    return age(o["metadata"].get("creationTimestamp"), now)


def selector_text(sel: Obj | None) -> str:
    """A LabelSelector as kubectl prints it (``k=v,k2 in (a,b)``); empty -> ``<none>``."""
    sel = sel or {}
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for e in sel.get("matchExpressions") or ():
        op = e.get("operator", "")
        vals = ",".join(e.get("values") or ())
        if op == "In":
            parts.append(f"{e.get('key')} in ({vals})")
        elif op == "NotIn":
            parts.append(f"{e.get('key')} notin ({vals})")
        elif op == "Exists":
            parts.append(str(e.get("key")))
        elif op == "DoesNotExist":
            parts.append(f"!{e.get('key')}")
    return ",".join(parts) or "<none>"


def _netpol(o: Obj, now: float, wide: bool) -> list[str]:
    return [selector_text((o.get("spec") or {}).get("podSelector")), _age(o, now)]


def _ingress(o: Obj, now: float, wide: bool) -> list[str]:
    spec = o.get("spec") or {}
    hosts = [r.get("host") for r in spec.get("rules") or () if r.get("host")]
    lb = ((o.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    addr = ",".join(i.get("ip") or i.get("hostname") or "" for i in lb)
    ports = "80, 443" if spec.get("tls") else "80"
    return [spec.get("ingressClassName") or "<none>", ",".join(hosts) or "*", addr, ports, _age(o, now)]


def _ingressclass(o: Obj, now: float, wide: bool) -> list[str]:
    spec = o.get("spec") or {}
    params = spec.get("parameters")
    return [spec.get("controller", ""), f"{params.get('kind')}/{params.get('name')}" if params else "<none>", _age(o, now)]


NET_COLUMNS: dict[str, tuple[list[str], list[str], Any]] = {
    "NetworkPolicy": (["POD-SELECTOR", "AGE"], [], _netpol),
    "Ingress": (["CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"], [], _ingress),
    "IngressClass": (["CONTROLLER", "PARAMETERS", "AGE"], [], _ingressclass),
}


def _ports(lines: list[str], ports: list[Obj] | None, ind: str) -> None:
    if not ports:
        lines.append(f"{ind}To Port: <any> (traffic allowed to all ports)")
        return
    for p in ports:
        port = p.get("port", "<any>")
        end = f"-{p['endPort']}" if p.get("endPort") else ""
        lines.append(f"{ind}To Port: {port}{end}/{p.get('protocol') or 'TCP'}")


def _peers(lines: list[str], title: str, peers: list[Obj] | None, ind: str) -> None:
    lines.append(f"{ind}{title}:")
    if not peers:
        lines.append(f"{ind}  <any> (traffic not restricted by {'destination' if title == 'To' else 'source'})")
        return
    for peer in peers:
        if peer.get("ipBlock"):
            b = peer["ipBlock"]
            lines.append(f"{ind}  IPBlock:")
            lines.append(f"{ind}    CIDR: {b.get('cidr', '')}")
            lines.append(f"{ind}    Except: {', '.join(b.get('except') or ())}")
            continue
        if peer.get("namespaceSelector") is not None:
            lines.append(f"{ind}  NamespaceSelector: {selector_text(peer['namespaceSelector'])}")
        if peer.get("podSelector") is not None:
            lines.append(f"{ind}  PodSelector: {selector_text(peer['podSelector'])}")
        lines.append(f"{ind}  ----------")
    if lines[-1].endswith("----------"):
        lines.pop()


def describe_netpol(k: "K", o: Obj) -> str:
    from .kdescribe import _W, rfc1123

    m = o["metadata"]
    spec = o.get("spec") or {}
    w = _W()
    w.kv(0, "Name", m["name"])
    w.kv(0, "Namespace", m.get("namespace"))
    w.kv(0, "Created on", rfc1123(m.get("creationTimestamp")).replace("+0000", "UTC"))
    w.labels(0, "Labels", m.get("labels"))
    w.annotations(0, "Annotations", m.get("annotations"))
    head = w.render()
    lines = ["Spec:"]
    sel = spec.get("podSelector") or {}
    shown = selector_text(sel)
    lines.append(f"  PodSelector:     {shown if shown != '<none>' else '<none> (Allowing the specific traffic to all pods in this namespace)'}")
    types = spec.get("policyTypes") or (["Ingress", "Egress"] if spec.get("egress") else ["Ingress"])
    if "Ingress" in types:
        lines.append("  Allowing ingress traffic:")
        rules = spec.get("ingress") or []
        if not rules:
            lines.append("    <none> (Selected pods are isolated for ingress connectivity)")
        for i, rule in enumerate(rules):
            if i:
                lines.append("    ----------")
            _ports(lines, rule.get("ports"), "    ")
            _peers(lines, "From", rule.get("from"), "    ")
    else:
        lines.append("  Not affecting ingress traffic")
    if "Egress" in types:
        lines.append("  Allowing egress traffic:")
        rules = spec.get("egress") or []
        if not rules:
            lines.append("    <none> (Selected pods are isolated for egress connectivity)")
        for i, rule in enumerate(rules):
            if i:
                lines.append("    ----------")
            _ports(lines, rule.get("ports"), "    ")
            _peers(lines, "To", rule.get("to"), "    ")
    else:
        lines.append("  Not affecting egress traffic")
    lines.append(f"  Policy Types: {', '.join(types)}")
    return head + "\n" + "\n".join(lines) + "\n"


def _endpoint_ips(k: "K", ns: str, svc: str, port: Obj) -> str:
    try:
        ep = next((e for e in k.api.list("Endpoints", ns) if e["metadata"]["name"] == svc), None)
    except Exception:  # noqa: BLE001 - describe never fails on a lookup
        ep = None
    addrs = []
    for sub in (ep or {}).get("subsets") or ():
        for a in sub.get("addresses") or ():
            for p in sub.get("ports") or ():
                addrs.append(f"{a.get('ip')}:{p.get('port')}")
    if ep is None:
        return f"(<error: services \"{svc}\" not found>)"
    return "(" + (",".join(addrs[:3]) + (f" + {len(addrs) - 3} more..." if len(addrs) > 3 else "") if addrs else "<none>") + ")"


def describe_ingress(k: "K", o: Obj) -> str:
    from .kdescribe import _W, _events_block

    m = o["metadata"]
    spec = o.get("spec") or {}
    ns = m.get("namespace", "")
    lb = ((o.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    w = _W()
    w.kv(0, "Name", m["name"])
    w.labels(0, "Labels", m.get("labels"))
    w.kv(0, "Namespace", ns)
    w.kv(0, "Address", ",".join(i.get("ip") or i.get("hostname") or "" for i in lb))
    w.kv(0, "Ingress Class", spec.get("ingressClassName") or "<none>")
    default = spec.get("defaultBackend")
    if default and default.get("service"):
        s = default["service"]
        port = (s.get("port") or {}).get("number", (s.get("port") or {}).get("name", ""))
        w.kv(0, "Default backend", f"{s.get('name')}:{port} {_endpoint_ips(k, ns, s.get('name', ''), s.get('port') or {})}")
    else:
        w.kv(0, "Default backend", "<default>")
    head = w.render()
    lines = ["Rules:", "  Host        Path  Backends", "  ----        ----  --------"]
    for rule in spec.get("rules") or ():
        lines.append(f"  {rule.get('host') or '*':<12}")
        for p in ((rule.get("http") or {}).get("paths") or ()):
            s = (p.get("backend") or {}).get("service") or {}
            port = (s.get("port") or {}).get("number", (s.get("port") or {}).get("name", ""))
            lines.append(f"              {p.get('path', '/'):<5} {s.get('name')}:{port} {_endpoint_ips(k, ns, s.get('name', ''), s.get('port') or {})}")
    w2 = _W()
    w2.annotations(0, "Annotations", m.get("annotations"))
    ev = _events_block(k, o).replace("Events:\t<none>", "Events:       <none>")
    return head + "\n" + "\n".join(lines) + "\n" + w2.render() + "\n" + ev + "\n"


def describe_ingressclass(k: "K", o: Obj) -> str:
    from .kdescribe import _W

    m = o["metadata"]
    w = _W()
    w.kv(0, "Name", m["name"])
    w.labels(0, "Labels", m.get("labels"))
    w.annotations(0, "Annotations", m.get("annotations"))
    w.kv(0, "Controller", (o.get("spec") or {}).get("controller", ""))
    w.kv(0, "Events", "<none>")
    return w.render() + "\n"


NET_DESCRIBERS = {"NetworkPolicy": describe_netpol, "Ingress": describe_ingress, "IngressClass": describe_ingressclass}
