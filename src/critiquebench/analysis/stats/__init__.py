"""Statistics of the report, pure functions of numbers: the case (cluster) bootstrap with
BCa intervals, McNemar's test counted over cases, the acceptance rule of a verdict, and
power by simulation (how many cases and reps make a verdict likely).

Nothing here reads a run; :mod:`critiquebench.analysis.report` feeds these the numbers.
The exact t quantile and binomial tail are our own (``_exact``): no scipy.
"""

from typing import TYPE_CHECKING

from critiquebench.runtime.lazy import lazy_exports

if TYPE_CHECKING:
    from critiquebench.analysis.stats._mcnemar import (
        McNemarResult,
        clustered_mcnemar,
        mcnemar_exact,
    )
    from critiquebench.analysis.stats._power import (
        PowerResult,
        estimate_power,
        min_cases_for_power,
        params_for_effect,
        power_table,
        simulate_defects,
    )
    from critiquebench.analysis.stats._stats import (
        MIN_CASES,
        Acceptance,
        MeanEstimate,
        ReductionEstimate,
        acceptance,
        cluster_bootstrap_mean,
        cluster_bootstrap_reduction,
        decide_acceptance,
        paired_bootstrap_reduction,
    )

_LAZY = {
    **dict.fromkeys(
        (
            "McNemarResult",
            "clustered_mcnemar",
            "mcnemar_exact",
        ),
        "_mcnemar",
    ),
    **dict.fromkeys(
        (
            "PowerResult",
            "estimate_power",
            "min_cases_for_power",
            "params_for_effect",
            "power_table",
            "simulate_defects",
        ),
        "_power",
    ),
    **dict.fromkeys(
        (
            "MIN_CASES",
            "Acceptance",
            "MeanEstimate",
            "ReductionEstimate",
            "acceptance",
            "cluster_bootstrap_mean",
            "cluster_bootstrap_reduction",
            "decide_acceptance",
            "paired_bootstrap_reduction",
        ),
        "_stats",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "MIN_CASES",
    "Acceptance",
    "McNemarResult",
    "MeanEstimate",
    "PowerResult",
    "ReductionEstimate",
    "acceptance",
    "cluster_bootstrap_mean",
    "cluster_bootstrap_reduction",
    "clustered_mcnemar",
    "decide_acceptance",
    "estimate_power",
    "mcnemar_exact",
    "min_cases_for_power",
    "paired_bootstrap_reduction",
    "params_for_effect",
    "power_table",
    "simulate_defects",
]
