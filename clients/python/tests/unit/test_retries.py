"""Retries, idempotency keys and typed errors, against a scripted transport (no server)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from dutil_client import (
    AsyncClient,
    Client,
    DutilConnectionError,
    InternalError,
    JobFailedError,
    RateLimitedError,
    SplitPdfInput,
)

JOB: dict[str, Any] = {
    "id": "job_01ARZ3NDEKTSV4RRFFQ69G5FAV",
    "object": "job",
    "utility": "split-pdf",
    "mode": "async",
    "status": "queued",
    "createdAt": "2026-11-26T10:00:00.000Z",
    "startedAt": None,
    "finishedAt": None,
    "timings": {"queueMs": None, "upstreamMs": None, "storageMs": None, "totalMs": None},
    "progress": None,
    "metadata": None,
    "result": None,
    "error": None,
    "callback": None,
    "links": {"self": "/v1/jobs/job_01ARZ3NDEKTSV4RRFFQ69G5FAV"},
}
ENVELOPE = {"error": {"code": "internal", "message": "boom", "requestId": "req_1"}}

Step = Callable[[httpx.Request], httpx.Response]


def scripted(*steps: Step) -> tuple[list[httpx.Request], httpx.MockTransport]:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return steps[min(len(seen), len(steps)) - 1](request)

    return seen, httpx.MockTransport(handle)


def answer(status: int, body: Any, headers: dict[str, str] | None = None) -> Step:
    return lambda _: httpx.Response(status, json=body, headers=headers)


def unreachable(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("connection refused", request=request)


def client(transport: httpx.MockTransport, **kw: Any) -> Client:
    return Client("http://api.test", "du_live_x", transport=transport, retry_base=0.001, **kw)


def test_a_create_is_retried_on_5xx_and_connection_errors_with_one_idempotency_key() -> None:
    seen, transport = scripted(answer(503, ENVELOPE), unreachable, answer(202, JOB))
    job = client(transport).submit("split-pdf", SplitPdfInput(url="https://example.com/a.pdf"))
    assert job.id == JOB["id"]
    assert len(seen) == 3
    keys = {r.headers["idempotency-key"] for r in seen}
    assert len(keys) == 1 and len(keys.pop()) == 36
    assert json.loads(seen[0].content) == {"input": {"url": "https://example.com/a.pdf"}}
    assert seen[0].headers["authorization"] == "Bearer du_live_x"


def test_the_callers_idempotency_key_is_sent_as_given() -> None:
    seen, transport = scripted(answer(202, JOB))
    client(transport).submit("split-pdf", {"url": "https://example.com/a.pdf"}, idempotency_key="order-7")
    assert seen[0].headers["idempotency-key"] == "order-7"


def test_retries_end_with_the_typed_error_of_the_last_answer() -> None:
    seen, transport = scripted(answer(500, ENVELOPE))
    with pytest.raises(InternalError) as err:
        client(transport, max_retries=3).get(JOB["id"])
    assert len(seen) == 4
    assert (err.value.status, err.value.code, err.value.request_id) == (500, "internal", "req_1")


def test_an_unreachable_server_is_a_connection_error_after_the_retries() -> None:
    seen, transport = scripted(unreachable)
    with pytest.raises(DutilConnectionError) as err:
        client(transport, max_retries=2).utilities()
    assert len(seen) == 3
    assert "http://api.test could not be reached" in str(err.value)


def test_a_failed_jobs_answer_is_not_retried() -> None:
    failed = {**JOB, "mode": "sync", "status": "failed", "error": {"code": "upstream_error", "message": "502"}}
    seen, transport = scripted(answer(502, failed))
    with pytest.raises(JobFailedError) as err:
        client(transport).run("split-pdf", {"url": "https://example.com/a.pdf"})
    assert len(seen) == 1
    assert err.value.code == "upstream_error"


def test_429_waits_retry_after_and_zero_retries_raise_it() -> None:
    limited = {"error": {"code": "rate_limited", "message": "slow down"}}
    _, transport = scripted(answer(429, limited, {"Retry-After": "7"}))
    with pytest.raises(RateLimitedError) as err:
        client(transport, max_retries=0).utilities()
    assert err.value.retry_after == 7


def test_a_request_timeout_is_a_connection_error_that_says_so() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    _, transport = scripted(slow)
    with pytest.raises(DutilConnectionError, match=r"within 2 s"):
        client(transport, max_retries=0, timeout=2).get(JOB["id"])


def test_wait_long_polls_until_the_job_finishes() -> None:
    running = {**JOB, "status": "running"}
    done = {**JOB, "status": "succeeded", "result": {"files": []}}
    seen, transport = scripted(answer(200, running), answer(200, done))
    updates: list[str] = []
    job = client(transport).wait(JOB["id"], on_update=lambda j: updates.append(j.status))
    assert job.status == "succeeded"
    assert updates == ["running", "succeeded"]
    assert [r.url.params["wait"] for r in seen] == ["60", "60"]


def test_the_async_client_retries_the_same_way() -> None:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(503, json=ENVELOPE) if len(seen) == 1 else httpx.Response(202, json=JOB)

    async def main() -> str:
        async with AsyncClient(
            "http://api.test", "du_live_x", transport=httpx.MockTransport(handle), retry_base=0.001
        ) as c:
            return (await c.submit("split-pdf", {"url": "https://example.com/a.pdf"})).id

    assert asyncio.run(main()) == JOB["id"]
    assert len({r.headers["idempotency-key"] for r in seen}) == 1 and len(seen) == 2
