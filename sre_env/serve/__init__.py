"""Serving a simulated incident over the real protocols (``sre-env serve``); needs the ``[serve]`` extra."""
