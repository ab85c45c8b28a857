"""The control plane: the API server's create path and admission (webhooks,
PodSecurity, quota, priority), the controllers (deployments, replica sets,
statefulsets, daemonsets, jobs, HPA, namespaces, node lifecycle, volume
attachment, the TiDB operator, Gatekeeper), the scheduler and RBAC, and the
table of the apps' models by the name an app spec gives (``app_models``).
"""
