"""The pure parts: download paths, back-off, long-poll waits, error envelopes."""

from __future__ import annotations

from pathlib import Path

import pytest

from dutil_client import InvalidRequestError
from dutil_client._core import backoff_seconds, output_path, poll_wait_seconds, retryable
from dutil_client._errors import request_error


def test_download_paths_stay_under_the_directory(tmp_path: Path) -> None:
    assert output_path(tmp_path, "a.pdf", None) == tmp_path / "a.pdf"
    assert output_path(tmp_path, "b.txt", "docs/b.txt") == tmp_path / "docs" / "b.txt"
    assert output_path(tmp_path, "c.txt", "/abs/c.txt") == tmp_path / "abs" / "c.txt"
    for evil in ("../x", "a/../../x", "..\\x", "C:/x", "docs/C:/x", "docs\\d:x", "/c:"):
        with pytest.raises(ValueError, match="outside"):
            output_path(tmp_path, "x", evil)


def test_backoff_doubles_with_jitter_up_to_8_s_and_honours_retry_after() -> None:
    assert 0.25 <= backoff_seconds(0, 0.5, None) <= 0.5
    assert 2.0 <= backoff_seconds(3, 0.5, None) <= 4.0
    assert 4.0 <= backoff_seconds(10, 0.5, None) <= 8.0
    assert backoff_seconds(0, 0.5, 12) == 12


def test_long_poll_waits_never_pass_60_s_or_the_deadline() -> None:
    assert poll_wait_seconds(None, 0, None) == 60
    assert poll_wait_seconds(None, 0, 120) == 60
    assert poll_wait_seconds(None, 0, 2) == 2
    assert poll_wait_seconds(100.0, 95.5, None) == 4
    assert poll_wait_seconds(100.0, 101.0, None) == 0


def test_only_error_envelopes_of_5xx_and_429_are_retried() -> None:
    assert retryable(503, {"error": {"code": "internal"}})
    assert retryable(429, None)
    assert not retryable(502, {"object": "job", "status": "failed"})
    assert not retryable(400, {"error": {"code": "invalid_request"}})


def test_an_envelope_becomes_its_typed_error_and_odd_bodies_still_raise() -> None:
    body = {"error": {"code": "invalid_request", "message": "bad", "details": [{"path": "input.url", "message": "x"}]}}
    err = request_error(400, body, {"x-request-id": "req_9"})
    assert isinstance(err, InvalidRequestError)
    assert (err.details[0].path, err.request_id) == ("input.url", "req_9")
    odd = request_error(502, "<html>bad gateway</html>", {})
    assert (odd.code, odd.message, odd.status) == ("http_502", "HTTP 502", 502)
