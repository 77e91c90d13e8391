"""The bubblewrap arguments that make the interpreter and a judge's extras visible."""

from __future__ import annotations

from pathlib import Path

from critiquebench.judges._sandbox import _extra_binds, _read_only_binds

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
