"""Loopback stand-ins for model servers, for tests and benchmarks (never for real runs)."""

from critiquebench.testing._stub import StubModelServer, solver_responder

__all__ = ["StubModelServer", "solver_responder"]
