"""The call cache shared through an S3-compatible store: workers that share nothing
else (own home, own temp folder, own process) pay once per distinct call in all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.s3_server import S3Server, s3_server

pytestmark = pytest.mark.slow

WORKER = r"""
import json, os, sys, time
from upath import UPath
from critiquebench.models import CachingProvider, Completion, GenerationParams, Message
from critiquebench.models import SharedCallCache
from critiquebench.models import CallContext

class Model:
    # Answers name the worker that made the call: a worker that shows another's
    # answer got it from the shared cache.
    model_name = "fake:model"
    calls = 0
    def complete(self, messages, params, schema=None, context=None):
        Model.calls += 1
        time.sleep(0.2)  # long enough that the workers' calls overlap
        return Completion(text=f"{messages[0].content} by {os.getpid()}", tokens_in=3,
                          tokens_out=5, latency_s=0.2, model=self.model_name)

order = json.loads(sys.argv[2])
provider = CachingProvider(Model(), SharedCallCache(UPath(sys.argv[1])))
answers = {}
for prompt in order:
    done = provider.complete([Message("user", prompt)], GenerationParams(),
                             context=CallContext(rep=0))
    answers[prompt] = done.text
print(json.dumps({"calls": Model.calls, "answers": answers}))
"""


@pytest.fixture(scope="module")
def server() -> Iterator[S3Server]:
    with s3_server() as running:
        running.make_bucket("shared-cache")
        yield running


def _worker_env(server: S3Server, home: Path) -> dict[str, str]:
    """Nothing of this process's state: another home and temp folder, the store's address."""
    (home / "tmp").mkdir(parents=True)
    keep = {name: os.environ[name] for name in ("PATH", "LANG") if name in os.environ}
    return {
        **keep,
        **server.environment(),
        "HOME": str(home),
        "TMPDIR": str(home / "tmp"),
        "PYTHONPATH": os.pathsep.join(sys.path),
    }


def test_workers_sharing_only_the_store_pay_once_per_distinct_call(
    server: S3Server, tmp_path: Path
) -> None:
    prompts = [f"prompt {n}" for n in range(8)]
    orders = [prompts, prompts[::-1], prompts[3:] + prompts[:3]]
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, "s3://shared-cache/cache", json.dumps(order)],
            env=_worker_env(server, tmp_path / f"worker-{index}"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for index, order in enumerate(orders)
    ]
    results = []
    for worker in workers:
        out, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err
        results.append(json.loads(out))
    assert sum(result["calls"] for result in results) == len(prompts)
    assert all(result["answers"] == results[0]["answers"] for result in results)
    assert len({answer.rsplit(" ", 1)[1] for answer in results[0]["answers"].values()}) > 1


def test_a_claim_of_a_failed_call_is_withdrawn(
    server: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    from upath import UPath

    from critiquebench.models import (
        CachingProvider,
        Completion,
        GenerationParams,
        Message,
        ModelError,
        SharedCallCache,
    )

    class Failing:
        model_name = "fake:failing"
        calls = 0

        def complete(self, *args: object, **kwargs: object) -> Completion:
            Failing.calls += 1
            if Failing.calls == 1:
                raise ModelError("quota")
            return Completion(text="ok", tokens_in=1, tokens_out=1, latency_s=0.0, model="m")

    for name, value in server.environment().items():
        monkeypatch.setenv(name, value)
    cache = SharedCallCache(UPath("s3://shared-cache/failing"), poll_s=0.01)
    provider = CachingProvider(Failing(), cache)
    message = [Message("user", "x")]
    with pytest.raises(ModelError):
        provider.complete(message, GenerationParams())
    # No claim left behind: the next caller makes the call instead of waiting forever.
    assert provider.complete(message, GenerationParams()).text == "ok"
    assert provider.complete(message, GenerationParams()).cached
    assert len(cache) == 1
