"""Evaluation: episode reports, runs of many episodes into a results table, and the
report tables and plots built from it.
"""
