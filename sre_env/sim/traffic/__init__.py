"""The load generator and the request flow through an app's call graph, per tick, and the
timed triggers (a load spike, a cache that comes back empty) that start metastable incidents.
"""
