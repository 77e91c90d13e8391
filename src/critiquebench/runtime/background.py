"""Work started on a thread of its own, its outcome collected later as a future."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

T = TypeVar("T")


def in_thread(work: Callable[[], T], name: str, *, daemon: bool = False) -> Future[T]:
    """Run ``work`` on a new thread now; its value, or what it raised, in the future.

    Not a daemon thread by default: a process that ends meanwhile lets the work
    finish, so the child processes it may start are stopped as usual rather than
    abandoned. A ``daemon`` thread suits work that only watches (nothing to stop).
    """
    done: Future[T] = Future()

    def run() -> None:
        try:
            done.set_result(work())
        except BaseException as exc:  # raised again by whoever asks for the result
            done.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=daemon).start()
    return done
