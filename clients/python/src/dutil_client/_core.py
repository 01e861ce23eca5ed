"""What the sync and the async client share: building requests, reading answers, retry timing."""

from __future__ import annotations

import json
import os
import re
import random
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel

from ._errors import DutilConnectionError, JobFailedError, request_error
from ._models import Job

TERMINAL = frozenset({"succeeded", "failed", "cancelled"})
LONG_POLL_SECONDS = 60
"""The API's longest long-poll (``GET /v1/jobs/{id}?wait=``)."""
MAX_BACKOFF_SECONDS = 8.0
USER_AGENT = "dutil-python/0.1.0"


def input_json(value: BaseModel | Mapping[str, Any]) -> Any:
    """A utility input as JSON: a generated input model (unset fields left out) or a plain mapping."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    return dict(value)


def start_request(
    utility: str,
    value: BaseModel | Mapping[str, Any],
    *,
    wait_for_result: bool,
    metadata: Mapping[str, Any] | None,
    callback_url: str | None,
    idempotency_key: str | None,
    request_id: str | None,
) -> tuple[str, dict[str, Any], dict[str, str]]:
    """Path, body and headers of a create. Every create carries an Idempotency-Key, so that a retry
    (ours or the caller's) returns the same job instead of making a second one."""
    body: dict[str, Any] = {"input": input_json(value)}
    if metadata is not None:
        body["metadata"] = dict(metadata)
    if callback_url is not None:
        body["callbackUrl"] = callback_url
    headers = {"Idempotency-Key": idempotency_key or str(uuid.uuid4())}
    if request_id:
        headers["X-Request-Id"] = request_id
    path = f"/v1/utilities/{utility}" if wait_for_result else f"/v1/utilities/{utility}/jobs"
    return path, body, headers


def parse_body(content: bytes) -> Any:
    try:
        return json.loads(content) if content else None
    except ValueError:
        return None


def is_job(body: Any) -> bool:
    return isinstance(body, dict) and body.get("object") == "job"


def retryable(status: int, body: Any) -> bool:
    """A 5xx or 429 error envelope is worth another attempt; a failed job's answer (a job body,
    whatever its status) is an answer."""
    return (status >= 500 or status == 429) and not is_job(body)


def backoff_seconds(attempt: int, base: float, retry_after: float | None) -> float:
    """The wait before retry ``attempt + 1``: the server's Retry-After, else exponential with jitter."""
    if retry_after is not None and retry_after > 0:
        return retry_after
    delay: float = min(MAX_BACKOFF_SECONDS, base * 2.0**attempt) * (0.5 + random.random() / 2)
    return delay


def job_of(status: int, body: Any, headers: Mapping[str, str]) -> Job:
    """The job of a 2xx answer (and of a failed sync run, whose body is the failed job)."""
    if is_job(body):
        return Job.model_validate(body)
    raise request_error(status, body, headers)


def finished(job: Job) -> Job:
    if job.status == "succeeded":
        return job
    raise JobFailedError(job)


def poll_wait_seconds(deadline: float | None, now: float, poll_seconds: int | None) -> int:
    """One long-poll's ``wait``: at most the API's 60 s, the caller's poll, and the time left."""
    longest = min(poll_seconds if poll_seconds is not None else LONG_POLL_SECONDS, LONG_POLL_SECONDS)
    if deadline is not None:
        longest = min(longest, int(max(0.0, deadline - now)))
    return max(0, longest)


def connection_error(base_url: str, err: Exception, timeout: float | None) -> DutilConnectionError:
    import httpx

    timed_out = isinstance(err, httpx.TimeoutException)
    within = f" within {timeout:g} s" if timed_out and timeout is not None else ""
    return DutilConnectionError(f"The dutil API at {base_url} could not be reached{within}: {err}")


_DRIVE = re.compile(r"^[A-Za-z]:")


def output_path(directory: str | os.PathLike[str], name: str, entry_path: str | None) -> Path:
    """A file's place under ``directory``: its path inside an unzipped archive, or its name; never outside."""
    rel = PurePosixPath((entry_path or name).replace("\\", "/").lstrip("/"))
    # A drive letter anywhere ("docs/C:/x") would restart the path at that drive on Windows.
    if not rel.parts or any(part == ".." or _DRIVE.match(part) for part in rel.parts):
        raise ValueError(f"refusing to write {entry_path or name!r} outside {directory}")
    return Path(directory).joinpath(*rel.parts)


FileSource = str | os.PathLike[str] | bytes | bytearray | Any
"""A file to upload: a local path, its bytes, or a binary file object (anything with ``read``)."""


def upload_name(source: Any, name: str | None) -> str:
    """The name an upload goes by: the one given, a path's last segment, else ``file``."""
    if name:
        return name
    if isinstance(source, (str, os.PathLike)):
        return Path(source).name or "file"
    return "file"


def upload_params(source: Any, name: str | None, expires_in_seconds: int | None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": upload_name(source, name)}
    if expires_in_seconds is not None:
        params["expiresInSeconds"] = expires_in_seconds
    return params


UPLOAD_CHUNK = 1024 * 1024

DIRECT_UPLOAD_THRESHOLD = 32 * 1024 * 1024
"""Paths and bytes larger than this (32 MiB) go straight to storage by default (a direct upload)."""


def direct_size(source: Any, direct: bool | None) -> int | None:
    """The size of a path or bytes that go as a direct upload, else None (a file object, or a file
    small enough to go through the API in one request)."""
    if isinstance(source, (str, os.PathLike)):
        size = os.path.getsize(os.fspath(source))
    elif isinstance(source, (bytes, bytearray, memoryview)):
        size = len(source)
    else:
        return None
    use = direct if direct is not None else size > DIRECT_UPLOAD_THRESHOLD
    return size if use and size > 0 else None


def part_bytes(source: Any, start: int, length: int) -> bytes:
    """One part of a direct upload: read from its place on disk, or cut from the bytes."""
    if isinstance(source, (str, os.PathLike)):
        with open(os.fspath(source), "rb") as f:
            f.seek(start)
            return f.read(length)
    return bytes(source[start : start + length])


def part_range(offer: Mapping[str, Any], part_number: int) -> tuple[int, int]:
    """Where a part starts and how long it is."""
    start = (part_number - 1) * int(offer["partSize"])
    return start, min(int(offer["size"]) - start, int(offer["partSize"]))


def upload_body(source: Any) -> tuple[Callable[[], Any], bool]:
    """A fresh request body for each attempt of an upload, and whether a retry may send it again:
    a path is read from disk in chunks (never whole), bytes as they are, a file object from where
    it stood (once, unless it can seek back)."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)

        def chunks() -> Iterator[bytes]:
            with open(path, "rb") as f:
                while chunk := f.read(UPLOAD_CHUNK):
                    yield chunk

        return chunks, True
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        return (lambda: data), True
    if getattr(source, "seekable", lambda: False)():
        start = source.tell()

        def again() -> Any:
            source.seek(start)
            return source

        return again, True
    return (lambda: source), False


def upload_body_async(source: Any) -> tuple[Callable[[], Any], bool]:
    """:func:`upload_body` for the async client, whose bodies are bytes or async iterators."""
    body, repeatable = upload_body(source)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return body, repeatable

    def chunks() -> AsyncIterator[bytes]:
        async def read() -> AsyncIterator[bytes]:
            made = body()
            if hasattr(made, "read"):
                while chunk := made.read(UPLOAD_CHUNK):
                    yield chunk
            else:
                for chunk in made:
                    yield chunk

        return read()

    return chunks, repeatable
