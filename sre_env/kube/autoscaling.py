"""HorizontalPodAutoscaler vocabulary: what an HPA object asks for.

Read by the HPA controller (sre_env.sim.control.hpa) and by kubectl's
printing of HPAs, so both agree on the target an object names.
"""

from __future__ import annotations

from typing import Any

__all__ = ["cpu_target"]


def cpu_target(hpa: dict[str, Any]) -> int | None:
    """The CPU averageUtilization target (percent), if the HPA has one."""
    spec = hpa.get("spec") or {}
    for m in spec.get("metrics") or ():
        res = m.get("resource") or {}
        if m.get("type") == "Resource" and res.get("name") == "cpu":
            target = res.get("target") or {}
            if target.get("averageUtilization") is not None:
                return int(target["averageUtilization"])
    if "targetCPUUtilizationPercentage" in spec:
        return int(spec["targetCPUUtilizationPercentage"])
    # autoscaling/v2 defaulting: no metrics at all means 80 % average CPU utilisation
    return 80 if not spec.get("metrics") else None
