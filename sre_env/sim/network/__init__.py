"""Cluster networking: Service routing, DNS and CoreDNS, NetworkPolicies, kube-proxy,
each node's firewall and pod IPAM, the ingress, and the routes a client pod sees.
"""
