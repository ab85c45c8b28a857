"""Bad releases on hotel-reservation: unpullable images, wrong commands, buggy versions.

* IncorrectImage: a database Deployment (strategy Recreate) is moved to an image
  tag that does not exist. The old pod is gone before the new one can pull, so
  the database is down (ErrImagePull -> ImagePullBackOff) and its callers fail.
* IncorrectImage-WrongCommand: a Go service's manifest names another binary of
  the same image. That program starts with the wrong environment and exits, or
  serves the wrong API on the wrong port.
* BuggyRelease: a service is rolled out to a newer image version whose code
  returns errors on its endpoint for part of the requests. The bug belongs to
  the image version (sre_env.sim.kernel.images), so restarts and more replicas keep it;
  ``kubectl rollout undo`` goes back to the working version.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.app_config import SetContainerCommand, SetContainerImage
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.kernel.images import split_image

from .app_common import callers_of, live_pods, pods_serving
from .base import RootCause, SimScenario
from .blind import rollback_repairs
from .briefs import impact, user_report
from .service_fault import ServiceFault

if TYPE_CHECKING:
    from sre_env.backend import Backend
    from sre_env.sim.model import ModelBackend

__all__ = ["BuggyRelease", "IncorrectImage", "IncorrectImageWrongCommand"]

_DATABASES = ("mongodb-rate", "mongodb-profile", "mongodb-reservation")
_GO = ("frontend", "search", "geo", "rate", "profile", "recommendation", "user", "reservation")


def _image_check(backend: "Backend", namespace: str, service: str, container: str, bad: str) -> Check:
    pods = live_pods(backend, namespace, service)
    wrong = [p["metadata"]["name"] for p in pods if any(c.get("image") == bad for c in p["spec"]["containers"] if c["name"] == container)]
    return Check("image_restored", bool(pods) and not wrong, f"still on {bad}: {', '.join(wrong)}" if wrong else (f"no pod of {service} runs {bad}" if pods else f"no pod of {service}"))


#: one family, two variants of the same mistake: the image reference or the command in it
_INCORRECT_IMAGE = Mechanism(
    "incorrect_image",
    "application",
    "a wrong image (a tag that does not exist) or the wrong binary/command in the container",
    (
        r"\bimage ?pull ?back ?off\b",
        r"\berr ?image ?pull\b",
        r"\b(?:wrong|bad|incorrect|invalid|non-?existent|missing|unknown|mistyped|typo\w*)\b[^.;\n]{0,20}?\b(?:image(?: tag)?|tag)\b",
        r"\b(?:image|tag)\b[^.;\n]{0,40}?\b(?:does not exist|doesn't exist|not found|cannot be pulled|can't be pulled|fails? to pull)\b",
        r"\b(?:wrong|bad|incorrect|invalid|mistaken)\b[^.;\n]{0,20}?\b(?:command|binary|entrypoint|executable|program)\b",
        r"\b(?:command|binary|entrypoint)\b[^.;\n]{0,40}?\b(?:changed|set) to\b",
    ),
    detail_keys=("image", "previous_image", "command", "previous_command"),
    compatible=("image_error", "missing_env_var", "service_target_port"),
)


class IncorrectImage(SimScenario):
    family = "IncorrectImage"
    app = HOTEL_RESERVATION
    layer = "application"
    difficulty = "easy"
    summary = "Part of hotel-reservation started failing during a maintenance rollout."
    description = (
        "A maintenance change was rolled out to the hotel-reservation data tier a few minutes ago. Since then "
        "some pages intermittently return HTTP 500 for users."
    )
    accepted_blind = rollback_repairs("the maintenance change that set the wrong image")
    mechanism = _INCORRECT_IMAGE

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        database = str(rng.choice(_DATABASES))
        comp = self.app.component(database)
        repo, tag = split_image(comp.image)
        bad = str(rng.choice((f"{repo}:{tag}6", f"{repo}:4.6.6", f"{repo}:{tag}-bulleye", f"{repo}:v{tag}", f"{repo}:44.6")))
        return {"database": database, "container": comp.container, "image": bad, "previous_image": comp.image}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        SetContainerImage(self.namespace, v["database"], v["container"], v["image"], v["previous_image"]).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        callers = callers_of(self.app, v["database"])
        return RootCause(
            component=f"deployment/{v['database']}",
            namespace=self.namespace,
            layer="application",
            mechanism="image tag does not exist",
            summary=(
                f"deployment/{v['database']} was set to image {v['image']}, a tag that does not exist (previous image {v['previous_image']}); "
                f"with the Recreate strategy the old pod is gone and the new one is stuck in ErrImagePull/ImagePullBackOff, so "
                f"{', '.join(callers)} cannot reach the database. " + impact(self.app, v["database"])
            ),
            details={"image": v["image"], "previous_image": v["previous_image"], "container": v["container"], "mechanism_id": "incorrect_image"},
            affected=tuple([f"deployment/{v['database']}"] + [f"deployment/{c}" for c in callers]),
        )

    def brief(self) -> str:
        return user_report(self.app, self.variant["database"], intermittent=True)

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get pods -n {ns}",
            f"kubectl describe pod -n {ns} -l io.kompose.service={v['database']}",
            f"kubectl rollout undo deployment/{v['database']} -n {ns}",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return {
            "rollout_restart": [f"kubectl rollout restart deployment/{v['database']} -n {ns}"],
            "delete_pods": [f"kubectl delete pod -n {ns} -l io.kompose.service={v['database']}"],
            "restart_callers": [f"kubectl rollout restart deployment/{c} -n {ns}" for c in callers_of(self.app, v["database"])],
            "scale_to_zero": [f"kubectl scale deployment/{v['database']} -n {ns} --replicas=0"],
        }

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("Deployment", self.namespace, self.variant["database"], "modified")]

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        return [_image_check(backend, self.namespace, v["database"], v["container"], v["image"]), pods_serving(backend, self.namespace, v["database"])]


class IncorrectImageWrongCommand(ServiceFault, SimScenario):
    family = "IncorrectImage"
    app = HOTEL_RESERVATION
    layer = "application"
    difficulty = "medium"
    summary = "A hotel-reservation feature broke after a manifest clean-up."
    description = (
        "A clean-up of the hotel-reservation manifests was merged and deployed a few minutes ago. Since then one "
        "feature of the site fails for every user; the image tags did not change."
    )
    accepted_blind = rollback_repairs("the manifest clean-up that changed the container's command")
    mechanism = _INCORRECT_IMAGE

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(_GO))
        comp = self.app.component(service)
        other = str(rng.choice([s for s in _GO if s != service]))
        return {"service": service, "container": comp.container, "command": other, "previous_command": comp.command[0]}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        SetContainerCommand(self.namespace, v["service"], v["container"], (v["command"],), (v["previous_command"],)).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        other = self.app.component(v["command"])
        missing = [k for k in other.required_env if k not in dict(self.app.component(v["service"]).env)]
        effect = (
            f"that program needs {missing[0]}, which the pod does not set, so it exits at start and crash-loops"
            if missing
            else f"that program serves its own API on port {other.listen_port} instead of {self.app.component(v['service']).listen_port}, so callers are refused"
        )
        return self.service_cause(
            "container runs the wrong command",
            f"deployment/{v['service']}'s container command was changed to the wrong binary {v['command']} (it must run {v['previous_command']}); "
            f"{effect}; deployment/{self.app.entrypoint} returns errors. ",
            {"command": v["command"], "previous_command": v["previous_command"], "container": v["container"], "mechanism_id": "incorrect_image"},
            # naming the binary that runs names a component of the same name: not a bystander here
            affected=tuple(dict.fromkeys((f"deployment/{v['service']}", f"deployment/{self.app.entrypoint}", f"deployment/{v['command']}"))),
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get pods -n {ns}",
            f"kubectl get deployment {v['service']} -n {ns} -o jsonpath='{{.spec.template.spec.containers[0].command}}'",
            f"kubectl rollout undo deployment/{v['service']} -n {ns}",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return self.service_wrong_fixes(repull_image=[f"kubectl set image deployment/{v['service']} -n {ns} {v['container']}={self.app.component(v['service']).image}"])

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        pods = live_pods(backend, self.namespace, v["service"])
        wrong = [p["metadata"]["name"] for p in pods if any((c.get("command") or [v["previous_command"]])[0] != v["previous_command"] for c in p["spec"]["containers"] if c["name"] == v["container"])]
        return [
            Check("command_restored", bool(pods) and not wrong, f"still runs {v['command']}: {', '.join(wrong)}" if wrong else f"every pod runs {v['previous_command']}"),
            pods_serving(backend, self.namespace, v["service"]),
        ]


#: service -> the release of the Go image that ships a bug in it (sre_env.sim.kernel.images)
_BUGGY = {"recommendation": "0.9.2", "profile": "0.9.3", "rate": "0.9.4"}


class BuggyRelease(ServiceFault, SimScenario):
    family = "BuggyRelease"
    app = HOTEL_RESERVATION
    layer = "application"
    intermittent = True
    difficulty = "medium"
    summary = "Errors on some hotel-reservation pages since today's release."
    description = (
        "Today's release went out through the normal pipeline and every pod came up Running and Ready. Since then "
        "part of the hotel-reservation site returns HTTP 500 for a share of requests; nothing is crash-looping."
    )
    accepted_blind = rollback_repairs("today's release of the service")
    mechanism = Mechanism(
        "buggy_release",
        "application",
        "a new image version with a code bug",
        (
            r"\bbug(?:s|gy)?\b",
            r"\bregression\b",
            r"\bcode (?:defect|error|issue)s?\b",
            r"\b(?:bad|broken|faulty|defective) (?:release|version|build|image|rollout|deploy\w*)\b",
            r"\b(?:new|latest|recent) (?:release|version|image)\b[^.;\n]{0,40}?\b(?:errors?|fails?|broke\w*|returns?)\b",
            r"\b{image}\b",
        ),
        detail_keys=("image", "previous_image", "error"),
        compatible=("application_bug",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(sorted(_BUGGY)))
        comp = self.app.component(service)
        repo, _ = split_image(comp.image)
        image = f"{repo}:{_BUGGY[service]}"
        _, error = backend.model.image_defect(image, comp.command[0]) or (0.0, "")
        return {"service": service, "container": comp.container, "image": image, "previous_image": comp.image, "error": error}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        SetContainerImage(self.namespace, v["service"], v["container"], v["image"], v["previous_image"]).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.service_cause(
            "buggy release",
            f"deployment/{v['service']} was rolled out to a new version, image {v['image']} (previous {v['previous_image']}), whose code has a bug: "
            f"part of its requests fail with '{v['error']}' and deployment/{self.app.entrypoint} returns HTTP 500 for them. "
            "Rolling back to the previous version fixes it. ",
            {"image": v["image"], "previous_image": v["previous_image"], "error": v["error"], "mechanism_id": "buggy_release"},
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl logs deployment/{self.app.entrypoint} -n {ns} --tail=30",
            f"kubectl rollout history deployment/{v['service']} -n {ns}",
            f"kubectl rollout undo deployment/{v['service']} -n {ns}",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return self.service_wrong_fixes(
            scale_up=[f"kubectl scale deployment/{v['service']} -n {ns} --replicas=3"],
            restart_frontend=[f"kubectl rollout restart deployment/{self.app.entrypoint} -n {ns}"],
        )

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        return [_image_check(backend, self.namespace, v["service"], v["container"], v["image"]), pods_serving(backend, self.namespace, v["service"])]
