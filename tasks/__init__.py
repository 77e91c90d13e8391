"""Prefect tasks: thin wrappers over critiquebench library functions."""
