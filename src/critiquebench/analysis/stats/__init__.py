"""Statistics of the report: the case bootstrap, McNemar, the acceptance rule, power."""
