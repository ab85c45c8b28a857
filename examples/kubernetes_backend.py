"""One episode on the KubernetesBackend, with no cluster needed: the simulator served over the real APIs.

    python examples/kubernetes_backend.py --env SREGym/ScalePodZero-v0
    python examples/kubernetes_backend.py --kubeconfig ~/.kube/config --prometheus http://localhost:9090

Without ``--kubeconfig`` a healthy simulated cluster is served on loopback (``sre-env serve``'s
server, 120x faster than the wall clock) and the backend talks to it exactly as it would to a
real cluster: the fault goes in through the Kubernetes API, the reference fix runs as the real
``kubectl`` in the agent's sandbox, and the live gates grade from Prometheus. With
``--kubeconfig`` the same runs on your cluster (docs/kubernetes.md).
"""

from __future__ import annotations

import argparse
import tempfile
from typing import Any

import gymnasium as gym

import sre_env  # noqa: F401  (registers the SREGym/* ids)
from sre_env.envs.registry import scenario_class


def served_cluster(env_id: str, workdir: str) -> tuple[Any, str, dict[str, Any]]:
    """Serve a healthy simulated cluster for ``env_id``'s app; returns (server, kubeconfig, backend options)."""
    from sre_env.serve.server import IncidentServer
    from sre_env.sim.backend import SimBackend
    from sre_env.sim.episodes import healthy_world

    # 120x faster than real time; the simulator's own timestamps, so its clock is seen to run that fast
    server = IncidentServer(SimBackend(healthy_world(scenario_class(env_id).app)), speed=120.0, real_epoch=True).start()
    kubeconfig = server.write_kubeconfig(f"{workdir}/kubeconfig", "default")
    url = server.prometheus_url
    return server, str(kubeconfig), {"prometheus_url": url, "loki_url": url, "jaeger_url": url, "telemetry_token": server.token, "time_scale": 120.0}


def main(argv: list[str] | None = None) -> float:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env", default="SREGym/ScalePodZero-v0")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--kubeconfig", help="a real cluster's kubeconfig (default: serve the simulator locally)")
    p.add_argument("--prometheus", help="Prometheus URL of the real cluster (needed to grade)")
    p.add_argument("--sandbox", default="auto", choices=("auto", "docker", "none"))
    args = p.parse_args(argv)

    server = None
    with tempfile.TemporaryDirectory() as workdir:
        if args.kubeconfig:
            kubeconfig, options = args.kubeconfig, {"prometheus_url": args.prometheus}
        else:
            server, kubeconfig, options = served_cluster(args.env, workdir)
        env = gym.make(args.env, backend="kubernetes", kubeconfig=kubeconfig, backend_options=options | {"sandbox": args.sandbox})
        try:
            obs, info = env.reset(seed=args.seed)
            print(f"nondeterministic: {env.spec.nondeterministic}\n{obs['output']}\n[alerts]\n{obs['alerts']}")
            for command in env.unwrapped.scenario.reference_solution():
                obs, *_ = env.step(command)
                print(f"$ {command}\n{obs['output']}")
            obs, reward, *_, info = env.step("submit " + env.unwrapped.scenario.root_cause().summary)
            print(f"reward {reward:.3f}  success {info['is_success']}  gates {({k: v['passed'] for k, v in info['oracles'].items()})}")
        finally:
            env.close()
            if server is not None:
                server.stop()
    return float(reward)


if __name__ == "__main__":
    main()
