"""The application topologies, as data.

Each module describes one app (components, images, ports, dependencies, request
types, manifests); the simulator builds a cluster from it and the real-cluster
backend generates manifests from it. Runtime models and log dialects are named
here by string and looked up by the simulator, never imported for side effects.
"""
