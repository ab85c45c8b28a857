"""Kubernetes vocabulary with no simulator state in it.

Kinds and their aliases, resource quantities, the three patch types, label and
field selectors, node affinity and tolerations, probe defaults, field labels,
certificates and time formats: what the simulator, the shell, the served API and
the real-cluster backend all need to speak Kubernetes. Nothing here imports a
``World``; everything is a function of API objects and strings.
"""
