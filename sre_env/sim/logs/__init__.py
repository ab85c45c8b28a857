"""Log lines in each component's own format: the dialects and their template tables.
"""
