"""The OpenTelemetry demo ("astronomy shop"), version 2.1.3, as data.

What is taken from the real application (``open-telemetry/opentelemetry-demo``,
its generated Kubernetes manifest and its services' sources):

* the components, their Deployment/Service/container names and the labels
  every object carries (``opentelemetry.io/name``, ``app.kubernetes.io/component``,
  ``app.kubernetes.io/name``; selectors on ``opentelemetry.io/name``; objects
  also carry ``app.kubernetes.io/version`` and ``app.kubernetes.io/part-of``);
* images ``ghcr.io/open-telemetry/demo:2.1.3-<service>``, ``ghcr.io/open-feature/flagd:v0.12.8``
  and ``valkey/valkey:8.1.3-alpine``; the ``busybox`` init containers that wait
  for kafka/valkey and the one that copies ``flagd-config`` into an emptyDir
  before flagd starts (so flagd reads the ConfigMap as it was at its start);
* ports: every gRPC/HTTP service on 8080 (Service port ``tcp-service``,
  container port ``service``), image-provider 8081, flagd 8013 (``rpc``) and
  8016 (``ofrep``), kafka 9092 (``plaintext``) and 9093 (``controller``),
  valkey-cart 6379, postgresql 5432, load-generator 8089;
* env: ``*_ADDR`` (``CART_ADDR=cart:8080``, ``EMAIL_ADDR=http://email:8080``,
  ``SHIPPING_ADDR=http://shipping:8080``, ``QUOTE_ADDR=http://quote:8080``,
  ``VALKEY_ADDR=valkey-cart:6379``, ``KAFKA_ADDR=kafka:9092``),
  ``FLAGD_HOST=flagd``/``FLAGD_PORT=8013``, ``DB_CONNECTION_STRING`` of
  accounting, ``POSTGRES_*`` of postgresql, ``LOCUST_*`` of the load generator,
  ``OTEL_SERVICE_NAME`` from the component label, the memory limits;
* the ``flagd-config`` ConfigMap (``demo.flagd.json``, every flag with its
  variants, all ``defaultVariant: off``) and ``product-catalog-products``;
* the locustfile's tasks and weights (index 1, browse_product 10,
  get_recommendations 3, get_ads 3, view_cart 3, add_to_cart 2, checkout 1,
  checkout_multi 1, flood_home 5 x the ``loadGeneratorFloodHomepage`` value),
  the frontend's API routes and the checkout's PlaceOrder call order.

Our modelling choices (not in the real app):

* The cart reaches Valkey with a password: valkey-cart runs with
  ``--requirepass $(VALKEY_PASSWORD)`` from Secret ``valkey-cart-server`` and
  the cart authenticates with ``VALKEY_PASSWORD`` from Secret
  ``valkey-cart-auth``; the real demo runs Valkey without auth.
* frontend-proxy's envoy configuration is mounted from ConfigMap
  ``frontend-proxy-config`` (``envoy.yaml``); the real image renders it from a
  template baked into the image.
* The product browser traffic that loads pictures through
  ``/images/products/*`` is a request type of its own (the demo's Playwright
  browser users do it).
* Kafka's log and committed offsets, and the accounting database, survive pod
  restarts (as they would on persistent volumes).
* Capacities and service times are plausible figures, not measurements.
"""

from __future__ import annotations

import json
from typing import Any

from sre_env.apps.base import AppSpec, Call, Component, Dependency, RequestType

__all__ = ["ASTRONOMY_SHOP", "NAMESPACE", "VERSION", "FLAGS", "PRODUCTS", "flagd_json", "FAILING_PRODUCT"]

NAMESPACE = "astronomy-shop"
VERSION = "2.1.3"
DEMO = "ghcr.io/open-telemetry/demo"
FLAGD_IMAGE = "ghcr.io/open-feature/flagd:v0.12.8"
VALKEY_IMAGE = "valkey/valkey:8.1.3-alpine"
BUSYBOX = "busybox:latest"

#: product ids of the catalog (products.json); GetProduct of FAILING_PRODUCT fails under productCatalogFailure
PRODUCTS: tuple[tuple[str, str, str], ...] = (
    ("OLJCESPC7Z", "National Park Foundation Explorascope", "NationalParkFoundationExplorascope.jpg"),
    ("66VCHSJNUP", "Starsense Explorer Refractor Telescope", "StarsenseExplorer.jpg"),
    ("1YMWWN1N4O", "Eclipsmart Travel Refractor Telescope", "EclipsmartTravelRefractorTelescope.jpg"),
    ("L9ECAV7KIM", "Lens Cleaning Kit", "LensCleaningKit.jpg"),
    ("2ZYFJ3GM2N", "Roof Binoculars", "RoofBinoculars.jpg"),
    ("0PUK6V6EV0", "Solar System Color Imager", "SolarSystemColorImager.jpg"),
    ("LS4PSXUNUM", "Red Flashlight", "RedFlashlight.jpg"),
    ("9SIQT8TOJO", "Optical Tube Assembly", "OpticalTubeAssembly.jpg"),
    ("6E92ZMYYFZ", "Solar Filter", "SolarFilter.jpg"),
    ("HQTGWGPNH4", "The Comet Book", "TheCometBook.jpg"),
)
FAILING_PRODUCT = "OLJCESPC7Z"

#: demo.flagd.json of 2.1.3: flag -> (description, variants, default variant)
FLAGS: dict[str, tuple[str, dict[str, Any], str]] = {
    "productCatalogFailure": ("Fail product catalog service on a specific product", {"on": True, "off": False}, "off"),
    "recommendationCacheFailure": ("Fail recommendation service cache", {"on": True, "off": False}, "off"),
    "adManualGc": ("Triggers full manual garbage collections in the ad service", {"on": True, "off": False}, "off"),
    "adHighCpu": ("Triggers high cpu load in the ad service", {"on": True, "off": False}, "off"),
    "adFailure": ("Fail ad service", {"on": True, "off": False}, "off"),
    "kafkaQueueProblems": ("Overloads Kafka queue while simultaneously introducing a consumer side delay leading to a lag spike", {"on": 100, "off": 0}, "off"),
    "cartFailure": ("Fail cart service", {"on": True, "off": False}, "off"),
    "paymentFailure": ("Fail payment service charge requests n%", {"100%": 1, "90%": 0.95, "75%": 0.75, "50%": 0.5, "25%": 0.25, "10%": 0.1, "off": 0}, "off"),
    "paymentUnreachable": ("Payment service is unavailable", {"on": True, "off": False}, "off"),
    "loadGeneratorFloodHomepage": ("Flood the frontend with a large amount of requests.", {"on": 100, "off": 0}, "off"),
    "imageSlowLoad": ("slow loading images in the frontend", {"10sec": 10000, "5sec": 5000, "off": 0}, "off"),
}


def flagd_json(defaults: dict[str, str] | None = None) -> str:
    """``demo.flagd.json`` as the demo ships it (2-space JSON), with some default variants changed."""
    flags = {}
    for name, (desc, variants, default) in FLAGS.items():
        flags[name] = {"description": desc, "state": "ENABLED", "variants": dict(variants), "defaultVariant": (defaults or {}).get(name, default)}
    return json.dumps({"$schema": "https://flagd.dev/schema/v0/flags.json", "flags": flags}, indent=2) + "\n"


def _labels(name: str) -> tuple[tuple[str, str], ...]:
    return (("opentelemetry.io/name", name), ("app.kubernetes.io/component", name), ("app.kubernetes.io/name", name))


_OTEL_ENV: tuple[tuple[str, str], ...] = (
    ("OTEL_COLLECTOR_NAME", "otel-collector"),
    ("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "cumulative"),
)
_FLAGD_ENV = (("FLAGD_HOST", "flagd"), ("FLAGD_PORT", "8013"))


def _grpc(name: str, env: str | None, port: int = 8080, *, protocol: str = "grpc", critical: bool = True) -> Dependency:
    return Dependency(name, port, address_env=env, protocol=protocol, critical=critical)


_FLAGD = Dependency("flagd", 8013, address_env=None, protocol="grpc", critical=False)


def _svc(
    name: str,
    *,
    env: tuple[tuple[str, str], ...] = (),
    deps: tuple[Dependency, ...] = (),
    memory_limit: str,
    memory_mib: float,
    capacity_rps: float,
    latency_ms: float,
    startup_s: float,
    log_format: str,
    port: int = 8080,
    port_env: str | None = None,
    required: tuple[str, ...] = (),
    role: str = "service",
    otlp: str = "4317",
    flagd: bool = True,
    image: str | None = None,
    container_ports: tuple[tuple[str, int, str], ...] | None = None,
    service_ports: tuple[tuple[str, int, int, str], ...] | None = None,
    command: tuple[str, ...] = (),
    args: tuple[str, ...] = (),
) -> Component:
    own = ((port_env, str(port)),) if port_env else ()
    full_env = (("OTEL_SERVICE_NAME", name),) + _OTEL_ENV + own + env + (_FLAGD_ENV if flagd else ()) + (
        ("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://$(OTEL_COLLECTOR_NAME):{otlp}"),
        ("OTEL_RESOURCE_ATTRIBUTES", f"service.name=$(OTEL_SERVICE_NAME),service.namespace=opentelemetry-demo,service.version={VERSION}"),
    )
    return Component(
        name=name,
        image=image or f"{DEMO}:{VERSION}-{name}",
        container=name,
        command=command,
        args=args,
        role=role,
        container_ports=container_ports if container_ports is not None else (("service", port, "TCP"),),
        service_ports=service_ports if service_ports is not None else (("tcp-service", port, port, "TCP"),),
        listen_port=port,
        env=full_env,
        required_env=required,
        dependencies=deps + ((_FLAGD,) if flagd else ()),
        labels=_labels(name),
        cpu_request="",
        cpu_limit="",
        memory_limit=memory_limit,
        memory_mib=memory_mib,
        capacity_rps=capacity_rps,
        latency_ms=latency_ms,
        startup_s=startup_s,
        log_format=log_format,
    )


ACCOUNTING = _svc(
    "accounting",
    env=(("KAFKA_ADDR", "kafka:9092"), ("DB_CONNECTION_STRING", "Host=postgresql;Username=otelu;Password=otelp;Database=otel"), ("OTEL_DOTNET_AUTO_TRACES_ENTITYFRAMEWORKCORE_INSTRUMENTATION_ENABLED", "false")),
    deps=(_grpc("kafka", "KAFKA_ADDR", 9092, protocol="kafka"), _grpc("postgresql", None, 5432, protocol="postgres")),
    memory_limit="120Mi", memory_mib=72.0, capacity_rps=400.0, latency_ms=3.0, startup_s=6.0, log_format="otel-dotnet",
    required=("KAFKA_ADDR",), otlp="4318", flagd=False, container_ports=(), service_ports=(), port=0,
)
AD = _svc(
    "ad",
    port_env="AD_PORT",
    env=(("OTEL_LOGS_EXPORTER", "otlp"),),
    memory_limit="300Mi", memory_mib=180.0, capacity_rps=900.0, latency_ms=2.5, startup_s=12.0, log_format="otel-java", otlp="4318",
)
CART = _svc(
    "cart",
    port_env="CART_PORT",
    env=(("ASPNETCORE_URLS", "http://*:$(CART_PORT)"), ("VALKEY_ADDR", "valkey-cart:6379")),
    deps=(_grpc("valkey-cart", "VALKEY_ADDR", 6379, protocol="redis"),),
    memory_limit="160Mi", memory_mib=95.0, capacity_rps=1500.0, latency_ms=1.5, startup_s=5.0, log_format="otel-dotnet",
    required=("VALKEY_ADDR",), otlp="4318",
)
CHECKOUT = _svc(
    "checkout",
    port_env="CHECKOUT_PORT",
    env=(
        ("CART_ADDR", "cart:8080"),
        ("CURRENCY_ADDR", "currency:8080"),
        ("EMAIL_ADDR", "http://email:8080"),
        ("PAYMENT_ADDR", "payment:8080"),
        ("PRODUCT_CATALOG_ADDR", "product-catalog:8080"),
        ("SHIPPING_ADDR", "http://shipping:8080"),
        ("KAFKA_ADDR", "kafka:9092"),
        ("GOMEMLIMIT", "16MiB"),
    ),
    deps=(
        _grpc("cart", "CART_ADDR"),
        _grpc("currency", "CURRENCY_ADDR"),
        _grpc("email", "EMAIL_ADDR", protocol="http", critical=False),
        _grpc("payment", "PAYMENT_ADDR"),
        _grpc("product-catalog", "PRODUCT_CATALOG_ADDR"),
        _grpc("shipping", "SHIPPING_ADDR", protocol="http"),
        _grpc("kafka", "KAFKA_ADDR", 9092, protocol="kafka", critical=False),
    ),
    memory_limit="20Mi", memory_mib=14.0, capacity_rps=800.0, latency_ms=2.0, startup_s=2.0, log_format="otel-go",
    required=("CART_ADDR", "CURRENCY_ADDR", "EMAIL_ADDR", "PAYMENT_ADDR", "PRODUCT_CATALOG_ADDR", "SHIPPING_ADDR"),
)
CURRENCY = _svc(
    "currency", port_env="CURRENCY_PORT", env=(("VERSION", VERSION),), flagd=False,
    memory_limit="20Mi", memory_mib=8.0, capacity_rps=5000.0, latency_ms=0.3, startup_s=1.0, log_format="otel-cpp",
)
EMAIL = _svc(
    "email", port_env="EMAIL_PORT", env=(("APP_ENV", "production"),), otlp="4318",
    memory_limit="100Mi", memory_mib=60.0, capacity_rps=600.0, latency_ms=4.0, startup_s=4.0, log_format="otel-ruby",
)
FLAGD = _svc(
    "flagd", image=FLAGD_IMAGE, flagd=False, port=8013, env=(("GOMEMLIMIT", "60MiB"),),
    command=("/flagd-build", "start", "--port", "8013", "--ofrep-port", "8016", "--uri", "file:./etc/flagd/demo.flagd.json"),
    container_ports=(("rpc", 8013, "TCP"), ("ofrep", 8016, "TCP")),
    service_ports=(("rpc", 8013, 8013, "TCP"), ("ofrep", 8016, 8016, "TCP")),
    memory_limit="75Mi", memory_mib=28.0, capacity_rps=20000.0, latency_ms=0.2, startup_s=1.5, log_format="flagd", role="infra",
)
FRAUD_DETECTION = _svc(
    "fraud-detection",
    env=(("KAFKA_ADDR", "kafka:9092"), ("OTEL_INSTRUMENTATION_KAFKA_EXPERIMENTAL_SPAN_ATTRIBUTES", "true"), ("OTEL_INSTRUMENTATION_MESSAGING_EXPERIMENTAL_RECEIVE_TELEMETRY_ENABLED", "true")),
    deps=(_grpc("kafka", "KAFKA_ADDR", 9092, protocol="kafka"),),
    memory_limit="300Mi", memory_mib=190.0, capacity_rps=400.0, latency_ms=3.0, startup_s=10.0, log_format="otel-kotlin",
    required=("KAFKA_ADDR",), otlp="4318", container_ports=(), service_ports=(), port=0,
)
FRONTEND = _svc(
    "frontend",
    port_env="FRONTEND_PORT",
    env=(
        ("PORT", "$(FRONTEND_PORT)"),
        ("FRONTEND_ADDR", ":8080"),
        ("AD_ADDR", "ad:8080"),
        ("CART_ADDR", "cart:8080"),
        ("CHECKOUT_ADDR", "checkout:8080"),
        ("CURRENCY_ADDR", "currency:8080"),
        ("PRODUCT_CATALOG_ADDR", "product-catalog:8080"),
        ("RECOMMENDATION_ADDR", "recommendation:8080"),
        ("SHIPPING_ADDR", "http://shipping:8080"),
        ("ENV_PLATFORM", "kubernetes"),
        ("OTEL_COLLECTOR_HOST", "$(OTEL_COLLECTOR_NAME)"),
        ("WEB_OTEL_SERVICE_NAME", "frontend-web"),
        ("PUBLIC_OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://localhost:8080/otlp-http/v1/traces"),
    ),
    deps=(
        _grpc("ad", "AD_ADDR"),
        _grpc("cart", "CART_ADDR"),
        _grpc("checkout", "CHECKOUT_ADDR"),
        _grpc("currency", "CURRENCY_ADDR"),
        _grpc("product-catalog", "PRODUCT_CATALOG_ADDR"),
        _grpc("recommendation", "RECOMMENDATION_ADDR"),
        _grpc("shipping", "SHIPPING_ADDR", protocol="http"),
    ),
    memory_limit="250Mi", memory_mib=140.0, capacity_rps=1200.0, latency_ms=6.0, startup_s=6.0, log_format="otel-node", role="frontend",
)
FRONTEND_PROXY = _svc(
    "frontend-proxy",
    port_env="ENVOY_PORT",
    env=(
        ("ENVOY_ADMIN_PORT", "10000"),
        ("FLAGD_UI_HOST", "flagd"),
        ("FLAGD_UI_PORT", "4000"),
        ("FRONTEND_HOST", "frontend"),
        ("FRONTEND_PORT", "8080"),
        ("GRAFANA_HOST", "grafana"),
        ("GRAFANA_PORT", "80"),
        ("IMAGE_PROVIDER_HOST", "image-provider"),
        ("IMAGE_PROVIDER_PORT", "8081"),
        ("JAEGER_HOST", "jaeger-query"),
        ("JAEGER_PORT", "16686"),
        ("LOCUST_WEB_HOST", "load-generator"),
        ("LOCUST_WEB_PORT", "8089"),
        ("OTEL_COLLECTOR_HOST", "$(OTEL_COLLECTOR_NAME)"),
        ("OTEL_COLLECTOR_PORT_GRPC", "4317"),
        ("OTEL_COLLECTOR_PORT_HTTP", "4318"),
    ),
    deps=(_grpc("frontend", "FRONTEND_HOST", protocol="http"), _grpc("image-provider", "IMAGE_PROVIDER_HOST", 8081, protocol="http")),
    memory_limit="65Mi", memory_mib=30.0, capacity_rps=6000.0, latency_ms=0.4, startup_s=1.5, log_format="envoy", role="frontend",
)
IMAGE_PROVIDER = _svc(
    "image-provider", port=8081, port_env="IMAGE_PROVIDER_PORT", flagd=False,
    env=(("OTEL_COLLECTOR_PORT_GRPC", "4317"), ("OTEL_COLLECTOR_HOST", "$(OTEL_COLLECTOR_NAME)")),
    memory_limit="50Mi", memory_mib=12.0, capacity_rps=5000.0, latency_ms=1.0, startup_s=1.0, log_format="nginx",
)
KAFKA = _svc(
    "kafka", port=9092, flagd=False, otlp="4318",
    env=(
        ("KAFKA_ADVERTISED_LISTENERS", "PLAINTEXT://kafka:9092"),
        ("KAFKA_HEAP_OPTS", "-Xmx400M -Xms400M"),
        ("KAFKA_LISTENERS", "PLAINTEXT://:9092,CONTROLLER://:9093"),
        ("KAFKA_CONTROLLER_LISTENER_NAMES", "CONTROLLER"),
        ("KAFKA_CONTROLLER_QUORUM_VOTERS", "1@kafka:9093"),
    ),
    container_ports=(("plaintext", 9092, "TCP"), ("controller", 9093, "TCP")),
    service_ports=(("plaintext", 9092, 9092, "TCP"), ("controller", 9093, 9093, "TCP")),
    memory_limit="600Mi", memory_mib=430.0, capacity_rps=20000.0, latency_ms=0.5, startup_s=12.0, log_format="kafka", role="infra",
)
LOAD_GENERATOR = _svc(
    "load-generator", port=8089, flagd=True, otlp="4317",
    env=(
        ("LOCUST_WEB_PORT", "8089"),
        ("LOCUST_USERS", "10"),
        ("LOCUST_SPAWN_RATE", "1"),
        ("LOCUST_HOST", "http://frontend-proxy:8080"),
        ("LOCUST_HEADLESS", "false"),
        ("LOCUST_AUTOSTART", "true"),
        ("LOCUST_BROWSER_TRAFFIC_ENABLED", "true"),
        ("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python"),
        ("FLAGD_OFREP_PORT", "8016"),
    ),
    memory_limit="1500Mi", memory_mib=620.0, capacity_rps=100.0, latency_ms=1.0, startup_s=8.0, log_format="locust", role="infra",
)
PAYMENT = _svc(
    "payment", port_env="PAYMENT_PORT",
    memory_limit="120Mi", memory_mib=70.0, capacity_rps=1500.0, latency_ms=1.5, startup_s=3.0, log_format="otel-node",
)
POSTGRESQL = _svc(
    "postgresql", port=5432, flagd=False, otlp="4318",
    env=(("POSTGRES_USER", "root"), ("POSTGRES_PASSWORD", "otel"), ("POSTGRES_DB", "otel")),
    memory_limit="100Mi", memory_mib=40.0, capacity_rps=4000.0, latency_ms=0.8, startup_s=4.0, log_format="postgres", role="database",
)
PRODUCT_CATALOG = _svc(
    "product-catalog", port_env="PRODUCT_CATALOG_PORT",
    env=(("PRODUCT_CATALOG_RELOAD_INTERVAL", "10"), ("GOMEMLIMIT", "16MiB")),
    memory_limit="20Mi", memory_mib=12.0, capacity_rps=5000.0, latency_ms=0.4, startup_s=1.5, log_format="otel-go",
)
QUOTE = _svc(
    "quote", port_env="QUOTE_PORT", flagd=False, otlp="4318",
    env=(("OTEL_PHP_AUTOLOAD_ENABLED", "true"), ("OTEL_PHP_INTERNAL_METRICS_ENABLED", "true")),
    memory_limit="40Mi", memory_mib=22.0, capacity_rps=1500.0, latency_ms=1.0, startup_s=2.0, log_format="otel-php",
)
RECOMMENDATION = _svc(
    "recommendation", port_env="RECOMMENDATION_PORT",
    env=(("PRODUCT_CATALOG_ADDR", "product-catalog:8080"), ("OTEL_PYTHON_LOG_CORRELATION", "true"), ("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")),
    deps=(_grpc("product-catalog", "PRODUCT_CATALOG_ADDR"),),
    memory_limit="500Mi", memory_mib=110.0, capacity_rps=1000.0, latency_ms=3.0, startup_s=4.0, log_format="otel-python",
)
SHIPPING = _svc(
    "shipping", port_env="SHIPPING_PORT", flagd=False,
    env=(("QUOTE_ADDR", "http://quote:8080"),),
    # request_quote() builds a new awc::Client for every quote: one connection per call
    deps=(Dependency("quote", 8080, address_env="QUOTE_ADDR", protocol="http", pooled=False),),
    memory_limit="20Mi", memory_mib=6.0, capacity_rps=3000.0, latency_ms=0.6, startup_s=1.0, log_format="otel-rust",
)
VALKEY_CART = _svc(
    "valkey-cart", image=VALKEY_IMAGE, port=6379, flagd=False, otlp="4318",
    env=(),
    command=(),
    args=(),
    container_ports=(("valkey-cart", 6379, "TCP"),),
    service_ports=(("valkey-cart", 6379, 6379, "TCP"),),
    memory_limit="20Mi", memory_mib=9.0, capacity_rps=40000.0, latency_ms=0.15, startup_s=0.5, log_format="valkey", role="cache",
)

COMPONENTS: tuple[Component, ...] = (
    ACCOUNTING, AD, CART, CHECKOUT, CURRENCY, EMAIL, FLAGD, FRAUD_DETECTION, FRONTEND, FRONTEND_PROXY,
    IMAGE_PROVIDER, KAFKA, LOAD_GENERATOR, PAYMENT, POSTGRESQL, PRODUCT_CATALOG, QUOTE, RECOMMENDATION,
    SHIPPING, VALKEY_CART,
)

# -------------------------------------------------------------------- workload (the locustfile)
_PX = "frontend-proxy"
_FE = Call(_PX, "frontend", 1.0, "HTTP GET")
_GET_PRODUCT = Call("frontend", "product-catalog", 1.0, "GetProduct")
_CONVERT = Call("frontend", "currency", 1.0, "Convert")
_ADD = (
    Call("frontend", "product-catalog", 1.0, "GetProduct"),
    Call("frontend", "cart", 1.0, "AddItem"),
    Call("cart", "valkey-cart", 2.0, "HSET"),
)
_PLACE_ORDER = (
    Call("frontend", "checkout", 1.0, "PlaceOrder"),
    Call("checkout", "cart", 1.0, "GetCart"),
    Call("cart", "valkey-cart", 1.0, "HGET"),
    Call("checkout", "product-catalog", 2.0, "GetProduct"),
    Call("checkout", "currency", 3.0, "Convert"),
    Call("checkout", "shipping", 1.0, "GetQuote"),
    Call("shipping", "quote", 1.0, "getquote"),
    Call("checkout", "payment", 1.0, "Charge"),
    Call("checkout", "shipping", 1.0, "ShipOrder"),
    Call("checkout", "cart", 1.0, "EmptyCart"),
    Call("checkout", "email", 1.0, "send_order_confirmation"),
    Call("checkout", "kafka", 1.0, "orders publish"),
)
# locust task weights (index 1, browse 10, recommendations 3, ads 3, cart 3, add 2, checkout 1+1)
# plus the browser users' picture loads; normalised to shares of the offered load
_W = {"index": 1, "browse_product": 10, "get_recommendations": 3, "get_ads": 3, "view_cart": 3, "add_to_cart": 2, "checkout": 2, "product_images": 4}
_TOTAL = float(sum(_W.values()))

REQUESTS: tuple[RequestType, ...] = (
    RequestType("index", "GET", "/", _W["index"] / _TOTAL, (_FE, Call("frontend", "product-catalog", 1.0, "ListProducts"), Call("frontend", "currency", 1.0, "GetSupportedCurrencies")), feature="home page"),
    RequestType("browse_product", "GET", "/api/products/{id}", _W["browse_product"] / _TOTAL, (_FE, _GET_PRODUCT, _CONVERT), feature="product pages"),
    RequestType(
        "get_recommendations", "GET", "/api/recommendations", _W["get_recommendations"] / _TOTAL,
        (_FE, Call("frontend", "recommendation", 1.0, "ListRecommendations"), Call("recommendation", "product-catalog", 1.0, "ListProducts"), Call("frontend", "product-catalog", 4.0, "GetProduct")),
        feature="product recommendations",
    ),
    RequestType("get_ads", "GET", "/api/data", _W["get_ads"] / _TOTAL, (_FE, Call("frontend", "ad", 1.0, "GetAds")), feature="ads"),
    RequestType("view_cart", "GET", "/api/cart", _W["view_cart"] / _TOTAL, (_FE, Call("frontend", "cart", 1.0, "GetCart"), Call("cart", "valkey-cart", 1.0, "HGET")), feature="shopping cart"),
    RequestType("add_to_cart", "POST", "/api/cart", _W["add_to_cart"] / _TOTAL, (_FE,) + _ADD, feature="adding items to the cart"),
    RequestType("checkout", "POST", "/api/checkout", _W["checkout"] / _TOTAL, (_FE,) + _ADD + _PLACE_ORDER, feature="checkout"),
    RequestType("product_images", "GET", "/images/products/{picture}", _W["product_images"] / _TOTAL, (Call(_PX, "image-provider", 1.0, "HTTP GET"),), feature="product images"),
    # flood_home: 5 of the locust task weight, each run sending loadGeneratorFloodHomepage x GET /
    RequestType("flood_home", "GET", "/", 0.0, (_FE, Call("frontend", "product-catalog", 1.0, "ListProducts"), Call("frontend", "currency", 1.0, "GetSupportedCurrencies")), feature="home page"),
)

#: span names of the demo's RPCs (oteldemo protos) and HTTP endpoints, for traces and request logs
_GRPC_SERVICES = {
    "ad": "AdService", "cart": "CartService", "checkout": "CheckoutService", "currency": "CurrencyService",
    "payment": "PaymentService", "product-catalog": "ProductCatalogService", "recommendation": "RecommendationService",
}
_HTTP_NAMES = {
    ("frontend", "HTTP GET"): "GET", ("image-provider", "HTTP GET"): "GET /products/{picture}",
    ("email", "send_order_confirmation"): "POST /send_order_confirmation", ("shipping", "GetQuote"): "POST /get-quote",
    ("shipping", "ShipOrder"): "POST /ship-order", ("quote", "getquote"): "POST /getquote",
}


def _span_names() -> tuple[tuple[tuple[str, str], str], ...]:
    names: dict[tuple[str, str], str] = {}
    for rt in REQUESTS:
        for call in rt.calls:
            svc = _GRPC_SERVICES.get(call.callee)
            if svc is not None:
                names[(call.callee, call.operation)] = f"oteldemo.{svc}/{call.operation}"
    names.update(_HTTP_NAMES)
    return tuple(names.items())

#: share of locust task picks that are flood_home (5 of 29 task weight units)
FLOOD_TASK_SHARE = 5.0 / 29.0


# -------------------------------------------------------------------- manifests in the demo's shape
_ENVOY_CONFIG = """static_resources:
  listeners:
    - address:
        socket_address:
          address: 0.0.0.0
          port_value: 8080
      filter_chains:
        - filters:
            - name: envoy.filters.network.http_connection_manager
              typed_config:
                "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
                codec_type: AUTO
                stat_prefix: ingress_http
                access_log:
                  - name: envoy.access_loggers.stdout
                    typed_config:
                      "@type": type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog
                route_config:
                  name: local_route
                  virtual_hosts:
                    - name: frontend
                      domains:
                        - "*"
                      routes:
                        - match: { prefix: "/loadgen" }
                          route: { cluster: loadgen, prefix_rewrite: "/" }
                        - match: { prefix: "/otlp-http/" }
                          route: { cluster: opentelemetry_collector_http, prefix_rewrite: "/" }
                        - match: { prefix: "/jaeger" }
                          route: { cluster: jaeger }
                        - match: { prefix: "/grafana" }
                          route: { cluster: grafana }
                        - match: { prefix: "/images/" }
                          route: { cluster: image-provider, prefix_rewrite: "/" }
                        - match: { prefix: "/flagservice/" }
                          route: { cluster: flagservice, prefix_rewrite: "/", timeout: 0s }
                        - match: { prefix: "/feature" }
                          route: { cluster: flagd-ui }
                        - match: { prefix: "/" }
                          route: { cluster: frontend }
                http_filters:
                  - name: envoy.filters.http.fault
                    typed_config:
                      "@type": type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault
                      max_active_faults: 100
                      delay:
                        header_delay: {}
                        percentage:
                          numerator: 100
                  - name: envoy.filters.http.router
                    typed_config:
                      "@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router
  clusters:
    - name: frontend
      type: STRICT_DNS
      lb_policy: ROUND_ROBIN
      load_assignment:
        cluster_name: frontend
        endpoints:
          - lb_endpoints:
              - endpoint:
                  address:
                    socket_address:
                      address: ${FRONTEND_HOST}
                      port_value: ${FRONTEND_PORT}
    - name: image-provider
      type: STRICT_DNS
      lb_policy: ROUND_ROBIN
      load_assignment:
        cluster_name: image-provider
        endpoints:
          - lb_endpoints:
              - endpoint:
                  address:
                    socket_address:
                      address: ${IMAGE_PROVIDER_HOST}
                      port_value: ${IMAGE_PROVIDER_PORT}
admin:
  address:
    socket_address:
      address: 0.0.0.0
      port_value: ${ENVOY_ADMIN_PORT}
"""

ENVOY_CONFIG = _ENVOY_CONFIG
VALKEY_PASSWORD = "c4rt-v4lkey-5e3b"


def _products_json() -> str:
    return json.dumps({"products": [{"id": pid, "name": name, "picture": pic} for pid, name, pic in PRODUCTS]}, indent=2) + "\n"


def _wait_for(host: str, port: int) -> dict[str, Any]:
    return {"name": f"wait-for-{host}", "image": BUSYBOX, "command": ["sh", "-c", f"until nc -z -v -w30 {host} {port}; do echo waiting for {host}; sleep 2; done;"]}


def _customize(app: AppSpec, objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Reshape the generic manifests into the demo's: labels, selectors, ConfigMaps, init containers."""
    out: list[dict[str, Any]] = []
    common = {"app.kubernetes.io/version": VERSION, "app.kubernetes.io/part-of": "opentelemetry-demo"}
    for obj in objs:
        kind = obj["kind"]
        if kind == "Namespace":
            out.append(obj)
            out.append({"kind": "ServiceAccount", "apiVersion": "v1", "metadata": {"name": "opentelemetry-demo", "namespace": app.namespace, "labels": {"opentelemetry.io/name": "opentelemetry-demo", "app.kubernetes.io/name": "opentelemetry-demo", **common}}})
            out.append({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "flagd-config", "namespace": app.namespace, "labels": dict(common)}, "data": {"demo.flagd.json": flagd_json()}})
            out.append({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "product-catalog-products", "namespace": app.namespace, "labels": dict(common)}, "data": {"products.json": _products_json()}})
            out.append({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "frontend-proxy-config", "namespace": app.namespace, "labels": dict(common)}, "data": {"envoy.yaml": ENVOY_CONFIG}})
            out.append({"kind": "Secret", "apiVersion": "v1", "type": "Opaque", "metadata": {"name": "valkey-cart-auth", "namespace": app.namespace, "labels": dict(common)}, "data": {"password": _b64(VALKEY_PASSWORD)}})
            out.append({"kind": "Secret", "apiVersion": "v1", "type": "Opaque", "metadata": {"name": "valkey-cart-server", "namespace": app.namespace, "labels": dict(common)}, "data": {"requirepass": _b64(VALKEY_PASSWORD)}})
            continue
        name = obj["metadata"]["name"]
        labels = {k: v for k, v in obj["metadata"].get("labels", {}).items() if k != "io.kompose.service"}
        obj["metadata"]["labels"] = {**labels, **common}
        obj["metadata"].pop("annotations", None)
        if kind == "Service":
            obj["spec"]["selector"] = {"opentelemetry.io/name": name}
            out.append(obj)
            continue
        spec = obj["spec"]
        spec["selector"] = {"matchLabels": {"opentelemetry.io/name": name}}
        tmpl = spec["template"]
        tmpl["metadata"] = {"labels": labels}
        pod = tmpl["spec"]
        pod["serviceAccountName"] = "opentelemetry-demo"
        ctr = pod["containers"][0]
        for e in ctr.get("env") or ():
            if e["name"] == "OTEL_SERVICE_NAME":
                e.pop("value", None)
                e["valueFrom"] = {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels['app.kubernetes.io/component']"}}
            if e["name"] == "OTEL_COLLECTOR_NAME":
                e["value"] = "otel-collector"
        if name in ("accounting", "checkout", "fraud-detection"):
            pod["initContainers"] = [_wait_for("kafka", 9092)]
        if name == "cart":
            pod["initContainers"] = [_wait_for("valkey-cart", 6379)]
            ctr["env"].append({"name": "VALKEY_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "valkey-cart-auth", "key": "password"}}})
        if name == "valkey-cart":
            ctr["env"] = [{"name": "VALKEY_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "valkey-cart-server", "key": "requirepass"}}}]
            ctr["command"] = ["valkey-server"]
            ctr["args"] = ["--requirepass", "$(VALKEY_PASSWORD)"]
            ctr["securityContext"] = {"runAsUser": 999, "runAsGroup": 1000, "runAsNonRoot": True}
        if name == "flagd":
            pod["initContainers"] = [{
                "name": "init-config", "image": BUSYBOX,
                "command": ["sh", "-c", "cp /config-ro/demo.flagd.json /config-rw/demo.flagd.json && cat /config-rw/demo.flagd.json"],
                "volumeMounts": [{"mountPath": "/config-ro", "name": "config-ro"}, {"mountPath": "/config-rw", "name": "config-rw"}],
            }]
            ctr["volumeMounts"] = [{"name": "config-rw", "mountPath": "/etc/flagd"}]
            pod["volumes"] = [{"name": "config-rw", "emptyDir": {}}, {"name": "config-ro", "configMap": {"name": "flagd-config"}}]
        if name == "product-catalog":
            ctr["volumeMounts"] = [{"name": "product-catalog-products", "mountPath": "/usr/src/app/products"}]
            pod["volumes"] = [{"name": "product-catalog-products", "configMap": {"name": "product-catalog-products"}}]
        if name == "frontend-proxy":
            ctr["volumeMounts"] = [{"name": "envoy-config", "mountPath": "/etc/envoy"}]
            pod["volumes"] = [{"name": "envoy-config", "configMap": {"name": "frontend-proxy-config"}}]
        out.append(obj)
    return out


def _b64(text: str) -> str:
    import base64

    return base64.b64encode(text.encode()).decode()


ASTRONOMY_SHOP = AppSpec(
    name="astronomy-shop",
    namespace=NAMESPACE,
    components=COMPONENTS,
    requests=REQUESTS,
    entrypoint="frontend-proxy",
    entry_port=8080,
    label_key="opentelemetry.io/name",
    rps=120.0,
    client_timeout_s=10.0,
    description=(
        "The OpenTelemetry demo web shop: an envoy edge proxy, a Next.js frontend and a dozen gRPC/HTTP "
        "services in eight languages (ad, cart, checkout, currency, email, payment, product-catalog, quote, "
        "recommendation, shipping), with Valkey for carts, Kafka for orders (accounting and fraud-detection "
        "consume them), PostgreSQL for accounting, flagd feature flags and a locust load generator."
    ),
    extra_images=(
        f"{DEMO}:2.0.2-payment",
        f"{DEMO}:2.0.2-ad",
        f"{DEMO}:{VERSION}-flagd-ui",
        "ghcr.io/open-feature/flagd:v0.11.1",
        "valkey/valkey:7.2-alpine",
        BUSYBOX,
        "postgres:17.6",
    ),
    customize=_customize,
    model="astronomy-shop",
    span_names=_span_names(),
)
