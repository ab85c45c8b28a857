"""The load generator and the request flow through an app's call graph, per tick.
"""
