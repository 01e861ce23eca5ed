"""The errors the client raises. Branch on ``code``, never on the message (the API's own rule)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._models import ErrorDetail, Job


class DutilError(Exception):
    """Any error this client raises."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class DutilRequestError(DutilError):
    """The API refused the request and created no job (the error envelope): 400, 401, 403, 404, 409,
    429 or 500. ``retry_after`` (seconds) is set when the server said when to try again."""

    def __init__(
        self,
        message: str,
        code: str,
        status: int,
        details: list[ErrorDetail] | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, code)
        self.status = status
        self.details = details or []
        self.request_id = request_id
        self.retry_after = retry_after

    def __str__(self) -> str:
        lines = [f"{self.message} ({self.status} {self.code})"]
        lines += [f"  {d.path}: {d.message}" for d in self.details]
        return "\n".join(lines)


class InvalidRequestError(DutilRequestError):
    """400: the body, query or a header is not valid; ``details`` say where."""


class UnauthorizedError(DutilRequestError):
    """401: missing, unknown, revoked or expired API key."""


class ForbiddenError(DutilRequestError):
    """403: the key may not call this utility."""


class NotFoundError(DutilRequestError):
    """404: no such job (or not this key's)."""


class ConflictError(DutilRequestError):
    """409: e.g. cancelling a job that is no longer queued, or an Idempotency-Key reused with another body."""


class RateLimitedError(DutilRequestError):
    """429: wait ``retry_after`` seconds."""


class InternalError(DutilRequestError):
    """500: the server failed; ``request_id`` matches its logs."""


_BY_CODE: dict[str, type[DutilRequestError]] = {
    "invalid_request": InvalidRequestError,
    "unauthorized": UnauthorizedError,
    "forbidden": ForbiddenError,
    "not_found": NotFoundError,
    "conflict": ConflictError,
    "rate_limited": RateLimitedError,
    "internal": InternalError,
}


class JobFailedError(DutilError):
    """The job ran and failed (or was cancelled): ``job`` is the whole job, ``code`` its error code."""

    def __init__(self, job: Job) -> None:
        message = (
            f"{job.utility} job {job.id} failed: {job.error.message}"
            if job.error
            else f"{job.utility} job {job.id} was {job.status}"
        )
        super().__init__(message, job.error.code if job.error else job.status)
        self.job = job


class DutilConnectionError(DutilError):
    """The server could not be reached (or did not answer in time)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "connection")


class WaitTimeoutError(DutilError):
    """Waiting for a job took longer than the caller allowed; the job goes on."""

    def __init__(self, job: Job) -> None:
        super().__init__(f"job {job.id} is still {job.status}", "wait_timeout")
        self.job = job


def request_error(status: int, body: Any, headers: Mapping[str, str]) -> DutilRequestError:
    """The typed error for an error-envelope answer (or any answer that is not one)."""
    raw = body.get("error") if isinstance(body, dict) else None
    error: dict[str, Any] = raw if isinstance(raw, dict) else {}

    def text(name: str) -> str | None:
        value = error.get(name)
        return value if isinstance(value, str) else None

    code = text("code") or f"http_{status}"
    details = [
        ErrorDetail.model_validate(d)
        for d in (error.get("details") or [])
        if isinstance(d, dict) and isinstance(d.get("path"), str) and isinstance(d.get("message"), str)
    ]
    cls = _BY_CODE.get(code, DutilRequestError)
    return cls(
        text("message") or f"HTTP {status}",
        code,
        status,
        details,
        text("requestId") or headers.get("x-request-id"),
        retry_after_seconds(headers),
    )


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if value >= 0 else None
