"""The binaries behind ``kubectl exec`` and ``ssh``: host and container commands
that read the model through read-only views and print what the real tool prints.
"""
