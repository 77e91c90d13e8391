"""The bubblewrap arguments that make the interpreter and a judge's extras visible."""

from __future__ import annotations

from pathlib import Path

from critiquebench.judges.sandbox._pool import (
    SandboxExtras,
    _bubblewrap_argv,
    _extra_binds,
    _read_only_binds,
)

_SYSTEM = [
    *("--ro-bind-try", "/usr", "/usr", "--ro-bind-try", "/lib", "/lib"),
    *("--ro-bind-try", "/lib64", "/lib64", "--ro-bind-try", "/lib32", "/lib32"),
    *("--ro-bind-try", "/bin", "/bin", "--ro-bind-try", "/sbin", "/sbin"),
    *("--ro-bind-try", "/etc/localtime", "/etc/localtime"),
]


def test_an_interpreter_under_usr_needs_no_bind_of_its_own() -> None:
    assert _read_only_binds(Path("/usr/local")) == _SYSTEM


def test_an_interpreter_elsewhere_is_bound_below_traversable_folders() -> None:
    assert _read_only_binds(Path("/opt/py/3.11")) == [
        *_SYSTEM,
        *("--perms", "0755", "--dir", "/opt", "--perms", "0755", "--dir", "/opt/py"),
        *("--ro-bind", "/opt/py/3.11", "/opt/py/3.11"),
    ]


def test_each_extra_is_bound_at_its_own_path() -> None:
    assert _extra_binds((Path("/srv/a"), Path("/b"))) == [
        *("--perms", "0755", "--dir", "/srv", "--ro-bind", "/srv/a", "/srv/a"),
        *("--ro-bind", "/b", "/b"),
    ]


def test_the_private_tmp_is_mounted_before_binds_that_live_below_it() -> None:
    # bubblewrap mounts in argument order: a fresh /tmp mounted after a bind of a
    # package under /tmp (a virtualenv there) hid it, and DuckDB could not be imported.
    extras = SandboxExtras(read_only=(Path("/tmp/venv/site/duckdb"),))
    python, prefix = Path("/tmp/py/bin/python3"), Path("/tmp/py")
    argv = _bubblewrap_argv("bwrap", python, prefix, extras, root=False)
    tmpfs = argv.index("--tmpfs")
    assert argv[tmpfs + 1] == "/tmp"
    binds = [
        i for i, arg in enumerate(argv) if arg == "--ro-bind" and argv[i + 1].startswith("/tmp/")
    ]
    assert [argv[i + 1] for i in binds] == ["/tmp/py", "/tmp/venv/site/duckdb"]
    assert all(tmpfs < i for i in binds)
    for mount in ("--proc", "--dev"):
        assert argv.index(mount) < binds[0]
