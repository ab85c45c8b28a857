"""Log formats of the astronomy shop's processes (listed in sre_env.sim.logs.render's dialect table).

Each service of the OpenTelemetry demo is written in a different language and
logs the way its runtime does: Go ``slog`` JSON (checkout, product-catalog),
.NET console (cart, accounting), log4j patterns (ad, fraud-detection), pino
JSON (payment), Next.js (frontend), Python logging (recommendation), Rust
``tracing`` JSON (shipping), plain text (currency, quote, email), envoy access
logs (frontend-proxy), nginx (image-provider), Kafka's log4j, Valkey, PostgreSQL,
flagd's zap JSON and locust. The messages are the services' own ("Payment
request failed. Invalid token.", "Error: Product Catalog Fail Feature Flag
Enabled", Npgsql's timeouts, protobuf's "invalid tag (zero)").

Pure and deterministic like the rest of :mod:`sre_env.sim.logs.render`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from sre_env.kube.timefmt import EPOCH, iso

__all__ = ["DIALECTS"]

_EPOCH_S = EPOCH.timestamp()


def _parts(t: float) -> tuple[str, int]:
    s = iso(t)
    return s, int((t % 1) * 1000)


def _iso_ms(t: float) -> str:
    s, ms = _parts(t)
    return f"{s[:19]}.{ms:03d}Z"


def _hms(t: float) -> str:
    s, ms = _parts(t)
    return f"{s[11:19]}.{ms:03d}"


def _space(t: float, sep: str = ",") -> str:
    s, ms = _parts(t)
    return f"{s[:10]} {s[11:19]}{sep}{ms:03d}"


def _trace(variant: int) -> tuple[str, str]:
    v = variant & 0x7FFFFFFF
    return f"{(v * 2654435761) & (2**64 - 1):016x}{(v * 40503) & (2**64 - 1):016x}", f"{(v * 97) & (2**64 - 1):016x}"


_PRODUCTS = ("OLJCESPC7Z", "66VCHSJNUP", "1YMWWN1N4O", "L9ECAV7KIM", "2ZYFJ3GM2N", "0PUK6V6EV0", "LS4PSXUNUM", "9SIQT8TOJO", "6E92ZMYYFZ", "HQTGWGPNH4")
_PICTURES = ("NationalParkFoundationExplorascope.jpg", "StarsenseExplorer.jpg", "EclipsmartTravelRefractorTelescope.jpg", "LensCleaningKit.jpg", "RoofBinoculars.jpg", "SolarSystemColorImager.jpg", "RedFlashlight.jpg", "OpticalTubeAssembly.jpg", "SolarFilter.jpg", "TheCometBook.jpg")


def _uuid(v: int) -> str:
    h = (v * 2654435761) & 0xFFFFFFFFFFFFFFFF
    return f"{h & 0xFFFFFFFF:08x}-{(h >> 32) & 0xFFFF:04x}-4{(h >> 36) & 0xFFF:03x}-a{(h >> 20) & 0xFFF:03x}-{(h * 31) & 0xFFFFFFFFFFFF:012x}"


# ------------------------------------------------------------------------ one formatter per runtime


def _slog(level: str, t: float, msg: str, **extra: object) -> str:
    return json.dumps({"time": _iso_ms(t), "level": level.upper(), "msg": msg, **extra}, separators=(",", ":"))


def _dotnet(level: str, category: str, t: float, msg: str) -> str:
    lvl = {"info": "info", "warn": "warn", "error": "fail", "fatal": "crit"}[level]
    return f"{lvl}: {category}[0] {msg}"


def _log4j(t: float, logger: str, msg: str, variant: int, thread: str = "main") -> str:
    tid, sid = _trace(variant)
    return f"{_hms(t)} - {thread} - {logger} - {msg} trace_id={tid} span_id={sid} trace_flags=01 "


def _pino(level: str, t: float, msg: str, service: str, variant: int, **extra: object) -> str:
    lv = {"info": 30, "warn": 40, "error": 50, "fatal": 60}[level]
    tid, sid = _trace(variant)
    return json.dumps({"level": lv, "time": int((t + _EPOCH_S) * 1000), "pid": 17, "hostname": f"{service}", "trace_id": tid, "span_id": sid, "trace_flags": "01", "msg": msg, **extra}, separators=(",", ":"))


def _pylog(level: str, t: float, msg: str, variant: int, where: str = "recommendation_server.py:52") -> str:
    tid, sid = _trace(variant)
    return f"{_space(t)} {level.upper()} [main] [{where}] [trace_id={tid} span_id={sid} resource.service.name=recommendation trace_sampled=True] - {msg}"


def _rust(level: str, t: float, msg: str, target: str = "shipping::shipping_service") -> str:
    return json.dumps({"timestamp": _iso_ms(t), "level": level.upper(), "fields": {"message": msg}, "target": target}, separators=(",", ":"))


def _zap(level: str, t: float, caller: str, msg: str, **extra: object) -> str:
    body = json.dumps({"level": level, "ts": round(t + _EPOCH_S, 3), "caller": caller, "msg": msg, **extra}, separators=(",", ":"))
    return body


# ------------------------------------------------------------------------ per dialect renderers


def _go(event: str, t: float, f: Mapping[str, object], v: int) -> str:
    svc = str(f.get("service", "checkout"))
    if event == "config":
        return _slog("info", t, "service config", config={"port": "8080"} if svc == "product-catalog" else {"cartSvcAddr": "cart:8080", "currencySvcAddr": "currency:8080", "paymentSvcAddr": "payment:8080", "shippingSvcAddr": "http://shipping:8080"})
    if event in ("listening", "ready"):
        return _slog("info", t, f"{svc.replace('-', '')} gRPC server started on port: 8080" if svc != "checkout" else "starting to listen on tcp: \"[::]:8080\"")
    if event == "missing_env":
        return f"panic: environment variable \"{f.get('var')}\" not set"
    if event == "dependency_error":
        target = str(f.get("target", ""))
        err = str(f.get("error", ""))
        if "Payment request failed" in err:
            return _slog("error", t, "failed to charge card: could not charge the card: rpc error: code = Unknown desc = " + err)
        if "redis" in err.lower() or "WRONGPASS" in err:
            return _slog("error", t, "failed to empty user cart during checkout: rpc error: code = FailedPrecondition desc = " + err)
        if "Product Catalog" in err:
            return _slog("error", t, f"failed to prepare order: failed to get product #\"{_PRODUCTS[0]}\": rpc error: code = Internal desc = {err}")
        http = {"shipping": ("failed to get shipping quote", "get-quote"), "email": ("failed to send order confirmation", "send_order_confirmation")}.get(target.split(":")[0])
        if http is not None:
            return _slog("error", t, f'{http[0]}: Post "http://{target}/{http[1]}": {err}')
        if err.startswith("dial tcp") or "refused" in err:
            return _slog("error", t, f"rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing: {err}\"", target=target)
        return _slog("error", t, f"rpc error: code = Unknown desc = {err}", target=target)
    if event == "request":
        if f.get("failed"):
            err = str(f.get("error") or "rpc error: code = Unavailable desc = upstream request timeout")
            return _slog("error", t, err if svc != "product-catalog" else "Product Catalog Fail Feature Flag Enabled", **({"product.id": _PRODUCTS[0]} if svc == "product-catalog" else {}))
        if svc == "checkout":
            return _slog("info", t, f"[PlaceOrder] user_id=\"{_uuid(v)}\" user_currency=\"USD\"")
        return _slog("info", t, "Product Found", **{"product.name": "Starsense Explorer Refractor Telescope", "product.id": _PRODUCTS[v % 10]})
    if event == "shutdown":
        return _slog("info", t, "shutting down server")
    return _slog("info", t, event.replace("_", " "))


def _go_startup(t: float, f: Mapping[str, object], v: int) -> list[str]:
    svc = str(f.get("service", "checkout"))
    if f.get("partial"):
        return []
    if svc == "product-catalog":
        return [_slog("info", t, "Loaded 10 products"), _slog("info", t + 0.01, "Product Catalog reload interval: 10")]
    return [_slog("info", t, "service config", config={"cartSvcAddr": "cart:8080", "currencySvcAddr": "currency:8080", "emailSvcAddr": "http://email:8080", "paymentSvcAddr": "payment:8080", "productCatalogSvcAddr": "product-catalog:8080", "shippingSvcAddr": "http://shipping:8080", "kafkaBrokerSvcAddr": "kafka:9092"})]


def _dotnet_r(event: str, t: float, f: Mapping[str, object], v: int) -> str:
    svc = str(f.get("service", "cart"))
    cat = "cart.cartstore.ValkeyCartStore" if svc == "cart" else "Accounting.Consumer"
    if event in ("listening", "ready"):
        return _dotnet("info", "Microsoft.Hosting.Lifetime", t, "Now listening on: http://[::]:8080" if svc == "cart" else "Application started. Press Ctrl+C to shut down.")
    if event == "config":
        return _dotnet("info", cat, t, "Connecting to Redis: valkey-cart:6379,abortConnect=False" if svc == "cart" else "Connecting to Kafka: kafka:9092")
    if event == "missing_env":
        return f"Unhandled exception. System.ArgumentNullException: Value cannot be null. (Parameter '{f.get('var')}')"
    if event == "poison_pill":
        return (f"Unhandled exception. Google.Protobuf.InvalidProtocolBufferException: Protocol message contained an invalid tag (zero). "
                f"at Google.Protobuf.ParsingPrimitives.ParseTag(ReadOnlySpan`1& buffer, ParserInternalState& state) "
                f"at Oteldemo.OrderResult.pb::Google.Protobuf.IBufferMessage.InternalMergeFrom(ParseContext& input) "
                f"at Accounting.Consumer.ProcessMessage(Message`2 message) in /src/Consumer.cs:line 78 "
                f"(topic {f.get('topic', 'orders')}, partition 0, offset {f.get('offset')})")
    if event == "db_error":
        return _dotnet("error", "Microsoft.EntityFrameworkCore.Database.Command", t, f"Failed executing DbCommand (30,012ms) [Parameters=[@p0='?'], CommandType='Text', CommandTimeout='30'] INSERT INTO \"order\" (order_id) VALUES (@p0); {f.get('error')}")
    if event == "dependency_error":
        err = str(f.get("error", ""))
        return _dotnet("error", cat, t, f"Can't access cart storage. {err}" if svc == "cart" else err)
    if event == "request":
        if f.get("failed"):
            err = str(f.get("error") or "Can't access cart storage. System.ApplicationException: Wasn't able to connect to redis")
            return _dotnet("error", "cart.services.CartService", t, err if err.startswith("Can't") else f"Can't access cart storage. {err}")
        if svc == "accounting":
            return _dotnet("info", cat, t, f"Order details: {{\"orderId\": \"{_uuid(v)}\"}}.")
        op = str(f.get("op", "GetCart"))
        return _dotnet("info", "cart.services.CartService", t, f"{op} called with userId={_uuid(v)}")
    return _dotnet("info", cat, t, event.replace("_", " "))


def _dotnet_startup(t: float, f: Mapping[str, object], v: int) -> list[str]:
    if f.get("partial"):
        return []
    svc = str(f.get("service", "cart"))
    if svc == "accounting":
        return []
    return []


def _java(event: str, t: float, f: Mapping[str, object], v: int) -> str:
    svc = str(f.get("service", "ad"))
    if svc == "fraud-detection":
        if event == "poison_pill":
            return (f"Exception in thread \"main\" com.google.protobuf.InvalidProtocolBufferException: Protocol message contained an invalid tag (zero). "
                    f"at com.google.protobuf.InvalidProtocolBufferException.invalidTag(InvalidProtocolBufferException.java:133) "
                    f"at oteldemo.Demo$OrderResult.parseFrom(Demo.java) at frauddetection.MainKt.main(main.kt:68) "
                    f"(record {f.get('topic', 'orders')}-0@{f.get('offset')})")
        if event in ("listening", "ready", "config"):
            return _log4j(t, "frauddetection", "Consuming from topic orders (group fraud-detection)" if event != "config" else "Connecting to kafka:9092", v)
        if event == "request":
            return _log4j(t, "frauddetection", f"Consumed record with orderId: {_uuid(v)}, and updated total count to: {1000 + v % 9000}", v)
        return _log4j(t, "frauddetection", str(f.get("error") or event.replace("_", " ")), v)
    if event in ("listening", "ready"):
        return _log4j(t, "oteldemo.AdService", "Ad service started, listening on 8080", v)
    if event == "config":
        return _log4j(t, "oteldemo.AdService", "Ad service starting.", v)
    if event == "request":
        if f.get("failed"):
            return _log4j(t, "oteldemo.AdService", "GetAds Failed with status Status{code=UNAVAILABLE, description=null, cause=null}", v, thread=f"grpc-default-executor-{v % 8}")
        return _log4j(t, "oteldemo.AdService", f"Targeted ad request received for [{('telescopes', 'binoculars', 'accessories', 'books')[v % 4]}]", v, thread=f"grpc-default-executor-{v % 8}")
    return _log4j(t, "oteldemo.AdService", str(f.get("error") or event.replace("_", " ")), v)


def _node(event: str, t: float, f: Mapping[str, object], v: int) -> str:
    svc = str(f.get("service", "payment"))
    if svc == "frontend":
        if event in ("listening", "ready"):
            return " \u2713 Ready in 1247ms"
        if event in ("request", "dependency_error"):
            err = str(f.get("error") or f.get("grpc_error") or "14 UNAVAILABLE: No connection established")
            return f"Error: 13 INTERNAL: {err}" if "Product Catalog" in err else f"Error: 2 UNKNOWN: {err}"
        return f"   - {event.replace('_', ' ')}"
    if event in ("listening", "ready"):
        return _pino("info", t, "payment gRPC server started on port 8080", svc, v)
    if event == "request":
        if f.get("failed"):
            return _pino("error", t, "payment request failed", svc, v, err=str(f.get("error") or "Payment request failed. Invalid token. app.loyalty.level=gold"))
        return _pino("info", t, "Transaction complete.", svc, v, transactionId=_uuid(v), cardType="visa", lastFourDigits="5678", amount={"units": {"low": 100 + v % 900, "high": 0, "unsigned": False}, "nanos": 0, "currencyCode": "USD"}, loyalty_level=("platinum", "gold", "silver", "bronze")[v % 4])
    return _pino("info", t, event.replace("_", " "), svc, v)


def _node_startup(t: float, f: Mapping[str, object], v: int) -> list[str]:
    if f.get("partial"):
        return []
    if str(f.get("service")) == "frontend":
        return ["   \u25b2 Next.js 15.2.4", "   - Local:        http://localhost:8080", "   - Network:      http://0.0.0.0:8080", "", " \u2713 Starting..."]
    return []


def _python(event: str, t: float, f: Mapping[str, object], v: int) -> str:
    svc = str(f.get("service", "recommendation"))
    if svc == "load-generator":
        return f"[{_space(t)}] {svc}/INFO/locust.main: {'Starting web interface at http://0.0.0.0:8089' if event in ('listening', 'ready') else event.replace('_', ' ')}"
    if event in ("listening", "ready"):
        return _pylog("info", t, "Recommendation service started, listening on port 8080", v, "recommendation_server.py:134")
    if event == "cache_miss":
        return _pylog("info", t, f"get_product_list: cache miss, cached products {f.get('size', 0)}", v, "recommendation_server.py:90")
    if event == "request":
        ids = [_PRODUCTS[(v + k) % 10] for k in range(1 + v % 3)]
        return _pylog("info", t, f"Receive ListRecommendations for product ids:{ids}", v)
    return _pylog("info", t, event.replace("_", " "), v)


def _rust_r(event: str, t: float, f: Mapping[str, object], v: int) -> str:
    if event in ("listening", "ready"):
        return _rust("info", t, "listening on 0.0.0.0:8080", "shipping")
    if event == "request":
        return _rust("info", t, f"Received quote: {8 + v % 40}.{v % 100:02d}") if v % 2 else _rust("info", t, f"Tracking ID Created: {_uuid(v)}")
    if event == "dependency_error":
        err = str(f.get("error"))
        os_err = {"cannot assign requested address": "Cannot assign requested address (os error 99)"}
        for cause, text in os_err.items():
            if err.startswith("dial tcp") and err.endswith(cause):
                # awc's connector reports the socket error the way Rust's io::Error prints it
                err = f"Failed to call quote service: Failed to connect to host: {text}"
        return _rust("error", t, f"Failed to fetch quote: {err}")
    return _rust("info", t, event.replace("_", " "))


def _cpp(event: str, t: float, f: Mapping[str, object], v: int) -> str:
    if event in ("listening", "ready"):
        return "Currency Server listening on port: 8080"
    if event == "request":
        return "Conversion request successful" if not f.get("failed") else "Conversion request failed"
    return event.replace("_", " ")


def _ruby(event: str, t: float, f: Mapping[str, object], v: int) -> str:
    s, ms = _parts(t)
    head = f"I, [{s[:19]}.{ms:03d}000 #1]  INFO -- :"
    if event in ("listening", "ready"):
        return "* Listening on http://0.0.0.0:8080"
    if event == "request":
        return f"{head} Order confirmation email sent to: {('alice', 'bob', 'carol', 'dave')[v % 4]}@example.com"
    return f"{head} {event.replace('_', ' ')}"


def _php(event: str, t: float, f: Mapping[str, object], v: int) -> str:
    s, _ = _parts(t)
    if event in ("listening", "ready"):
        return f"[{s[:19].replace('T', ' ')}] NOTICE: ready to handle connections"
    if event == "request":
        return json.dumps({"message": "Calculated quote", "context": {"total": round(8.5 + (v % 300) / 10, 2)}, "level": 200, "level_name": "INFO", "channel": "quote", "datetime": _iso_ms(t)}, separators=(",", ":"))
    return f"[{s[:19].replace('T', ' ')}] NOTICE: {event.replace('_', ' ')}"


_UA = "python-requests/2.32.3"


def _envoy(event: str, t: float, f: Mapping[str, object], v: int) -> str:
    if event == "envoy_config_error":
        return f"[{_space(t, '.')}][1][critical][main] [source/server/server.cc:414] error initializing configuration '/etc/envoy/envoy.yaml': {f.get('error')}"
    if event in ("listening", "ready"):
        return f"[{_space(t, '.')}][1][info][main] [source/server/server.cc:995] starting main dispatch loop"
    if event == "config":
        return f"[{_space(t, '.')}][1][info][main] [source/server/server.cc:428] loading 0 static secret(s)"
    if event == "dependency_error":
        return f"[{_space(t, '.')}][{20 + v % 4}][warning][upstream] [source/common/upstream/upstream_impl.cc:1492] upstream cluster {str(f.get('target', 'frontend')).split(':')[0]}: {f.get('error')}"
    path = str(f.get("path") or ("/api/products/" + _PRODUCTS[v % 10])).replace("{id}", _PRODUCTS[v % 10]).replace("{picture}", _PICTURES[v % 10])
    method = str(f.get("method") or "GET")
    failed = bool(f.get("failed")) or int(f.get("status", 200) or 200) >= 500
    status = int(f.get("status") or (500 if failed else 200))
    lat = int(float(f.get("latency_ms", 5.0) or 5.0))
    upstream = "image-provider" if path.startswith("/images") else "frontend"
    flags = "-" if status < 500 else ("UT" if lat >= 10000 else "-")
    return (f'[{_iso_ms(t)}] "{method} {path} HTTP/1.1" {status} {flags} via_upstream - "-" 0 {900 + v % 4000} {lat} {max(lat - 1, 0)} "-" "{_UA}" '
            f'"{_uuid(v)}" "frontend-proxy:8080" "10.244.{1 + v % 3}.{10 + v % 200}:{8081 if upstream == "image-provider" else 8080}" {upstream} - 10.244.{1 + v % 3}.{5 + v % 50}:8080 10.244.{1 + (v >> 3) % 3}.{20 + v % 90}:{40000 + v % 20000} - -')


def _envoy_startup(t: float, f: Mapping[str, object], v: int) -> list[str]:
    ts = _space(t, ".")
    return [
        f"[{ts}][1][info][main] [source/server/server.cc:430] initializing epoch 0 (base id=0, hot restart version=11.104)",
        f"[{ts}][1][info][main] [source/server/server.cc:432] statically linked extensions:",
        f"[{ts}][1][info][config] [source/server/configuration_impl.cc:168] loading tracing configuration",
        f"[{ts}][1][info][config] [source/server/configuration_impl.cc:124] loading 0 static secret(s)",
        f"[{ts}][1][info][config] [source/server/configuration_impl.cc:130] loading 8 cluster(s)",
        f"[{ts}][1][info][config] [source/server/configuration_impl.cc:134] loading 1 listener(s)",
    ]


def _nginx(event: str, t: float, f: Mapping[str, object], v: int) -> str:
    s, _ = _parts(t)
    months = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    stamp = f"{s[8:10]}/{months[int(s[5:7]) - 1]}/{s[:4]}:{s[11:19]} +0000"
    if event == "request":
        return f'10.244.{1 + v % 3}.{10 + v % 200} - - [{stamp}] "GET /products/{_PICTURES[v % 10]} HTTP/1.1" 200 {40000 + v % 90000} "-" "{_UA}"'
    if event in ("listening", "ready"):
        return f"{s[:10].replace('-', '/')} {s[11:19]} [notice] 1#1: start worker processes"
    return f"{s[:10].replace('-', '/')} {s[11:19]} [notice] 1#1: {event.replace('_', ' ')}"


def _kafka(event: str, t: float, f: Mapping[str, object], v: int) -> str:
    head = f"[{_space(t)}]"
    if event in ("listening", "ready"):
        return f"{head} INFO [KafkaRaftServer nodeId=1] Kafka Server started (kafka.server.KafkaRaftServer)"
    if event == "config":
        return f"{head} INFO KafkaConfig values: (kafka.server.KafkaConfig)"
    return f"{head} INFO {event.replace('_', ' ')} (kafka.server.KafkaServer)"


def _valkey(event: str, t: float, f: Mapping[str, object], v: int) -> str:
    s, ms = _parts(t)
    months = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    head = f"1:M {s[8:10]} {months[int(s[5:7]) - 1]} {s[:4]} {s[11:19]}.{ms:03d}"
    if event in ("listening", "ready"):
        return f"{head} * Ready to accept connections tcp"
    if event == "config":
        return f"1:C {head[4:]} * Configuration loaded"
    return f"{head} * {event.replace('_', ' ')}"


def _postgres(event: str, t: float, f: Mapping[str, object], v: int) -> str:
    s, ms = _parts(t)
    head = f"{s[:10]} {s[11:19]}.{ms:03d} UTC [1]"
    if event in ("listening", "ready"):
        return f"{head} LOG:  database system is ready to accept connections"
    if event == "config":
        return f'{head} LOG:  listening on IPv4 address "0.0.0.0", port 5432'
    return f"{head} LOG:  {event.replace('_', ' ')}"


def _postgres_startup(t: float, f: Mapping[str, object], v: int) -> list[str]:
    s, ms = _parts(t)
    head = f"{s[:10]} {s[11:19]}.{ms:03d} UTC [1]"
    return [
        "",
        "PostgreSQL Database directory appears to contain a database; Skipping initialization",
        "",
        f"{head} LOG:  starting PostgreSQL 17.6 (Debian 17.6-1.pgdg120+1) on x86_64-pc-linux-gnu, compiled by gcc (Debian 12.2.0-14) 12.2.0, 64-bit",
        f'{head} LOG:  listening on Unix socket "/var/run/postgresql/.s.PGSQL.5432"',
    ]


def _flagd(event: str, t: float, f: Mapping[str, object], v: int) -> str:
    if event == "flag_error":
        return _zap("error", t, "file/filepath_sync.go:97", "error fetching file: " + str(f.get("error")), component="sync", sync="filepath")
    if event == "flags_loaded":
        return _zap("info", t, "store/flags.go:196", "configuration change (write) for flagKey", component="store", count=f.get("count", 0))
    if event in ("listening", "ready"):
        return _zap("info", t, "flag-sync/sync_service.go:54", "starting flag sync service on port 8015", component="FlagSyncService")
    if event == "request":
        return _zap("debug", t, "service/flag_evaluation.go:96", "flag evaluation", component="service")
    return _zap("info", t, "cmd/start.go:175", event.replace("_", " "))


def _flagd_startup(t: float, f: Mapping[str, object], v: int) -> list[str]:
    return [
        _zap("info", t, "cmd/start.go:118", "flagd version: v0.12.8 (ab4b07ef), built at: 2025-07-21T13:06:40Z", component="start"),
        _zap("info", t + 0.01, "flag-sync/sync_service.go:54", "starting flag sync service on port 8015", component="FlagSyncService"),
        _zap("info", t + 0.012, "file/filepath_sync.go:37", "Starting filepath sync notifier", component="sync", sync="filepath"),
        _zap("info", t + 0.014, "flag-evaluation/connect_service.go:249", "metrics and probes listening at 8014", component="service"),
    ]


def _locust(event: str, t: float, f: Mapping[str, object], v: int) -> str:
    head = f"[{_space(t)}] load-generator/INFO/locust.main:"
    if event in ("listening", "ready"):
        return f"{head} Starting web interface at http://0.0.0.0:8089, press enter to open your default browser."
    return f"{head} {event.replace('_', ' ')}"


#: (dialect, service or "*", event) -> what the process prints when it starts listening / is ready
_LIFECYCLE: dict[tuple[str, str, str], str] = {
    ("otel-go", "checkout", "listening"): 'starting to listen on tcp: "[::]:8080"',
    ("otel-go", "checkout", "ready"): "checkout gRPC server started",
    ("otel-go", "product-catalog", "listening"): "Product Catalog gRPC server started on port: 8080",
    ("otel-go", "product-catalog", "ready"): "Product Catalog reload interval: 10",
    ("otel-dotnet", "cart", "listening"): "Now listening on: http://[::]:8080",
    ("otel-dotnet", "accounting", "listening"): "Hosting environment: Production",
    ("otel-dotnet", "*", "ready"): "Application started. Press Ctrl+C to shut down.",
    ("otel-java", "*", "listening"): "Ad service started, listening on 8080",
    ("otel-java", "*", "ready"): "Ad service ready",
    ("otel-kotlin", "*", "listening"): "Subscribed to topic orders as group fraud-detection",
    ("otel-kotlin", "*", "ready"): "Fraud detection consumer started",
    ("otel-node", "payment", "listening"): "payment gRPC server started on port 8080",
    ("otel-node", "payment", "ready"): "OpenFeature flagd provider ready",
    ("otel-node", "frontend", "listening"): "Ready in 1247ms",
    ("otel-node", "frontend", "ready"): "Environments: .env",
    ("otel-python", "*", "listening"): "Recommendation service started, listening on port 8080",
    ("otel-python", "*", "ready"): "OpenFeature flagd provider ready",
    ("otel-rust", "*", "listening"): "listening on 0.0.0.0:8080",
    ("otel-rust", "*", "ready"): "shipping service started",
    ("otel-cpp", "*", "listening"): "Currency Server listening on port: 8080",
    ("otel-cpp", "*", "ready"): "Currency service ready",
    ("otel-ruby", "*", "listening"): "* Listening on http://0.0.0.0:8080",
    ("otel-ruby", "*", "ready"): "Use Ctrl-C to stop",
    ("otel-php", "*", "listening"): "NOTICE: fpm is running, pid 1",
    ("otel-php", "*", "ready"): "NOTICE: ready to handle connections",
    ("envoy", "*", "listening"): "all clusters initialized. initializing init manager",
    ("envoy", "*", "ready"): "starting main dispatch loop",
    ("nginx", "*", "listening"): 'using the "epoll" event method',
    ("nginx", "*", "ready"): "start worker processes",
    ("kafka", "*", "listening"): "[SocketServer listenerType=BROKER, nodeId=1] Enabling request processing.",
    ("kafka", "*", "ready"): "[KafkaRaftServer nodeId=1] Kafka Server started",
    ("valkey", "*", "listening"): "Server initialized",
    ("valkey", "*", "ready"): "Ready to accept connections tcp",
    ("postgres", "*", "listening"): 'listening on IPv4 address "0.0.0.0", port 5432',
    ("postgres", "*", "ready"): "database system is ready to accept connections",
    ("flagd", "*", "listening"): "Flag IResolver listening at [::]:8013",
    ("flagd", "*", "ready"): "ofrep service listening at 8016",
    ("locust", "*", "listening"): "Starting web interface at http://0.0.0.0:8089, press enter to open your default browser.",
    ("locust", "*", "ready"): "Ramping to 10 users at a rate of 1.00 per second",
}


_LIFECYCLE.update({
    ("otel-go", "checkout", "config"): "Initializing OpenFeature flagd provider at flagd:8013",
    ("otel-go", "product-catalog", "config"): "Loaded 10 products",
    ("otel-dotnet", "cart", "config"): "Connecting to Redis: valkey-cart:6379,abortConnect=False",
    ("otel-dotnet", "accounting", "config"): "Connecting to Kafka: kafka:9092",
    ("otel-java", "*", "config"): "Ad service starting.",
    ("otel-kotlin", "*", "config"): "Connecting to kafka:9092",
    ("otel-node", "payment", "config"): "Initializing OpenFeature flagd provider",
    ("otel-node", "frontend", "config"): "Next.js 15.2.4",
    ("otel-python", "*", "config"): "Initializing the Recommendation service",
    ("otel-rust", "*", "config"): "Starting shipping service",
    ("otel-cpp", "*", "config"): "Starting currency service",
    ("otel-ruby", "*", "config"): "Puma starting in single mode...",
    ("otel-php", "*", "config"): "NOTICE: fpm is running, pid 1",
    ("envoy", "*", "config"): "loading 8 cluster(s)",
    ("nginx", "*", "config"): "nginx/1.27.4",
    ("kafka", "*", "config"): "KafkaConfig values: (kafka.server.KafkaConfig)",
    ("valkey", "*", "config"): "Configuration loaded",
    ("postgres", "*", "config"): "database system was shut down at 2026-03-02 08:58:41 UTC",
    ("flagd", "*", "config"): "Using filepath sync provider for file:./etc/flagd/demo.flagd.json",
    ("locust", "*", "config"): "Starting Locust 2.37.10",
})
_LIFECYCLE[("otel-php", "*", "listening")] = "NOTICE: Using pool www"


def _lifecycle(name: str, render, event: str, t: float, f: Mapping[str, object], v: int) -> str:  # noqa: ANN001
    svc = str(f.get("service", ""))
    text = _LIFECYCLE.get((name, svc, event)) or _LIFECYCLE.get((name, "*", event))
    if text is None:
        return render(event, t, f, v)
    if name in ("envoy",):
        where = {"ready": "[main] [source/server/server.cc:995]", "listening": "[main] [source/server/server.cc:917]"}.get(event, "[config] [source/server/configuration_impl.cc:130]")
        return f"[{_space(t, '.')}][1][info]{where} {text}"
    if name == "valkey":
        line = _valkey("note", t, f, v).replace("* note", "* " + text)
        return line.replace("1:M ", "1:C ", 1) if event == "config" else line
    if name == "postgres":
        return _postgres("note", t, f, v).replace("LOG:  note", "LOG:  " + text)
    if name == "kafka":
        if event == "config":
            return f"[{_space(t)}] INFO {text}"
        return f"[{_space(t)}] INFO {text} (kafka.server.KafkaRaftServer)" if "Kafka Server" in text else f"[{_space(t)}] INFO {text} (kafka.network.SocketServer)"
    if name == "nginx":
        return _nginx("note", t, f, v).replace("1#1: note", "1#1: " + text)
    if name == "flagd":
        return _zap("info", t, {"listening": "flag-evaluation/connect_service.go:229", "ready": "ofrep/ofrep_service.go:57"}.get(event, "cmd/start.go:130"), text, component="service" if event != "config" else "start")
    if name == "locust":
        return f"[{_space(t)}] load-generator/INFO/locust.{'runners' if event == 'ready' else 'main'}: {text}"
    if name in ("otel-cpp", "otel-ruby", "otel-php"):
        if name == "otel-php":
            s, _ = _parts(t)
            return f"[{s[8:10]}-{('Jan','Feb','Mar','Apr','May','Jun','Jul','Aug','Sep','Oct','Nov','Dec')[int(s[5:7]) - 1]}-{s[:4]} {s[11:19]}] {text}"
        return text
    if name == "otel-node" and svc == "frontend":
        return {"listening": " \u2713 ", "config": "   \u25b2 "}.get(event, "   - ") + text
    if name == "otel-node":
        return _pino("info", t, text, svc or "payment", v)
    if name in ("otel-java", "otel-kotlin"):
        return _log4j(t, "frauddetection" if name == "otel-kotlin" else "oteldemo.AdService", text, v)
    if name == "otel-python":
        return _pylog("info", t, text, v, "recommendation_server.py:134")
    if name == "otel-rust":
        return _rust("info", t, text, "shipping")
    if name == "otel-dotnet":
        category = ("cart.cartstore.ValkeyCartStore" if svc == "cart" else "Accounting.Consumer") if event == "config" else "Microsoft.Hosting.Lifetime"
        return _dotnet("info", category, t, text)
    return _slog("info", t, text)


def _raw(render, name: str = ""):  # noqa: ANN001, ANN202 - wraps a renderer
    def inner(event: str, t: float, f: Mapping[str, object], v: int) -> str:
        if event in ("config", "listening", "ready"):
            return _lifecycle(name, render, event, t, f, v)
        if event == "raw":
            return str(f.get("line", ""))
        if event == "startup":
            return render("config", t, f, v)
        if event == "fatal_assertion":
            return str(f.get("error", "fatal"))
        return render(event, t, f, v)

    return inner


#: each service's renderer and start-up lines, as its runtime writes them
_FORMATS = {
    "otel-go": (_go, _go_startup),
    "otel-dotnet": (_dotnet_r, _dotnet_startup),
    "otel-java": (_java, None),
    "otel-kotlin": (_java, None),
    "otel-node": (_node, _node_startup),
    "otel-python": (_python, None),
    "otel-rust": (_rust_r, None),
    "otel-cpp": (_cpp, None),
    "otel-ruby": (_ruby, lambda t, f, v: ["* Puma version: 6.6.0 (\"Return to Forever\")", "*  Min threads: 0", "*  Max threads: 5", "*  Environment: production"]),
    "otel-php": (_php, None),
    "envoy": (_envoy, _envoy_startup),
    "nginx": (_nginx, None),
    "kafka": (_kafka, None),
    "valkey": (_valkey, lambda t, f, v: [f"1:C {_valkey('note', t, f, v)[4:].replace('* note', '# oO0OoO0OoO0Oo Valkey is starting oO0OoO0OoO0Oo')}"]),
    "postgres": (_postgres, _postgres_startup),
    "flagd": (_flagd, _flagd_startup),
    "locust": (_locust, None),
}

def _none(t: float, f: Mapping[str, object], v: int) -> list[str]:
    return []


#: dialect -> (render, start-up lines), with the signatures of sre_env.sim.logs.render's
DIALECTS = {name: (_raw(fn, name), startup or _none) for name, (fn, startup) in _FORMATS.items()}
