"""The old entry-point path of the trigger judge (``critiquebench.judges._trigger:TriggerJudge``),
which installed metadata from before judges/trigger/ still names; the judge lives in
:mod:`critiquebench.judges.trigger`."""

from critiquebench.judges.trigger import TriggerJudge

__all__ = ["TriggerJudge"]
