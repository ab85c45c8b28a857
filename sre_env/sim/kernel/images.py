"""Which image references exist in the (simulated) registry, and how big they are.

The kubelet asks the catalog before "pulling": an unknown repository or tag
gives the same ErrImagePull / ImagePullBackOff sequence a real node shows.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ImageCatalog", "split_image", "normalize_image", "image_id"]

_COMMON = (
    "busybox:1.36",
    "busybox:latest",
    "nginx:1.25",
    "nginx:latest",
    "alpine:3.19",
    "alpine:latest",
    "curlimages/curl:8.5.0",
    "nicolaka/netshoot:latest",
    "ubuntu:22.04",
    "registry.k8s.io/pause:3.9",
    # exporters people run as sidecars
    "prom/statsd-exporter:v0.26.1",
    "prom/memcached-exporter:v0.14.4",
    "percona/mongodb_exporter:0.40",
)


#: bugs shipped in specific image versions: ref -> {binary: (share of its requests that fail, the error it returns)}.
#: A property of the release, so every pod that runs that version misbehaves the same way
#: and rolling back to the previous version is what fixes it.
_DEFECTS: dict[str, dict[str, tuple[float, str]]] = {
    # recommendation's handler stopped accepting one of the three "require" modes the UI sends
    "yinfangchen/hotelreservation:0.9.2": {"recommendation": (0.34, 'invalid require parameter "price"')},
    # profile decodes the cached hotel documents with a changed struct
    "yinfangchen/hotelreservation:0.9.3": {
        "profile": (0.5, "json: cannot unmarshal number into Go struct field Address.address.streetNumber of type string")
    },
    # rate parses an optional field that most inventory rows leave empty
    "yinfangchen/hotelreservation:0.9.4": {"rate": (0.4, 'strconv.ParseFloat: parsing "": invalid syntax')},
}


def split_image(ref: str) -> tuple[str, str]:
    """``repo[:tag]`` -> (repo, tag); a missing tag means ``latest``; digests kept as tags."""
    ref = normalize_image(ref)
    if "@" in ref:
        repo, digest = ref.split("@", 1)
        return repo, "@" + digest
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        return ref[:colon], ref[colon + 1 :]
    return ref, "latest"


def normalize_image(ref: str) -> str:
    ref = ref.strip()
    for prefix in ("docker.io/library/", "docker.io/"):
        if ref.startswith(prefix):
            ref = ref[len(prefix) :]
    return ref


@dataclass
class ImageCatalog:
    """A set of ``repo:tag`` references that can be pulled, with pull times."""

    refs: set[str] = field(default_factory=lambda: set(_COMMON))
    #: repo -> {binary: the app component that binary is} for images that ship several programs
    binaries: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add_program(self, ref: str, binary: str, component: Any) -> None:
        repo, _ = split_image(ref)
        self.binaries.setdefault(repo, {})[binary] = component

    @staticmethod
    def defect(ref: str, binary: str) -> tuple[float, str] | None:
        """The bug ``binary`` has in this image version, if any: (failing share of requests, error)."""
        repo, tag = split_image(ref)
        return _DEFECTS.get(f"{repo}:{tag}", {}).get(binary)

    def programs(self, ref: str) -> dict[str, Any]:
        """The binaries an image ships (same repository, any tag)."""
        return self.binaries.get(split_image(ref)[0], {})

    def add(self, ref: str) -> None:
        repo, tag = split_image(ref)
        self.refs.add(f"{repo}:{tag}")

    def exists(self, ref: str) -> bool:
        repo, tag = split_image(ref)
        return f"{repo}:{tag}" in self.refs

    def repo_exists(self, ref: str) -> bool:
        repo, _ = split_image(ref)
        return any(r.rsplit(":", 1)[0] == repo for r in self.refs)

    @staticmethod
    def pull_seconds(ref: str) -> float:
        """Deterministic pull time: bigger for app images than for small tools."""
        repo, _ = split_image(ref)
        return 4.0 + (sum(map(ord, repo)) % 7)

    @staticmethod
    def pull_error(ref: str) -> str:
        repo, tag = split_image(ref)
        full = ref if "/" in repo and "." in repo.split("/")[0] else f"docker.io/{'library/' if '/' not in repo else ''}{repo}:{tag}"
        return (
            f'Failed to pull image "{ref}": rpc error: code = NotFound desc = failed to pull and unpack image '
            f'"{full}": failed to resolve reference "{full}": {full}: not found'
        )


def image_id(image: str) -> str:
    """The digest-pinned reference the container runtime reports for ``image`` (``imageID``)."""
    repo, _ = split_image(image)
    digest = hashlib.blake2b(image.encode(), digest_size=32).hexdigest()
    full = repo if "." in repo.split("/")[0] else f"docker.io/{'library/' if '/' not in repo else ''}{repo}"
    return f"{full}@sha256:{digest}"
