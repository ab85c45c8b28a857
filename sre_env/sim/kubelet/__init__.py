"""The kubelet: image pulls, container starts, crash back-off, probes, init
containers, the runAsNonRoot check and the eviction manager.
"""
