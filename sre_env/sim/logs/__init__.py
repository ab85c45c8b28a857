"""Log lines in each component's own format: the dialects and their template tables.

``render`` renders a line of any dialect (it holds hotel-reservation's and the
common ones: zerolog, MongoDB, memcached, consul, jaeger) and lists the other
apps' dialects, each in its own module: ``otel`` (the astronomy shop),
``social`` (social-network) and ``tidb``.
"""
