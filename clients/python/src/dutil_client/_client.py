"""The sync and async clients. Both do the same requests; _core.py holds what they share."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel

from . import _core
from ._errors import DutilConnectionError, RateLimitedError, WaitTimeoutError, request_error, retry_after_seconds
from ._models import CatalogEntry, Job, JobList, JobStatus, JobSummary, Upload, UploadList, Utility, UtilityList

Input = BaseModel | Mapping[str, Any]
Answer = tuple[int, Any, httpx.Headers]


def _settings(base_url: str | None, api_key: str | None) -> tuple[str, str]:
    url = (base_url or os.environ.get("DUTIL_URL") or "http://127.0.0.1:8080").rstrip("/")
    key = api_key or os.environ.get("DUTIL_API_KEY")
    if not key:
        raise ValueError("an API key is needed: pass api_key= or set DUTIL_API_KEY (du_live_...)")
    return url, key


def _headers(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}", "User-Agent": _core.USER_AGENT, "Accept": "application/json"}


def _timeout(seconds: float | None, extra: float) -> httpx.Timeout:
    return httpx.Timeout(None if seconds is None else seconds + extra)


def _list_params(utility: str | None, status: str | None, page_size: int | None, cursor: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if utility:
        params["utility"] = utility
    if status:
        params["status"] = status
    if page_size:
        params["limit"] = page_size
    if cursor:
        params["cursor"] = cursor
    return params


class Client:
    """A typed client for the dutil API.

    Every method returns what the API answered or raises a typed error: DutilRequestError
    subclasses for the error envelope (RateLimitedError carries ``retry_after``), JobFailedError
    for a job that ran and failed, DutilConnectionError when the server cannot be reached.

    Requests that could not reach the API, or got a 5xx or 429 error envelope, are retried
    ``max_retries`` times with exponential back-off and jitter (a Retry-After is honoured). Reads
    and cancels are retried; so are creates, which always carry an Idempotency-Key (one is made
    when you give none), so a retry never makes a second job. ``timeout`` (seconds) bounds each
    HTTP request; a long-poll's own wait is added to it. A sync ``run()`` may wait 90 s for its
    answer: give more than that, or none (the default).
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        max_retries: int = 2,
        retry_base: float = 0.5,
        timeout: float | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url, key = _settings(base_url, api_key)
        self.max_retries = max_retries
        self.retry_base = retry_base
        self.timeout = timeout
        self._http = httpx.Client(base_url=self.base_url, headers=_headers(key), transport=transport)
        # Download links are presigned: they go to storage without the API key.
        self._files = httpx.Client(headers={"User-Agent": _core.USER_AGENT}, transport=transport)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()
        self._files.close()

    def run(
        self,
        utility: Utility,
        input: Input,
        *,
        metadata: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
        request_id: str | None = None,
        wait_timeout: float | None = None,
        on_update: Callable[[Job], None] | None = None,
        max_retries: int | None = None,
        request_timeout: float | None = None,
    ) -> Job:
        """Runs a utility and returns the succeeded job. Uses the sync route; when the server
        answers 202 (still running after 90 s) it long-polls the job until it finishes. Raises
        JobFailedError when the job failed."""
        path, body, headers = _core.start_request(
            utility,
            input,
            wait_for_result=True,
            metadata=metadata,
            callback_url=None,
            idempotency_key=idempotency_key,
            request_id=request_id,
        )
        status, answer, response_headers = self._call("POST", path, body, headers, max_retries, request_timeout)
        job = _core.job_of(status, answer, response_headers)
        if status == 202 or job.status not in _core.TERMINAL:
            return self.wait(job.id, timeout=wait_timeout, on_update=on_update, max_retries=max_retries)
        return _core.finished(job)

    def submit(
        self,
        utility: Utility,
        input: Input,
        *,
        callback_url: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
        request_id: str | None = None,
        max_retries: int | None = None,
        request_timeout: float | None = None,
    ) -> Job:
        """Starts a utility as an async job and returns the queued job at once."""
        path, body, headers = _core.start_request(
            utility,
            input,
            wait_for_result=False,
            metadata=metadata,
            callback_url=callback_url,
            idempotency_key=idempotency_key,
            request_id=request_id,
        )
        return _core.job_of(*self._call("POST", path, body, headers, max_retries, request_timeout))

    def get(
        self,
        job_id: str,
        *,
        wait_seconds: int | None = None,
        max_retries: int | None = None,
        request_timeout: float | None = None,
    ) -> Job:
        """The job now; with ``wait_seconds`` (1-60) the API answers when it finishes or changes."""
        params = {"wait": wait_seconds} if wait_seconds else None
        return _core.job_of(
            *self._call(
                "GET", f"/v1/jobs/{job_id}", None, None, max_retries, request_timeout, params, wait_seconds or 0
            )
        )

    def wait(
        self,
        job_id: str,
        *,
        timeout: float | None = None,
        on_update: Callable[[Job], None] | None = None,
        poll_seconds: int | None = None,
        max_retries: int | None = None,
        request_timeout: float | None = None,
    ) -> Job:
        """Long-polls a job until it finishes: returns it when it succeeded, raises JobFailedError
        when it failed or was cancelled, WaitTimeoutError after ``timeout`` seconds (the job goes on)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = _core.poll_wait_seconds(deadline, time.monotonic(), poll_seconds)
            try:
                job = self.get(job_id, wait_seconds=wait, max_retries=max_retries, request_timeout=request_timeout)
            except RateLimitedError as err:
                time.sleep(err.retry_after or 1)
                continue
            if on_update:
                on_update(job)
            if job.status in _core.TERMINAL:
                return _core.finished(job)
            if deadline is not None and time.monotonic() >= deadline:
                raise WaitTimeoutError(job)
            if wait == 0:
                time.sleep(min(1.0, max(0.0, (deadline or float("inf")) - time.monotonic())))

    def list_jobs(
        self,
        *,
        utility: Utility | None = None,
        status: JobStatus | None = None,
        page_size: int | None = None,
    ) -> Iterator[JobSummary]:
        """This key's jobs, newest first, following ``nextCursor`` page by page."""
        cursor: str | None = None
        while True:
            params = _list_params(utility, status, page_size, cursor)
            code, body, headers = self._call("GET", "/v1/jobs", None, None, None, None, params)
            if code != 200:
                raise request_error(code, body, headers)
            page = JobList.model_validate(body)
            yield from page.items
            cursor = page.nextCursor
            if not cursor:
                return

    def cancel(self, job_id: str, *, max_retries: int | None = None) -> Job:
        """Cancels a queued job (a running or finished one: ConflictError). Cancelling twice is harmless."""
        return _core.job_of(*self._call("POST", f"/v1/jobs/{job_id}/cancel", None, None, max_retries))

    def utilities(self) -> list[CatalogEntry]:
        """The utilities this key may call."""
        code, body, headers = self._call("GET", "/v1/utilities")
        if code != 200:
            raise request_error(code, body, headers)
        return UtilityList.model_validate(body).items

    def upload_file(
        self,
        source: _core.FileSource,
        *,
        name: str | None = None,
        expires_in_seconds: int | None = None,
        max_retries: int | None = None,
        request_timeout: float | None = None,
        direct: bool | None = None,
        on_progress: Callable[[int, int | None], None] | None = None,
    ) -> Upload:
        """Uploads a file for this key's jobs: a local path (streamed from disk), bytes, or a binary
        file object. Returns the upload; its ``url`` is the s3:// name a job's input takes. A path
        and bytes are sent again on a retry; a file object once, unless it can seek back.

        A path or bytes larger than 32 MiB (or any, with ``direct=True``) go straight to storage
        as a direct upload: announced, sent in parts to presigned URLs, then completed.
        ``on_progress(sent, total)`` is called after each part (once at the end otherwise)."""
        size = _core.direct_size(source, direct)
        if size is not None:
            return self._upload_direct(
                source, size, name, expires_in_seconds, max_retries, request_timeout, on_progress
            )
        content, repeatable = _core.upload_body(source)
        code, body, headers = self._call(
            "POST",
            "/v1/files",
            None,
            {"Content-Type": "application/octet-stream"},
            max_retries if repeatable else 0,
            request_timeout,
            _core.upload_params(source, name, expires_in_seconds),
            content=content,
        )
        if code != 201:
            raise request_error(code, body, headers)
        upload = Upload.model_validate(body)
        if on_progress:
            on_progress(upload.size, upload.size)
        return upload

    def _upload_direct(
        self,
        source: _core.FileSource,
        size: int,
        name: str | None,
        expires_in_seconds: int | None,
        max_retries: int | None,
        request_timeout: float | None,
        on_progress: Callable[[int, int | None], None] | None,
    ) -> Upload:
        params = {**_core.upload_params(source, name, expires_in_seconds), "size": size}
        code, offer, headers = self._call("POST", "/v1/files", None, None, max_retries, request_timeout, params)
        if code != 201:
            raise request_error(code, offer, headers)
        parts: list[dict[str, Any]] = []
        sent = 0
        for part in offer["parts"]:
            start, length = _core.part_range(offer, part["partNumber"])
            data = _core.part_bytes(source, start, length)
            response = self._put_part(part["url"], data, max_retries, request_timeout)
            parts.append({"partNumber": part["partNumber"], "etag": response.headers.get("etag", "")})
            sent += length
            if on_progress:
                on_progress(sent, size)
        code, body, headers = self._call(
            "POST", offer["completeUrl"], {"parts": parts}, None, max_retries, request_timeout
        )
        if code != 200:
            raise request_error(code, body, headers)
        return Upload.model_validate(body)

    def _put_part(
        self, url: str, data: bytes, max_retries: int | None, request_timeout: float | None
    ) -> httpx.Response:
        retries = self.max_retries if max_retries is None else max_retries
        for attempt in range(retries + 1):
            try:
                response = self._files.put(url, content=data, timeout=_timeout(request_timeout or self.timeout, 0))
            except httpx.TransportError as err:
                if attempt >= retries:
                    raise DutilConnectionError(f"sending a part failed: {err}") from err
            else:
                if response.status_code == 200:
                    return response
                if response.status_code < 500 or attempt >= retries:
                    raise DutilConnectionError(f"sending a part failed: HTTP {response.status_code}")
            time.sleep(_core.backoff_seconds(attempt, self.retry_base, None))
        raise DutilConnectionError("sending a part failed")

    def get_file(self, file_id: str) -> Upload:
        """One of this key's unexpired uploads (NotFoundError for another key's, a deleted or an expired one)."""
        code, body, headers = self._call("GET", f"/v1/files/{file_id}")
        if code != 200:
            raise request_error(code, body, headers)
        return Upload.model_validate(body)

    def list_files(self, *, page_size: int | None = None) -> Iterator[Upload]:
        """This key's unexpired uploads, newest first, following ``nextCursor`` page by page."""
        cursor: str | None = None
        while True:
            params = _list_params(None, None, page_size, cursor)
            code, body, headers = self._call("GET", "/v1/files", None, None, None, None, params)
            if code != 200:
                raise request_error(code, body, headers)
            page = UploadList.model_validate(body)
            yield from page.items
            cursor = page.nextCursor
            if not cursor:
                return

    def delete_file(self, file_id: str) -> None:
        """Deletes an upload now: jobs can no longer name it."""
        code, body, headers = self._call("DELETE", f"/v1/files/{file_id}")
        if code != 204:
            raise request_error(code, body, headers)

    def run_file(
        self,
        utility: Utility,
        source: _core.FileSource,
        input: Mapping[str, Any] | None = None,
        *,
        name: str | None = None,
        expires_in_seconds: int | None = None,
        **run_options: Any,
    ) -> Job:
        """Runs a utility on a local file in one call: uploads it, then runs the utility with the
        upload as its ``url`` (and ``input``'s other fields). Returns the succeeded job."""
        file = self.upload_file(source, name=name, expires_in_seconds=expires_in_seconds)
        return self.run(utility, {**dict(input or {}), "url": file.url}, **run_options)

    def download(self, job: Job, directory: str | os.PathLike[str]) -> list[Path]:
        """Saves a succeeded job's files under ``directory`` (an unzipped entry at its path inside
        the archive) and returns their paths. The links are presigned and expire: fetch the job
        again (``get``) for fresh ones."""
        saved: list[Path] = []
        for f in job.result.files if job.result else []:
            target = _core.output_path(directory, f.name, f.path)
            target.parent.mkdir(parents=True, exist_ok=True)
            with self._files.stream("GET", f.url, timeout=_timeout(self.timeout, 0)) as response:
                if response.status_code != 200:
                    raise DutilConnectionError(f"downloading {f.name} failed: HTTP {response.status_code}")
                with open(target, "wb") as out:
                    for chunk in response.iter_bytes():
                        out.write(chunk)
            saved.append(target)
        return saved

    def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        max_retries: int | None = None,
        request_timeout: float | None = None,
        params: Mapping[str, Any] | None = None,
        extra_seconds: float = 0,
        content: Callable[[], Any] | None = None,
    ) -> Answer:
        retries = self.max_retries if max_retries is None else max_retries
        timeout = self.timeout if request_timeout is None else request_timeout
        attempt = 0
        while True:
            answer: Answer | None = None
            try:
                response = self._http.request(
                    method,
                    path,
                    json=body,
                    content=content() if content else None,
                    headers=headers,
                    params=params,
                    timeout=_timeout(timeout, extra_seconds),
                )
                answer = (response.status_code, _core.parse_body(response.content), response.headers)
            except httpx.TransportError as err:
                if attempt >= retries:
                    raise _core.connection_error(self.base_url, err, timeout) from err
            if answer is not None and not _core.retryable(answer[0], answer[1]):
                return answer
            if answer is not None and attempt >= retries:
                return answer
            time.sleep(
                _core.backoff_seconds(attempt, self.retry_base, retry_after_seconds(answer[2]) if answer else None)
            )
            attempt += 1


class AsyncClient:
    """The asyncio twin of :class:`Client`: the same methods, awaited (``list_jobs`` is an async iterator).
    Cancel a call by cancelling its task."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        max_retries: int = 2,
        retry_base: float = 0.5,
        timeout: float | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url, key = _settings(base_url, api_key)
        self.max_retries = max_retries
        self.retry_base = retry_base
        self.timeout = timeout
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=_headers(key), transport=transport)
        self._files = httpx.AsyncClient(headers={"User-Agent": _core.USER_AGENT}, transport=transport)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()
        await self._files.aclose()

    async def run(
        self,
        utility: Utility,
        input: Input,
        *,
        metadata: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
        request_id: str | None = None,
        wait_timeout: float | None = None,
        on_update: Callable[[Job], None | Awaitable[None]] | None = None,
        max_retries: int | None = None,
        request_timeout: float | None = None,
    ) -> Job:
        """See :meth:`Client.run`."""
        path, body, headers = _core.start_request(
            utility,
            input,
            wait_for_result=True,
            metadata=metadata,
            callback_url=None,
            idempotency_key=idempotency_key,
            request_id=request_id,
        )
        status, answer, response_headers = await self._call("POST", path, body, headers, max_retries, request_timeout)
        job = _core.job_of(status, answer, response_headers)
        if status == 202 or job.status not in _core.TERMINAL:
            return await self.wait(job.id, timeout=wait_timeout, on_update=on_update, max_retries=max_retries)
        return _core.finished(job)

    async def submit(
        self,
        utility: Utility,
        input: Input,
        *,
        callback_url: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
        request_id: str | None = None,
        max_retries: int | None = None,
        request_timeout: float | None = None,
    ) -> Job:
        """See :meth:`Client.submit`."""
        path, body, headers = _core.start_request(
            utility,
            input,
            wait_for_result=False,
            metadata=metadata,
            callback_url=callback_url,
            idempotency_key=idempotency_key,
            request_id=request_id,
        )
        return _core.job_of(*await self._call("POST", path, body, headers, max_retries, request_timeout))

    async def get(
        self,
        job_id: str,
        *,
        wait_seconds: int | None = None,
        max_retries: int | None = None,
        request_timeout: float | None = None,
    ) -> Job:
        """See :meth:`Client.get`."""
        params = {"wait": wait_seconds} if wait_seconds else None
        return _core.job_of(
            *await self._call(
                "GET", f"/v1/jobs/{job_id}", None, None, max_retries, request_timeout, params, wait_seconds or 0
            )
        )

    async def wait(
        self,
        job_id: str,
        *,
        timeout: float | None = None,
        on_update: Callable[[Job], None | Awaitable[None]] | None = None,
        poll_seconds: int | None = None,
        max_retries: int | None = None,
        request_timeout: float | None = None,
    ) -> Job:
        """See :meth:`Client.wait`; ``on_update`` may be a coroutine function."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = _core.poll_wait_seconds(deadline, time.monotonic(), poll_seconds)
            try:
                job = await self.get(
                    job_id, wait_seconds=wait, max_retries=max_retries, request_timeout=request_timeout
                )
            except RateLimitedError as err:
                await asyncio.sleep(err.retry_after or 1)
                continue
            if on_update:
                pending = on_update(job)
                if pending is not None:
                    await pending
            if job.status in _core.TERMINAL:
                return _core.finished(job)
            if deadline is not None and time.monotonic() >= deadline:
                raise WaitTimeoutError(job)
            if wait == 0:
                await asyncio.sleep(min(1.0, max(0.0, (deadline or float("inf")) - time.monotonic())))

    async def list_jobs(
        self,
        *,
        utility: Utility | None = None,
        status: JobStatus | None = None,
        page_size: int | None = None,
    ) -> AsyncIterator[JobSummary]:
        """See :meth:`Client.list_jobs`."""
        cursor: str | None = None
        while True:
            params = _list_params(utility, status, page_size, cursor)
            code, body, headers = await self._call("GET", "/v1/jobs", None, None, None, None, params)
            if code != 200:
                raise request_error(code, body, headers)
            page = JobList.model_validate(body)
            for item in page.items:
                yield item
            cursor = page.nextCursor
            if not cursor:
                return

    async def cancel(self, job_id: str, *, max_retries: int | None = None) -> Job:
        """See :meth:`Client.cancel`."""
        return _core.job_of(*await self._call("POST", f"/v1/jobs/{job_id}/cancel", None, None, max_retries))

    async def utilities(self) -> list[CatalogEntry]:
        """See :meth:`Client.utilities`."""
        code, body, headers = await self._call("GET", "/v1/utilities")
        if code != 200:
            raise request_error(code, body, headers)
        return UtilityList.model_validate(body).items

    async def upload_file(
        self,
        source: _core.FileSource,
        *,
        name: str | None = None,
        expires_in_seconds: int | None = None,
        max_retries: int | None = None,
        request_timeout: float | None = None,
        direct: bool | None = None,
        on_progress: Callable[[int, int | None], None] | None = None,
    ) -> Upload:
        """See :meth:`Client.upload_file`."""
        size = _core.direct_size(source, direct)
        if size is not None:
            return await self._upload_direct(
                source, size, name, expires_in_seconds, max_retries, request_timeout, on_progress
            )
        content, repeatable = _core.upload_body_async(source)
        code, body, headers = await self._call(
            "POST",
            "/v1/files",
            None,
            {"Content-Type": "application/octet-stream"},
            max_retries if repeatable else 0,
            request_timeout,
            _core.upload_params(source, name, expires_in_seconds),
            content=content,
        )
        if code != 201:
            raise request_error(code, body, headers)
        upload = Upload.model_validate(body)
        if on_progress:
            on_progress(upload.size, upload.size)
        return upload

    async def _upload_direct(
        self,
        source: _core.FileSource,
        size: int,
        name: str | None,
        expires_in_seconds: int | None,
        max_retries: int | None,
        request_timeout: float | None,
        on_progress: Callable[[int, int | None], None] | None,
    ) -> Upload:
        params = {**_core.upload_params(source, name, expires_in_seconds), "size": size}
        code, offer, headers = await self._call("POST", "/v1/files", None, None, max_retries, request_timeout, params)
        if code != 201:
            raise request_error(code, offer, headers)
        parts: list[dict[str, Any]] = []
        sent = 0
        for part in offer["parts"]:
            start, length = _core.part_range(offer, part["partNumber"])
            data = _core.part_bytes(source, start, length)
            response = await self._put_part(part["url"], data, max_retries, request_timeout)
            parts.append({"partNumber": part["partNumber"], "etag": response.headers.get("etag", "")})
            sent += length
            if on_progress:
                on_progress(sent, size)
        code, body, headers = await self._call(
            "POST", offer["completeUrl"], {"parts": parts}, None, max_retries, request_timeout
        )
        if code != 200:
            raise request_error(code, body, headers)
        return Upload.model_validate(body)

    async def _put_part(
        self, url: str, data: bytes, max_retries: int | None, request_timeout: float | None
    ) -> httpx.Response:
        retries = self.max_retries if max_retries is None else max_retries
        for attempt in range(retries + 1):
            try:
                response = await self._files.put(
                    url, content=data, timeout=_timeout(request_timeout or self.timeout, 0)
                )
            except httpx.TransportError as err:
                if attempt >= retries:
                    raise DutilConnectionError(f"sending a part failed: {err}") from err
            else:
                if response.status_code == 200:
                    return response
                if response.status_code < 500 or attempt >= retries:
                    raise DutilConnectionError(f"sending a part failed: HTTP {response.status_code}")
            await asyncio.sleep(_core.backoff_seconds(attempt, self.retry_base, None))
        raise DutilConnectionError("sending a part failed")

    async def get_file(self, file_id: str) -> Upload:
        """See :meth:`Client.get_file`."""
        code, body, headers = await self._call("GET", f"/v1/files/{file_id}")
        if code != 200:
            raise request_error(code, body, headers)
        return Upload.model_validate(body)

    async def list_files(self, *, page_size: int | None = None) -> AsyncIterator[Upload]:
        """See :meth:`Client.list_files`."""
        cursor: str | None = None
        while True:
            params = _list_params(None, None, page_size, cursor)
            code, body, headers = await self._call("GET", "/v1/files", None, None, None, None, params)
            if code != 200:
                raise request_error(code, body, headers)
            page = UploadList.model_validate(body)
            for item in page.items:
                yield item
            cursor = page.nextCursor
            if not cursor:
                return

    async def delete_file(self, file_id: str) -> None:
        """See :meth:`Client.delete_file`."""
        code, body, headers = await self._call("DELETE", f"/v1/files/{file_id}")
        if code != 204:
            raise request_error(code, body, headers)

    async def run_file(
        self,
        utility: Utility,
        source: _core.FileSource,
        input: Mapping[str, Any] | None = None,
        *,
        name: str | None = None,
        expires_in_seconds: int | None = None,
        **run_options: Any,
    ) -> Job:
        """See :meth:`Client.run_file`."""
        file = await self.upload_file(source, name=name, expires_in_seconds=expires_in_seconds)
        return await self.run(utility, {**dict(input or {}), "url": file.url}, **run_options)

    async def download(self, job: Job, directory: str | os.PathLike[str]) -> list[Path]:
        """See :meth:`Client.download`."""
        saved: list[Path] = []
        for f in job.result.files if job.result else []:
            target = _core.output_path(directory, f.name, f.path)
            target.parent.mkdir(parents=True, exist_ok=True)
            async with self._files.stream("GET", f.url, timeout=_timeout(self.timeout, 0)) as response:
                if response.status_code != 200:
                    raise DutilConnectionError(f"downloading {f.name} failed: HTTP {response.status_code}")
                with open(target, "wb") as out:
                    async for chunk in response.aiter_bytes():
                        out.write(chunk)
            saved.append(target)
        return saved

    async def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        max_retries: int | None = None,
        request_timeout: float | None = None,
        params: Mapping[str, Any] | None = None,
        extra_seconds: float = 0,
        content: Callable[[], Any] | None = None,
    ) -> Answer:
        retries = self.max_retries if max_retries is None else max_retries
        timeout = self.timeout if request_timeout is None else request_timeout
        attempt = 0
        while True:
            answer: Answer | None = None
            try:
                response = await self._http.request(
                    method,
                    path,
                    json=body,
                    content=content() if content else None,
                    headers=headers,
                    params=params,
                    timeout=_timeout(timeout, extra_seconds),
                )
                answer = (response.status_code, _core.parse_body(response.content), response.headers)
            except httpx.TransportError as err:
                if attempt >= retries:
                    raise _core.connection_error(self.base_url, err, timeout) from err
            if answer is not None and not _core.retryable(answer[0], answer[1]):
                return answer
            if answer is not None and attempt >= retries:
                return answer
            await asyncio.sleep(
                _core.backoff_seconds(attempt, self.retry_base, retry_after_seconds(answer[2]) if answer else None)
            )
            attempt += 1
