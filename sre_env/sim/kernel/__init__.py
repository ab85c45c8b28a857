"""The simulator's kernel: the World's declared state, its one clock, its object store.

Every subsystem reads and writes the world through the slots declared here;
nothing in the kernel knows how a controller, a kubelet or a network behaves.
"""
