"""The trigger judge: did the model use a skill exactly where its description says?
``_decision`` reads the model's TRIGGER / NO_TRIGGER reply.

Suite format: docs/suites.md, section "trigger".
"""

from critiquebench.judges.trigger._decision import TRIGGER_FORMAT, TriggerFormat
from critiquebench.judges.trigger._judge import TriggerJudge

__all__ = ["TRIGGER_FORMAT", "TriggerFormat", "TriggerJudge"]
