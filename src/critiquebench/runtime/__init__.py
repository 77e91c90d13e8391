"""The process and runtime plumbing every room leans on, kept out of the architecture.

Nothing here knows about critique loops, judges or reports; each module is small and
imported by its full name (this package imports none of them, so importing one stays
as cheap as the module itself):

- ``project``: where a project's files live (results, call cache, prices, Prefect
  home) and the defaults every command shares;
- ``prefect_env``: Prefect's state kept inside the project, set before ``import prefect``;
- ``prefect_server``: the temporary Prefect API server a run starts, and the standing
  one ``critiquebench server`` keeps for later runs;
- ``warm_child``: one call in a child process that imported its modules ahead of time;
- ``background``: work on a thread of its own, collected later as a future;
- ``peak_memory``: a process's own peak resident memory;
- ``progress``: the progress bar or plain progress lines of a run's units;
- ``lazy``: lazy re-exports for package ``__init__`` files;
- ``ast_turns``: parsing and compiling Python trees from several threads safely.
"""
