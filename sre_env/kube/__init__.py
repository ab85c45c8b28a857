"""Kubernetes vocabulary with no simulator state in it.

Kinds and their aliases, resource quantities (their values and kubectl's
canonical form), the three patch types, label and field selectors (the one
LabelSelector matcher), node affinity, taints and tolerations (the one
toleration check), RBAC decisions, HPA targets, probe defaults, field labels,
node leases, certificates and time formats, Pod Security levels, bearer-token
authentication, access reviews, the protobuf wire format and throwaway serving
certificates: what the simulator, the shell, the
served API and the real-cluster backend all need to speak Kubernetes. Nothing
here imports a ``World``; everything is a function of API objects and strings.
"""
