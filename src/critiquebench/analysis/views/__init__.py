"""DuckDB views over a stored run, and ad-hoc SQL over them."""
