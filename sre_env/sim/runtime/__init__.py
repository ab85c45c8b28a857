"""What runs inside the containers: process start-up models, image contents, the
configuration a process reads, and the stateful stores, proxies and app models
(MongoDB users, redis/valkey, PostgreSQL, Kafka, flagd, envoy, nginx filters).
"""
