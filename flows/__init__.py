"""Prefect flows: thin wiring over critiquebench library functions."""
