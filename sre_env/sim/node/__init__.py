"""The nodes' hosts: disks and their error model, SMART, the kernel log, host files,
kernel limits, node-level faults and the cron jobs that fill disks.
"""
