"""The run report: the RunReport model, the SQL that fills it, cost and the curves."""
