"""DuckDB views over a stored run: the four tables (``runs``, ``cases``, ``attempts``,
``calls``), the derived views (``defects_by_kind``, ``trigger_decisions``,
``fix_break``, ``canaries``, ``critic_accuracy``), the read-only connection the
``sql`` command and the notebook use, and ad-hoc SQL over them.

The derived views' own readers live beside them: the fix and break rates per round
(``fix_break``) and the canaries' cheating rate, with the cursor that hides canary
rows from every other number (``ordinary_rows``).
"""

from typing import TYPE_CHECKING

from critiquebench.runtime.lazy import lazy_exports

if TYPE_CHECKING:
    from critiquebench.analysis.views._canary import (
        CANARIES,
        CanaryRate,
        canary_rates,
        canary_text,
        ordinary_rows,
    )
    from critiquebench.analysis.views._critic_accuracy import (
        CRITIC_ACCURACY,
        CriticAccuracy,
        critic_accuracy,
        critic_accuracy_text,
    )
    from critiquebench.analysis.views._fix_break import (
        FIX_BREAK,
        FixBreakRound,
        fix_break_cells,
        fix_break_rounds,
        fix_break_text,
    )
    from critiquebench.analysis.views._kind_views import (
        DEFECTS_BY_KIND_VIEW,
        TRIGGER_DECISIONS_VIEW,
    )
    from critiquebench.analysis.views._sql import (
        interactive_help,
        query_table,
    )
    from critiquebench.analysis.views._views import (
        READABLE_TABLES,
        connect,
        define_tables,
        latest_run,
        read_only_connection,
        reload_table,
        spilling_connection,
        table_files,
        views_sql,
    )

_LAZY = {
    **dict.fromkeys(
        (
            "CANARIES",
            "CanaryRate",
            "canary_rates",
            "canary_text",
            "ordinary_rows",
        ),
        "_canary",
    ),
    **dict.fromkeys(
        ("CRITIC_ACCURACY", "CriticAccuracy", "critic_accuracy", "critic_accuracy_text"),
        "_critic_accuracy",
    ),
    **dict.fromkeys(
        (
            "FIX_BREAK",
            "FixBreakRound",
            "fix_break_cells",
            "fix_break_rounds",
            "fix_break_text",
        ),
        "_fix_break",
    ),
    **dict.fromkeys(
        (
            "DEFECTS_BY_KIND_VIEW",
            "TRIGGER_DECISIONS_VIEW",
        ),
        "_kind_views",
    ),
    **dict.fromkeys(
        (
            "interactive_help",
            "query_table",
        ),
        "_sql",
    ),
    **dict.fromkeys(
        (
            "READABLE_TABLES",
            "connect",
            "define_tables",
            "latest_run",
            "read_only_connection",
            "reload_table",
            "spilling_connection",
            "table_files",
            "views_sql",
        ),
        "_views",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "CANARIES",
    "CRITIC_ACCURACY",
    "DEFECTS_BY_KIND_VIEW",
    "FIX_BREAK",
    "READABLE_TABLES",
    "TRIGGER_DECISIONS_VIEW",
    "CanaryRate",
    "CriticAccuracy",
    "FixBreakRound",
    "canary_rates",
    "canary_text",
    "connect",
    "critic_accuracy",
    "critic_accuracy_text",
    "define_tables",
    "fix_break_cells",
    "fix_break_rounds",
    "fix_break_text",
    "interactive_help",
    "latest_run",
    "ordinary_rows",
    "query_table",
    "read_only_connection",
    "reload_table",
    "spilling_connection",
    "table_files",
    "views_sql",
]
