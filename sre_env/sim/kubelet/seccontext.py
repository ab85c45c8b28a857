"""The kubelet's ``runAsNonRoot`` check (``verifyRunAsNonRoot``), before a container is created.

With ``runAsNonRoot: true`` and no ``runAsUser``, the kubelet reads the image's
configured user: root (or none, which is root) makes the container fail with
``CreateContainerConfigError``. The model knows the user of the images listed
in :data:`IMAGE_USERS` (by repository prefix); for other images the user is
unknown here and the check passes, so apps whose images were never described
are unaffected.
"""

from __future__ import annotations

from typing import Any

from sre_env.sim.kernel.images import split_image

__all__ = ["IMAGE_USERS", "run_as_non_root_error"]

Obj = dict[str, Any]

#: repository prefix -> the image's ``USER`` (``""``: none set, so root). PingCAP's
#: pd/tikv/tidb images set no USER and run as root.
IMAGE_USERS: tuple[tuple[str, str], ...] = (("pingcap/", ""),)


def _image_user(image: str) -> str | None:
    repo, _ = split_image(image)
    repo = repo.removeprefix("docker.io/")
    for prefix, user in IMAGE_USERS:
        if repo.startswith(prefix):
            return user
    return None


def run_as_non_root_error(pod: Obj, spec: Obj) -> str | None:
    """The kubelet's error for a container that would break its non-root policy, or None."""
    psc = pod["spec"].get("securityContext") or {}
    csc = spec.get("securityContext") or {}
    non_root = csc.get("runAsNonRoot", psc.get("runAsNonRoot"))
    if non_root is not True:
        return None
    meta = pod["metadata"]
    ref = f'"{meta["name"]}_{meta["namespace"]}({meta.get("uid", "")})"'
    uid = csc.get("runAsUser", psc.get("runAsUser"))
    if uid is not None:
        return f"container's runAsUser breaks non-root policy (pod: {ref}, container: {spec.get('name', '')})" if int(uid) == 0 else None
    user = _image_user(str(spec.get("image", "")))
    if user is None:
        return None
    if user in ("", "0", "root"):
        return f"container has runAsNonRoot and image will run as root (pod: {ref}, container: {spec.get('name', '')})"
    if not user.split(":")[0].isdigit():
        return f"container has runAsNonRoot and image has non-numeric user ({user}), cannot verify user is non-root (pod: {ref}, container: {spec.get('name', '')})"
    return None
