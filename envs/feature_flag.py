"""FeatureFlag: a flagd feature flag of the astronomy shop was switched on by a config push.

The flag file lives in ConfigMap ``flagd-config``; flagd copies it at start (an
init container), so the push came with a flagd restart. Each flag changes what
a service does in the model (payment rejects charges, the ad service burns CPU
or pauses for GC, the cart cannot empty carts, one product fails to load,
images load slowly, the orders queue floods, the recommendation cache leaks,
the load generator floods the home page). Restarting or scaling the service
that shows the symptom changes nothing; the fix is to set the flag back to
``off`` in the ConfigMap and restart flagd so it serves the file again.
One registered id per flag (``FeatureFlag-PaymentFailure-v0`` ...); the seed
draws the variant where a flag has several (``50%`` ... ``100%``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from sre_env.apps.astronomy_shop import ASTRONOMY_SHOP, FLAGS, flagd_json
from sre_env.faults.astronomy import SetFeatureFlag, set_flag_json
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.runtime.flagd import truthy

from .base import RootCause, SimScenario
from .briefs import affected_requests, impact, user_report

if TYPE_CHECKING:
    from sre_env.sim.model import ModelBackend

__all__ = ["FeatureFlag", "FLAG_SCENARIOS"]

_MECHANISM = Mechanism(
    "feature_flag_enabled",
    "application",
    "a feature flag (flagd) switched on a failure mode",
    (
        r"\bfeature[ -]?flags?\b",
        r"\bflagd\b",
        r"\bflagd-config\b",
        r"\bflag\b[^.;\n]{0,40}\b(?:on|enabled|turned on|switched on|flipped|set)\b",
        r"\b(?:enabled|turned on|switched on|flipped)\b[^.;\n]{0,40}\bflag\b",
        r"\bdefaultVariant\b",
        r"\b{flag}\b",
    ),
    detail_keys=("flag", "variant"),
)


def _yaml_block(text: str, indent: int) -> str:
    pad = " " * indent
    return "".join(pad + line + "\n" if line else "\n" for line in text.splitlines())


class FeatureFlag(SimScenario):
    """Base of the per-flag scenarios: ``flag`` names the flag, ``variants`` the seed's choices."""

    family = "FeatureFlag"
    app = ASTRONOMY_SHOP
    layer = "application"
    difficulty = "medium"
    mechanism = _MECHANISM
    develop_s = 180.0
    flag: ClassVar[str] = "paymentFailure"
    variants: ClassVar[tuple[str, ...]] = ("on",)
    #: the component whose behaviour the flag changes (what users' reports trace back to)
    target: ClassVar[str] = "payment"
    #: what the flag makes the target do, for the ground truth
    effect: ClassVar[str] = ""
    #: the service an engineer is tempted to restart or scale
    symptom_deployment: ClassVar[str] = "payment"
    intermittent: ClassVar[bool] = False
    summary = "Part of the astronomy shop misbehaves although nothing was deployed to it."
    description = (
        "Shortly after a routine configuration push, one part of the astronomy shop started failing or slowing down "
        "for a share of users. The service that shows the errors was not redeployed and its pods look healthy."
    )

    def extra_components(self) -> tuple[str, ...]:
        return ("flagd-config",)

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        variant = str(rng.choice(self.variants))
        value = FLAGS[self.flag][1][variant]
        return {"flag": self.flag, "variant": variant, "value": value}

    def inject(self, backend: "ModelBackend") -> None:
        SetFeatureFlag(self.namespace, self.flag, self.variant["variant"]).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component="configmap/flagd-config",
            namespace=self.namespace,
            layer="application",
            mechanism="feature flag switched on in flagd",
            summary=(
                f"The feature flag {self.flag} was switched on (defaultVariant \"{v['variant']}\") in ConfigMap flagd-config and flagd "
                f"was restarted with it, so flagd serves {self.flag}={json.dumps(v['value'])}: {self.effect} "
                + impact(self.app, self.target)
            ),
            details={"flag": self.flag, "variant": v["variant"], "value": v["value"], "configmap": "flagd-config"},
            # flagd serves the flag: it carries the cause without being broken
            affected=(f"deployment/{self.target}", "deployment/flagd"),
        )

    def brief(self) -> str:
        return user_report(self.app, self.target, intermittent=self.intermittent)

    def affected_features(self) -> list[str]:
        return affected_requests(self.app, self.target)

    def _fixed_configmap(self) -> str:
        text = set_flag_json(flagd_json(), self.flag, "off")
        return (
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flagd-config\n  labels:\n"
            "    app.kubernetes.io/version: 2.1.3\n    app.kubernetes.io/part-of: opentelemetry-demo\n"
            "data:\n  demo.flagd.json: |\n" + _yaml_block(text, 4)
        )

    def reference_solution(self) -> list[str]:
        ns = self.namespace
        return [
            f"kubectl get pods -n {ns}",
            f"kubectl logs deployment/{self.symptom_deployment} -n {ns} --tail=20",
            f"kubectl get configmap flagd-config -n {ns} -o yaml",
            f"kubectl apply -n {ns} -f - <<'EOF'\n{self._fixed_configmap()}EOF",
            f"kubectl rollout restart deployment/flagd -n {ns}",
            "sleep 20",
            f"kubectl get pods -n {ns} -l opentelemetry.io/name=flagd",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        ns = self.namespace
        d = self.symptom_deployment
        return {
            "restart_symptomatic_service": [f"kubectl rollout restart deployment/{d} -n {ns}"],
            "scale_up_symptomatic_service": [f"kubectl scale deployment/{d} -n {ns} --replicas=3"],
            "restart_flagd_only": [f"kubectl rollout restart deployment/flagd -n {ns}"],
            "edit_configmap_without_restart": [f"kubectl apply -n {ns} -f - <<'EOF'\n{self._fixed_configmap()}EOF"],
            "scale_flagd_to_zero": [f"kubectl scale deployment/flagd -n {ns} --replicas=0"],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        model = backend.model.app_model(self.app.name)
        value = model.flags.value(self.flag)
        ok = not truthy(value)
        served = "no flagd is serving flags" if not model.flags.values else f"flagd serves {self.flag}={json.dumps(value)}"
        return [Check("flag_off", ok, served)]

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("ConfigMap", self.namespace, "flagd-config", "modified")]


def _flag_class(name: str, flag: str, variants: tuple[str, ...], target: str, effect: str, symptom: str, *, intermittent: bool = False, difficulty: str = "medium", summary: str, description: str) -> type[FeatureFlag]:
    attrs = {
        "flag": flag,
        "variants": variants,
        "target": target,
        "effect": effect,
        "symptom_deployment": symptom,
        "intermittent": intermittent,
        "difficulty": difficulty,
        "summary": summary,
        "description": description,
        "__module__": __name__,
        "__qualname__": name,
    }
    return type(name, (FeatureFlag,), attrs)


#: scenario name -> class, one per flag whose incident differs
FLAG_SCENARIOS: dict[str, type[FeatureFlag]] = {
    "FeatureFlag-PaymentFailure": _flag_class(
        "FeatureFlagPaymentFailure", "paymentFailure", ("50%", "75%", "90%", "100%"), "payment",
        "the payment service rejects that share of Charge calls with \"Payment request failed. Invalid token.\", so checkouts fail.",
        "payment", intermittent=True, difficulty="easy",
        summary="Checkouts in the astronomy shop fail for many customers.",
        description="Customers of the astronomy shop report that placing an order fails with an error page more often than not; browsing and the cart work. The checkout and payment pods are all Running and nothing was deployed to them.",
    ),
    "FeatureFlag-PaymentUnreachable": _flag_class(
        "FeatureFlagPaymentUnreachable", "paymentUnreachable", ("on",), "checkout",
        "checkout dials a payment address that does not resolve (badAddress), so every order fails.",
        "payment", difficulty="medium",
        summary="No order can be placed in the astronomy shop.",
        description="Every attempt to place an order in the astronomy shop fails; browsing, recommendations and the cart still work. The payment service looks idle and healthy.",
    ),
    "FeatureFlag-AdFailure": _flag_class(
        "FeatureFlagAdFailure", "adFailure", ("on",), "ad",
        "the ad service fails one GetAds request in ten with UNAVAILABLE.",
        "ad", intermittent=True, difficulty="medium",
        summary="Ads in the astronomy shop intermittently fail to load.",
        description="Marketing reports that the ad banner of the astronomy shop is sometimes missing and the browser console shows failed requests for ads; the rest of the shop works. The ad pods have not restarted.",
    ),
    "FeatureFlag-AdHighCpu": _flag_class(
        "FeatureFlagAdHighCpu", "adHighCpu", ("on",), "ad",
        "every GetAds call burns CPU in the ad service, so its capacity collapses and ad requests queue and slow down.",
        "ad", difficulty="medium",
        summary="Ads in the astronomy shop have become very slow.",
        description="Pages of the astronomy shop that show ads load slowly and ad requests time out under normal traffic. Nothing was deployed to the ad service and its pods are Running.",
    ),
    "FeatureFlag-AdManualGc": _flag_class(
        "FeatureFlagAdManualGc", "adManualGc", ("on",), "ad",
        "the ad service triggers full manual garbage collections on every request, pausing for hundreds of milliseconds.",
        "ad", difficulty="hard",
        summary="Ad requests in the astronomy shop show long pauses.",
        description="Ad requests of the astronomy shop have become slow with long pauses; the ad pods are Running with normal memory and no restarts. Nobody changed the ad service.",
    ),
    "FeatureFlag-CartFailure": _flag_class(
        "FeatureFlagCartFailure", "cartFailure", ("on",), "cart",
        "the cart service sends EmptyCart to a bad cache host, so every order fails after payment when the cart is emptied.",
        "cart", difficulty="medium",
        summary="Orders in the astronomy shop fail at the last step.",
        description="Customers of the astronomy shop can fill their carts, but placing the order fails every time. Viewing and adding to the cart works, and the cache and cart pods are healthy.",
    ),
    "FeatureFlag-ProductCatalogFailure": _flag_class(
        "FeatureFlagProductCatalogFailure", "productCatalogFailure", ("on",), "product-catalog",
        "product-catalog fails GetProduct for product OLJCESPC7Z, so its pages, recommendations that include it and orders with it fail.",
        "product-catalog", intermittent=True, difficulty="medium",
        summary="Some product pages of the astronomy shop fail to load.",
        description="Some product pages and recommendation panels of the astronomy shop fail with errors while others load fine, and a share of orders fails. The catalogue service was not redeployed.",
    ),
    "FeatureFlag-ImageSlowLoad": _flag_class(
        "FeatureFlagImageSlowLoad", "imageSlowLoad", ("5sec", "10sec"), "image-provider",
        "the edge proxy delays every product image request by that many milliseconds.",
        "image-provider", difficulty="medium",
        summary="Product images in the astronomy shop take seconds to load.",
        description="Customers complain that product pictures of the astronomy shop take many seconds to appear; the pages themselves load. The image pods are idle and healthy.",
    ),
    "FeatureFlag-KafkaQueueProblems": _flag_class(
        "FeatureFlagKafkaQueueProblems", "kafkaQueueProblems", ("on",), "fraud-detection",
        "checkout publishes 100 extra copies of every order to Kafka and fraud-detection sleeps a second per record, so consumer lag climbs without bound.",
        "fraud-detection", difficulty="hard",
        summary="Order post-processing in the astronomy shop falls further and further behind.",
        description="The fraud team reports that orders reach their analysis hours late and the delay keeps growing; the shop itself works for customers. The consumer pods are Running and not restarting.",
    ),
    "FeatureFlag-RecommendationCacheFailure": _flag_class(
        "FeatureFlagRecommendationCacheFailure", "recommendationCacheFailure", ("on",), "recommendation",
        "the recommendation service's product cache grows with every request and is never freed, so its memory climbs until it is OOMKilled, again and again.",
        "recommendation", difficulty="hard",
        summary="Recommendations in the astronomy shop slow down and the service keeps restarting.",
        description="Recommendation panels of the astronomy shop got slow, and the recommendation pods restart every few minutes. Nothing was deployed to them; restarts help only for a while.",
    ),
    "FeatureFlag-LoadGeneratorFlood": _flag_class(
        "FeatureFlagLoadGeneratorFlood", "loadGeneratorFloodHomepage", ("on",), "frontend",
        "the load generator sends 100 home-page requests per flood task, many times the normal load, so the frontend saturates and requests fail and slow down.",
        "frontend", intermittent=True, difficulty="medium",
        summary="The astronomy shop is overloaded and slow for everyone.",
        description="The whole astronomy shop became slow and many page loads fail; request rates on the edge look far above normal although marketing ran no campaign. Nothing was deployed.",
    ),
}
