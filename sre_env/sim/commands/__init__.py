"""The binaries behind ``kubectl exec`` and ``ssh``: host and container commands
that read the model through read-only views and print what the real tool prints.

Each binary is declared once (:class:`~sre_env.sim.commands.spec.Binary`) in the
table of the place it exists in: :data:`~sre_env.sim.commands.host.HOST_BINARIES`
and :data:`~sre_env.sim.commands.container.CONTAINER_BINARIES`. Scripts
(``sh -c``) and the text filters are not written here: they are the agent
shell's own language, handed in with the view (``view.shell``, see
:mod:`sre_env.sim.scripts`).
"""
