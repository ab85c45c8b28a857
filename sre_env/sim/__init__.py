"""The embedded simulator: a deterministic Kubernetes cluster in one process.

Layers, lowest first; each subpackage imports only from those before it
(``tests/test_layers.py`` checks it):

- ``kernel/``: the World's declared state (objects, hosts, pod runtimes, traffic
  results, each subsystem's own slot) and its one clock with the one timer heap;
- ``node/``: the hosts' behaviour (disk error model, kernel log, host files, cron);
- ``logs/``: each component's log dialect, and what a container's log gets;
- ``network/``: Service routing, DNS, NetworkPolicies, kube-proxy, node firewalls;
- ``runtime/``: what runs in the containers (process models, stores, app models);
- ``kubelet/``: pulls, starts, probes, eviction, node status;
- ``control/``: the API server's create path and admission, controllers, scheduler;
- ``traffic/``: the load generator and the request flow, per tick;
- ``commands/``: the binaries behind ``kubectl exec`` and ``ssh``;

then ``sre_env.telemetry`` (exporters, TSDB, alert rules, lazy logs and traces),
and above it ``engine.py`` (the tick pipeline: the one module that imports every
subsystem), ``noise.py`` (background noise on the clock) and ``model.py`` (the
inspection surface simulator-only scenarios read). ``backend.py`` (the Backend
seam's implementation), ``scripts.py`` (``sh -c`` in the shell's language) and
``episodes.py`` (cached healthy clusters and developed incidents, the episode
seam) sit with the other backends, above the shell, faults, scenarios and oracles.
"""
