"""The old entry-point path of the json judge (``critiquebench.judges._json:JsonJudge``),
which installed metadata from before judges/json/ still names; the judge lives in
:mod:`critiquebench.judges.json`."""

from critiquebench.judges.json import JsonJudge

__all__ = ["JsonJudge"]
