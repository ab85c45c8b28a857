"""Network probes from inside a pod: ``nslookup``, ``getent``, ``nc``, ``wget``, ``curl``, ``netstat``, ``ss``.

Reachability comes from the view's hooks (``resolve`` for DNS, ``connect``
for a TCP dial), so a broken Service, a wrong port or a dead endpoint shows up
exactly as the tool would report it. The wording follows the variant of the
tool the image ships (busybox applets vs. curl / netcat-openbsd).
"""

from __future__ import annotations

import re

from sre_env.backend import ExecResult
from sre_env.sim.commands.views import ContainerView
from sre_env.sim.kernel.hashing import stable_hash
from sre_env.sim.runtime.image_contents import ImageInfo
from sre_env.sim.runtime.oslimits import netstat_rows

__all__ = ["nslookup", "getent", "nc", "wget", "curl", "netstat", "ss", "dial", "resolve", "fqdn", "http_body", "memcached_stats"]

_IP = re.compile(r"^\d{1,3}(\.\d{1,3}){3}$")


def _ns(view: ContainerView) -> str:
    return str((view.pod.get("metadata") or {}).get("namespace") or "default")


def fqdn(view: ContainerView, name: str) -> str:
    """The name a resolver reports for ``name`` after applying the pod's search list."""
    name = name.rstrip(".")
    if _IP.match(name) or name == "localhost":
        return name
    if name.endswith(".cluster.local"):
        return name
    dots = name.count(".")
    if dots == 0:
        return f"{name}.{_ns(view)}.svc.cluster.local"
    if dots == 1:
        return f"{name}.svc.cluster.local"
    if name.endswith(".svc"):
        return f"{name}.cluster.local"
    return name


def _pod_ip(view: ContainerView) -> str:
    return str((view.pod.get("status") or {}).get("podIP") or f"10.244.{view.node.index + 1}.{stable_hash((view.pod.get('metadata') or {}).get('name')) % 200 + 10}")


def resolve(view: ContainerView, name: str) -> str | None:
    """IP for ``name``: literals and localhost directly, the rest through the view's DNS hook."""
    if _IP.match(name):
        return name
    if name in ("localhost", "127.0.0.1", "ip6-localhost"):
        return "127.0.0.1"
    pod_name = str((view.pod.get("metadata") or {}).get("name", ""))
    if name == pod_name:
        return _pod_ip(view)
    if view.resolve is None:
        return f"10.96.{stable_hash(fqdn(view, name)) % 250}.{stable_hash('ip', fqdn(view, name)) % 250 + 1}"
    try:
        return view.resolve(name)
    except Exception:  # noqa: BLE001 - a hook failure reads as a DNS failure
        return None


def dial(view: ContainerView, host: str, ip: str, port: int) -> str | None:
    """None when a TCP connection to ``host:port`` succeeds, else ``refused`` / ``timeout`` / ``unreachable``."""
    if ip.startswith("127.") or ip == _pod_ip(view):
        return None if (view.process_running and port in view.listening_ports) else "refused"
    if view.connect is None:
        return None
    try:
        err = view.connect(host, port)
    except Exception:  # noqa: BLE001
        return "timeout"
    if err is None:
        return None
    e = str(err).lower()
    if "refused" in e:
        return "refused"
    if "unreachable" in e or "no route" in e:
        return "unreachable"
    if "resolve" in e or "no such host" in e or "nxdomain" in e:
        return "nxdomain"
    return "timeout"


# --------------------------------------------------------------------------- DNS

def nslookup(view: ContainerView, argv: list[str], stdin: str | None = None) -> ExecResult:
    args = [a for a in argv[1:] if not a.startswith("-")]
    if not args:
        return ExecResult("BusyBox v1.36.1 (2023-07-27 17:12:24 UTC) multi-call binary.\n\nUsage: nslookup [-type=QUERY_TYPE] [-debug] HOST [DNS_SERVER]\n\nQuery DNS about HOST\n", 1)
    name = args[0]
    probe = view.dns_probe(name) if view.dns_probe is not None and len(args) == 1 and not _IP.match(name) else None
    server = args[1] if len(args) > 1 else (probe[0] if probe else "10.96.0.10")
    if probe and probe[1] == "timeout":
        return ExecResult(";; connection timed out; no servers could be reached\n\n", 1)
    head = f"Server:\t\t{server}\nAddress:\t{server}:53\n\n"
    if probe and probe[1] == "servfail":
        return ExecResult(head + f"** server can't find {name}: SERVFAIL\n\n", 1)
    ip = resolve(view, name)
    if ip is None or (server != "10.96.0.10" and not _IP.match(name)):
        ns = _ns(view)
        cands = [name] if "." in name.rstrip(".") and name.endswith(".") else []
        if not cands:
            cands = [f"{name}.{ns}.svc.cluster.local", f"{name}.svc.cluster.local", f"{name}.cluster.local", name] if name.count(".") < 5 else [name]
        return ExecResult(head + "".join(f"** server can't find {c}: NXDOMAIN\n\n" for c in cands), 1)
    if _IP.match(name):
        rev = ".".join(reversed(name.split(".")))
        return ExecResult(head + f"{rev}.in-addr.arpa\tname = {name.replace('.', '-')}.{_ns(view)}.pod.cluster.local\n\n", 0)
    return ExecResult(head + f"Name:\t{fqdn(view, name)}\nAddress: {ip}\n\n", 0)


def getent(view: ContainerView, argv: list[str], stdin: str | None = None) -> ExecResult:
    if len(argv) < 2:
        return ExecResult("Usage: getent [OPTION...] database [key ...]\nTry `getent --help' or `getent --usage' for more information.\n", 1)
    db = argv[1]
    if db not in ("hosts", "ahosts", "ahostsv4", "passwd", "group", "services"):
        return ExecResult(f"Unknown database: {db}\nTry `getent --help' or `getent --usage' for more information.\n", 1)
    if db in ("passwd", "group"):
        return ExecResult("root:x:0:0:root:/root:/bin/sh\n" if db == "passwd" else "root:x:0:\n", 0)
    if len(argv) < 3:
        return ExecResult(f"127.0.0.1       localhost\n{_pod_ip(view):<15} {(view.pod.get('metadata') or {}).get('name', '')}\n", 0)
    out, code = [], 0
    for name in argv[2:]:
        ip = resolve(view, name)
        if ip is None:
            code = 2
            continue
        shown = "localhost" if ip.startswith("127.") else fqdn(view, name)
        if db == "hosts":
            out.append(f"{ip:<15} {shown}\n")
        else:
            out.append(f"{ip:<15} STREAM {shown}\n{ip:<15} DGRAM  \n{ip:<15} RAW    \n")
    return ExecResult("".join(out), code)


# --------------------------------------------------------------------------- nc

def memcached_stats(view: ContainerView, host: str) -> str:
    h = stable_hash(host)
    up = int(view.uptime_s) if view.process_running else 0
    return "".join(
        f"STAT {k} {v}\r\n"
        for k, v in (
            ("pid", 1), ("uptime", up), ("time", 1772442000 + int(view.now)), ("version", "1.6.29"), ("libevent", "2.1.12-stable"),
            ("pointer_size", 64), ("curr_connections", 3 + h % 5), ("total_connections", 40 + h % 300), ("cmd_get", 12000 + h % 90_000),
            ("cmd_set", 1200 + h % 5000), ("get_hits", 10800 + h % 80_000), ("get_misses", 1200 + h % 9000), ("limit_maxbytes", 134217728),
            ("threads", 2), ("curr_items", 80 + h % 1200), ("evictions", 0),
        )
    ) + "END\r\n"


def nc(view: ContainerView, argv: list[str], stdin: str | None = None, info: ImageInfo | None = None) -> ExecResult:
    """netcat as the image ships it (``info``: another image's variant, e.g. the busybox one a script bundles)."""
    info = info or view.image
    zero = verbose = False
    pos: list[str] = []
    i = 1
    while i < len(argv):
        a = argv[i]
        i += 1
        if a.startswith("-") and len(a) > 1:
            for j, c in enumerate(a[1:]):
                if c == "z":
                    zero = True
                elif c == "v":
                    verbose = True
                elif c in "wWiq":
                    if j == len(a) - 2:
                        i += 1
                    break
                elif c in "nuNlkCd46":
                    continue
                else:
                    return ExecResult(f"nc: invalid option -- '{c}'\n" + ("BusyBox v1.36.1 (2023-07-27 17:12:24 UTC) multi-call binary.\n\nUsage: nc [OPTIONS] HOST PORT  - connect\nnc [OPTIONS] -l -p PORT [HOST] [PORT]  - listen\n" if info.busybox else "usage: nc [-46CDdFhklNnrStUuvZz] [-I length] [-i interval] [-M ttl]\n\t  [-m minttl] [-O length] [-P proxy_username] [-p source_port]\n\t  [-q seconds] [-s sourceaddr] [-T keyword] [-V rtable] [-W recvlimit]\n\t  [-w timeout] [-X proxy_protocol] [-x proxy_address[:port]]\n\t  [destination] [port]\n"), 1)
        else:
            pos.append(a)
    if len(pos) < 2:
        return ExecResult("BusyBox v1.36.1 (2023-07-27 17:12:24 UTC) multi-call binary.\n\nUsage: nc [OPTIONS] HOST PORT  - connect\n" if info.busybox else "usage: nc [-46CDdFhklNnrStUuvZz] [-I length] [-i interval] [-M ttl]\n\t  [destination] [port]\n", 1)
    host, port_s = pos[0], pos[1]
    if not port_s.isdigit() or not 0 < int(port_s) < 65536:
        return ExecResult(f"nc: bad port '{port_s}'\n" if info.busybox else f"nc: port number invalid: {port_s}\n", 1)
    port = int(port_s)
    ip = resolve(view, host)
    if ip is None:
        return ExecResult(f"nc: bad address '{host}'\n" if info.busybox else f'nc: getaddrinfo for host "{host}" port {port}: Name or service not known\n', 1)
    err = dial(view, host, ip, port)
    if err is not None:
        if info.busybox:
            what = {"refused": "Connection refused", "unreachable": "No route to host"}.get(err, "Connection timed out")
            return ExecResult(f"nc: {host} ({ip}:{port}): {what}\n", 1)
        if err == "refused":
            return ExecResult(f"nc: connect to {host} ({ip}) port {port} (tcp) failed: Connection refused\n", 1)
        return ExecResult(f"nc: connect to {host} ({ip}) port {port} (tcp) timed out: Operation now in progress\n", 1)
    msg = ""
    if verbose:
        msg = f"{host} ({ip}:{port}) open\n" if info.busybox else f"Connection to {host} ({ip}) {port} port [tcp/*] succeeded!\n"
    if zero:
        return ExecResult(msg, 0)
    body = ""
    if stdin and port == 11211:
        cmd = stdin.strip().split("\n")[0].strip()
        if cmd == "stats":
            body = memcached_stats(view, host)
        elif cmd in ("version",):
            body = "VERSION 1.6.29\r\n"
        elif cmd.startswith("get "):
            body = "END\r\n"
        elif cmd:
            body = "ERROR\r\n"
    elif stdin and port == 8500 and stdin.startswith("GET"):
        body = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + http_body(host, port, "/v1/status/leader")[1]
    return ExecResult(msg + body, 0)


# --------------------------------------------------------------------------- HTTP

_URL = re.compile(r"^(?:(https?)://)?([^/:?#\[\]]+|\[[0-9a-fA-F:]+\])(?::(\d+))?([^#]*)$")


def _parse_url(url: str) -> tuple[str, str, int, str] | None:
    m = _URL.match(url)
    if not m:
        return None
    scheme = m.group(1) or "http"
    port = int(m.group(3)) if m.group(3) else (443 if scheme == "https" else 80)
    path = m.group(4) or "/"
    if not path.startswith("/"):
        path = "/" + path
    return scheme, m.group(2), port, path


def http_body(host: str, port: int, path: str) -> tuple[int, str]:
    """(status, body) a server on ``port`` returns for ``GET path``; status 0 = not an HTTP server."""
    if port == 27017:
        return 200, "It looks like you are trying to access MongoDB over HTTP on the native driver port.\n"
    if port == 11211:
        return -1, "ERROR"
    if port == 8500:
        if path.startswith("/v1/status/leader"):
            return 200, '"127.0.0.1:8300"'
        if path.startswith("/v1/status/peers"):
            return 200, '["127.0.0.1:8300"]'
        if path.startswith("/v1/catalog/services"):
            return 200, '{"consul":[],"srv-geo":[],"srv-profile":[],"srv-rate":[],"srv-recommendation":[],"srv-reservation":[],"srv-search":[],"srv-user":[]}'
        if path.startswith("/v1/agent/self") or path.startswith("/v1/health"):
            return 200, "[]" if path.startswith("/v1/health") else '{"Config":{"Datacenter":"dc1","NodeName":"consul","Server":true}}'
        if path in ("/", "/ui", "/ui/"):
            return 200, "<!DOCTYPE html>\n<html lang=\"en\">\n<head><title>Consul by HashiCorp</title></head>\n<body></body>\n</html>\n"
        return 404, ""
    if port == 5000:
        if path.startswith("/hotels"):
            return 200, '{"type":"FeatureCollection","features":[]}'
        if path.startswith("/recommendations"):
            return 200, '{"type":"FeatureCollection","features":[]}'
        if path.startswith("/user") or path.startswith("/reservation"):
            return 200, '{"message":"Login successfully!"}' if path.startswith("/user") else '{"message":"Reserve successfully!"}'
        return 200, "<!DOCTYPE html>\n<html>\n<head><title>Hotel Reservation</title></head>\n<body></body>\n</html>\n"
    if port in (16686,):
        return 200, "<!doctype html><html lang=\"en\"><head><title>Jaeger UI</title></head><body></body></html>\n"
    if port in (14269,):
        return 200, '{"status":"Server available","upSince":"2026-03-02T08:50:00Z","uptime":"25m0s"}'
    if port in (80, 8080, 3000, 9090, 8000, 443):
        return 200, "<!DOCTYPE html>\n<html>\n<head><title>Welcome</title></head>\n<body></body>\n</html>\n"
    return 0, ""


def wget(view: ContainerView, argv: list[str], stdin: str | None = None) -> ExecResult:
    quiet = spider = False
    out_file: str | None = None
    urls: list[str] = []
    i = 1
    while i < len(argv):
        a = argv[i]
        i += 1
        if a in ("-q", "--quiet"):
            quiet = True
        elif a in ("--spider", "-s"):
            spider = True
        elif a.startswith("-O") or a == "--output-document":
            out_file = a[2:] if len(a) > 2 else (argv[i] if i < len(argv) else "")
            if len(a) <= 2:
                i += 1
        elif a.startswith("-qO"):
            quiet = True
            out_file = a[3:] if len(a) > 3 else (argv[i] if i < len(argv) else "")
            if len(a) <= 3:
                i += 1
        elif a in ("-T", "--timeout", "-U", "--header", "-Y", "--post-data", "-P"):
            i += 1
        elif a.startswith("-T") or a.startswith("--timeout=") or a.startswith("--header=") or a.startswith("--post-data="):
            continue
        elif a in ("-S", "--server-response", "-c", "--continue", "--no-check-certificate", "-4", "-6"):
            continue
        elif a.startswith("-"):
            return ExecResult(f"wget: unrecognized option '{a}'\nBusyBox v1.36.1 (2023-07-27 17:12:24 UTC) multi-call binary.\n\nUsage: wget [-cqS] [--spider] [-O FILE] [-o LOGFILE] [--header STR]\n\t[--post-data STR | --post-file FILE] [-Y on/off]\n\t[-P DIR] [-U AGENT] [-T SEC] URL...\n\nRetrieve files via HTTP or FTP\n", 1)
        else:
            urls.append(a)
    if not urls:
        return ExecResult("BusyBox v1.36.1 (2023-07-27 17:12:24 UTC) multi-call binary.\n\nUsage: wget [-cqS] [--spider] [-O FILE] [-o LOGFILE] [--header STR]\n\t[--post-data STR | --post-file FILE] [-Y on/off]\n\t[-P DIR] [-U AGENT] [-T SEC] URL...\n\nRetrieve files via HTTP or FTP\n", 1)
    parsed = _parse_url(urls[0])
    if parsed is None:
        return ExecResult(f"wget: bad address '{urls[0]}'\n", 1)
    scheme, host, port, path = parsed
    ip = resolve(view, host)
    if ip is None:
        return ExecResult(f"wget: bad address '{host}'\n", 1)
    pre = "" if quiet else f"Connecting to {host}{':' + str(port) if port not in (80, 443) else ''} ({ip}:{port})\n"
    err = dial(view, host, ip, port)
    if err == "refused":
        return ExecResult(pre + f"wget: can't connect to remote host ({ip}): Connection refused\n", 1)
    if err == "unreachable":
        return ExecResult(pre + f"wget: can't connect to remote host ({ip}): No route to host\n", 1)
    if err is not None:
        return ExecResult(pre + "wget: download timed out\n", 1)
    if scheme == "https" and port != 443:
        return ExecResult(pre + "wget: error getting response: Connection reset by peer\n", 1)
    status, body = http_body(host, port, path)
    if status == 0:
        return ExecResult(pre + "wget: error getting response: Connection reset by peer\n", 1)
    if status == -1:
        return ExecResult(pre + f"wget: server returned error: {body}\n", 1)
    if status >= 400:
        return ExecResult(pre + f"wget: server returned error: HTTP/1.1 {status} Not Found\n", 1)
    if spider:
        return ExecResult(pre + ("" if quiet else "remote file exists\n"), 0)
    if out_file == "-":
        return ExecResult(pre + body, 0)
    name = out_file or (path.rstrip("/").rsplit("/", 1)[-1].split("?")[0] or "index.html")
    if quiet:
        return ExecResult("", 0)
    return ExecResult(pre + f"saving to '{name}'\n{name:<20} 100% |********************************| {len(body):>5}  0:00:00 ETA\n'{name}' saved\n", 0)


def curl(view: ContainerView, argv: list[str], stdin: str | None = None) -> ExecResult:
    silent = show_err = head = verbose = fail_flag = False
    write_fmt: str | None = None
    to_null = False
    urls: list[str] = []
    i = 1
    takes = {"-o", "--output", "-m", "--max-time", "--connect-timeout", "-H", "--header", "-X", "--request", "-d", "--data", "-w", "--write-out", "-A", "--user-agent", "-u", "--user", "--retry"}
    while i < len(argv):
        a = argv[i]
        i += 1
        if a in takes:
            val = argv[i] if i < len(argv) else None
            i += 1
            if val is None:
                return ExecResult(f"curl: option {a}: requires parameter\ncurl: try 'curl --help' or 'curl --manual' for more information\n", 2)
            if a in ("-w", "--write-out"):
                write_fmt = val
            if a in ("-o", "--output"):
                to_null = True
            continue
        if a.startswith("--"):
            if a in ("--silent",):
                silent = True
            elif a in ("--show-error",):
                show_err = True
            elif a in ("--head",):
                head = True
            elif a in ("--verbose",):
                verbose = True
            elif a in ("--fail",):
                fail_flag = True
            elif a in ("--location", "--insecure", "--include", "--http1.1", "--compressed", "--no-progress-meter"):
                silent = silent or a == "--no-progress-meter"
            else:
                return ExecResult(f"curl: option {a}: is unknown\ncurl: try 'curl --help' or 'curl --manual' for more information\n", 2)
            continue
        if a.startswith("-") and len(a) > 1:
            for c in a[1:]:
                if c == "s":
                    silent = True
                elif c == "S":
                    show_err = True
                elif c == "I":
                    head = True
                elif c == "v":
                    verbose = True
                elif c == "f":
                    fail_flag = True
                elif c in "Lkig":
                    continue
                else:
                    return ExecResult(f"curl: option {a}: is unknown\ncurl: try 'curl --help' or 'curl --manual' for more information\n", 2)
            continue
        urls.append(a)
    if not urls:
        return ExecResult("curl: try 'curl --help' or 'curl --manual' for more information\n", 2)
    parsed = _parse_url(urls[0])
    if parsed is None:
        return ExecResult("" if silent and not show_err else "curl: (3) URL rejected: Malformed input to a URL function\n", 3)
    scheme, host, port, path = parsed
    quiet_err = silent and not show_err

    def err(code: int, msg: str) -> ExecResult:
        text = "" if quiet_err else f"curl: ({code}) {msg}\n"
        if write_fmt is not None:
            text = _curl_w(write_fmt, 0) + text
        return ExecResult(text, code)

    ip = resolve(view, host)
    if ip is None:
        return err(6, f"Could not resolve host: {host}")
    e = dial(view, host, ip, port)
    ms = 1 + stable_hash(host, port) % 4
    if e == "refused":
        return err(7, f"Failed to connect to {host} port {port} after {ms} ms: Couldn't connect to server")
    if e == "unreachable":
        return err(7, f"Failed to connect to {host} port {port} after {3000 + ms} ms: Couldn't connect to server")
    if e is not None:
        return err(28, f"Failed to connect to {host} port {port} after {2000 + ms} ms: Timeout was reached")
    status, body = http_body(host, port, path)
    if status == 0:
        return err(52, "Empty reply from server")
    if status == -1:
        return err(1, "Received HTTP/0.9 when not allowed")
    if fail_flag and status >= 400:
        return err(22, f"The requested URL returned error: {status}")
    reason = {200: "OK", 404: "Not Found", 301: "Moved Permanently"}.get(status, "OK")
    hdrs = f"HTTP/1.1 {status} {reason}\r\nContent-Type: {'text/html; charset=utf-8' if body.startswith('<') else 'application/json'}\r\nContent-Length: {len(body)}\r\n\r\n"
    out = ""
    if verbose:
        shown = "".join(f"< {ln}\n" for ln in hdrs.split("\r\n")[:-1])
        out += (
            f"*   Trying {ip}:{port}...\n* Connected to {host} ({ip}) port {port}\n> GET {path} HTTP/1.1\n"
            f"> Host: {host}{':' + str(port) if port != 80 else ''}\n> User-Agent: curl/8.5.0\n> Accept: */*\n>\n{shown}"
        )
    if head:
        out += hdrs
    elif not to_null:
        out += body
    if write_fmt is not None:
        out += _curl_w(write_fmt, status)
    return ExecResult(out, 0)


def _curl_w(fmt: str, status: int) -> str:
    return fmt.replace("%{http_code}", f"{status:03d}").replace("%{response_code}", f"{status:03d}").replace("\\n", "\n").replace("%{time_total}", "0.003412")


# --------------------------------------------------------------------------- sockets

def _listen_addrs(view: ContainerView, info: ImageInfo) -> list[tuple[str, str]]:
    """(address, program) for each listening socket; Go binaries bind ``:::port``."""
    if not view.process_running:
        return []
    prog = {"mongo": "mongod", "memcached": "memcached", "consul": "consul", "jaeger": "all-in-one-linu"}.get(info.family)
    if prog is None:
        from sre_env.sim.runtime.image_contents import process_cmdline

        cmd = process_cmdline(view.container, info)
        prog = (cmd[0].rsplit("/", 1)[-1] if cmd else "sh")[:15]
    out = []
    for p in sorted(set(int(x) for x in view.listening_ports)):
        if info.family == "mongo":
            out.append((f"0.0.0.0:{p}", prog))
        elif info.family == "memcached":
            out.append((f"0.0.0.0:{p}", prog))
            out.append((f":::{p}", prog))
        else:
            out.append((f":::{p}", prog))
    return out


def netstat(view: ContainerView, argv: list[str], stdin: str | None = None) -> ExecResult:
    info = view.image
    flags = "".join(a[1:] for a in argv[1:] if a.startswith("-") and not a.startswith("--"))
    bad = next((c for c in flags if c not in "tulnpaew"), None)
    if bad:
        return ExecResult(f"netstat: invalid option -- '{bad}'\nBusyBox v1.36.1 (2023-07-27 17:12:24 UTC) multi-call binary.\n\nUsage: netstat [-ral] [-tuwx] [-enWp]\n", 1)
    listening = "l" in flags or "a" in flags
    pids = "p" in flags
    if not listening:
        head = "Active Internet connections (w/o servers)\nProto Recv-Q Send-Q Local Address           Foreign Address         State       " + ("PID/Program name    " if pids else "") + "\n"
        return ExecResult(head, 0)
    head = "Active Internet connections (only servers)\n" if "l" in flags else "Active Internet connections (servers and established)\n"
    head += "Proto Recv-Q Send-Q Local Address           Foreign Address         State       " + ("PID/Program name    " if pids else "") + "\n"
    rows = []
    for addr, prog in _listen_addrs(view, info):
        foreign = ":::*" if addr.startswith(":::") else "0.0.0.0:*"
        rows.append(f"tcp        0      0 {addr:<23} {foreign:<23} LISTEN      " + (f"1/{prog}" if pids else ""))
    if "a" in flags:
        rows += netstat_rows(view.os_state)
    return ExecResult(head + "".join(r.rstrip() + "\n" for r in rows), 0)


def ss(view: ContainerView, argv: list[str], stdin: str | None = None) -> ExecResult:
    info = view.image
    rows = [("State", "Recv-Q", "Send-Q", "Local Address:Port", "Peer Address:Port", "Process")]
    for addr, prog in _listen_addrs(view, info):
        local = "*:" + addr.rsplit(":", 1)[1] if addr.startswith(":::") else addr
        rows.append(("LISTEN", "0", "4096", local, "*:*" if local.startswith("*") else "0.0.0.0:*", f'users:(("{prog}",pid=1,fd=3))' if any("p" in a for a in argv[1:] if a.startswith("-")) else ""))
    w = [max(len(r[k]) for r in rows) for k in range(5)]
    out = []
    for r in rows:
        out.append(f"{r[0]:<{w[0]}} {r[1]:<{w[1]}} {r[2]:<{w[2]}} {r[3]:>{w[3]}} {r[4]:>{w[4]}} {r[5]}".rstrip())
    return ExecResult("\n".join(out) + "\n", 0)
