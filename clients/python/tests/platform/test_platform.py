"""The Python client against a running dutil platform, as an API user's code sees it.

Run by `make test` (test/integration/python-client.test.ts), which starts nothing itself but hands
over, in the environment: the gateway (DUTIL_URL), a fresh API key and its signing secret, a file
server with the input files, and a certificate for a callback receiver on loopback.
"""

from __future__ import annotations

import asyncio
import hashlib
import http.server
import os
import ssl
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dutil_client import (
    AsyncClient,
    CallbackVerificationError,
    Client,
    ConflictError,
    DutilConnectionError,
    InvalidRequestError,
    Job,
    JobFailedError,
    NotFoundError,
    SplitPdfInput,
    UnauthorizedError,
    ZipFileEntry,
    ZipFilesInput,
    verify_callback,
)


def env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: these tests run against a platform (make test starts one)")
    return value


@pytest.fixture
def client() -> Iterator[Client]:
    with Client(env("DUTIL_URL"), env("DUTIL_API_KEY")) as c:
        yield c


def files(name: str) -> str:
    return f"{env('DUTIL_TEST_FILES')}/files/{name}"


def test_run_returns_the_succeeded_job_and_download_saves_its_files(client: Client, tmp_path: Path) -> None:
    job = client.run("split-pdf", SplitPdfInput(url=files("three.pdf")), metadata={"ticket": "T-9"})
    assert job.status == "succeeded"
    assert job.mode == "sync"
    assert job.metadata == {"ticket": "T-9"}
    assert job.result is not None and len(job.result.files) == 3
    saved = client.download(job, tmp_path / "pages")
    assert sorted(p.name for p in saved) == sorted(f.name for f in job.result.files)
    assert all(p.read_bytes().startswith(b"%PDF-") for p in saved)


def test_submit_and_wait_follow_an_async_job_with_its_progress(client: Client) -> None:
    slow = f"{env('DUTIL_TEST_FILES')}/slow/three.pdf?ms=1500"
    queued = client.submit("split-pdf", {"url": slow})
    assert (queued.status, queued.mode) == ("queued", "async")
    seen: list[Job] = []
    done = client.wait(queued.id, on_update=seen.append)
    assert done.status == "succeeded"
    assert done.progress is not None
    assert (done.progress.done, done.progress.total, done.progress.unit) == (3, 3, "pages")
    assert seen[-1].status == "succeeded"
    assert client.get(queued.id).id == queued.id
    assert queued.id in [j.id for j in client.list_jobs(utility="split-pdf", page_size=5)]


def test_a_failed_job_raises_job_failed_error_with_the_job(client: Client) -> None:
    with pytest.raises(JobFailedError) as failed:
        client.run("split-pdf", {"url": files("not.pdf")})
    assert failed.value.code == "upstream_rejected"
    assert failed.value.job.status == "failed"
    assert failed.value.job.error is not None and failed.value.job.error.code == "upstream_rejected"


def test_refusals_raise_a_typed_error_per_code(client: Client) -> None:
    with pytest.raises(InvalidRequestError) as invalid:
        client.run("split-pdf", {"url": "ftp://example.com/a.pdf"})
    assert invalid.value.status == 400
    assert "input.url" in [d.path for d in invalid.value.details]
    with pytest.raises(NotFoundError):
        client.get("job_01ARZ3NDEKTSV4RRFFQ69G5FAV")
    finished = client.run("split-pdf", {"url": files("three.pdf")})
    with pytest.raises(ConflictError):
        client.cancel(finished.id)
    with Client(env("DUTIL_URL"), "du_live_" + "0" * 48) as stranger, pytest.raises(UnauthorizedError):
        stranger.utilities()


def test_an_idempotency_key_makes_a_retried_create_the_same_job(client: Client) -> None:
    key = str(uuid.uuid4())
    first = client.submit("split-pdf", {"url": files("three.pdf")}, idempotency_key=key)
    again = client.submit("split-pdf", {"url": files("three.pdf")}, idempotency_key=key)
    assert again.id == first.id


def test_the_async_client_runs_jobs_side_by_side() -> None:
    async def main() -> list[Job]:
        async with AsyncClient(env("DUTIL_URL"), env("DUTIL_API_KEY")) as c:
            zipped = ZipFilesInput(files=[ZipFileEntry(url=files("three.pdf"), fileName="a/three.pdf")])
            jobs = await asyncio.gather(
                c.run("split-pdf", SplitPdfInput(url=files("three.pdf"))),
                c.run("zip-files", zipped),
            )
            listed = [j.id async for j in c.list_jobs(page_size=10)]
            assert all(j.id in listed for j in jobs)
            return list(jobs)

    split, zipped = asyncio.run(main())
    assert split.result is not None and len(split.result.files) == 3
    assert zipped.utility == "zip-files" and zipped.status == "succeeded"


def test_local_files_upload_by_path_bytes_or_file_object_and_run_in_one_call(client: Client, tmp_path: Path) -> None:
    pdf = httpx.get(files("three.pdf")).content
    path = tmp_path / "local report.pdf"
    path.write_bytes(pdf)
    digest = hashlib.sha256(pdf).hexdigest()
    from_path = client.upload_file(path)
    assert (from_path.name, from_path.size, from_path.sha256, from_path.contentType) == (
        "local report.pdf",
        len(pdf),
        digest,
        "application/pdf",
    )
    with open(path, "rb") as f:
        from_object = client.upload_file(f, name="object.pdf", expires_in_seconds=600)
    assert from_object.sha256 == digest and from_object.name == "object.pdf"
    job = client.run_file("split-pdf", pdf, name="bytes.pdf")
    assert job.status == "succeeded" and job.result is not None and len(job.result.files) == 3
    listed = [f.id for f in client.list_files(page_size=1)]
    assert from_path.id in listed and from_object.id in listed
    client.delete_file(from_path.id)
    with pytest.raises(NotFoundError):
        client.get_file(from_path.id)
    with pytest.raises(InvalidRequestError):
        client.upload_file(path, name="a/b.pdf")

    async def main() -> Job:
        async with AsyncClient(env("DUTIL_URL"), env("DUTIL_API_KEY")) as c:
            uploaded = await c.upload_file(path)
            assert (await c.get_file(uploaded.id)).sha256 == digest
            return await c.run_file("split-pdf", path)

    assert asyncio.run(main()).status == "succeeded"


def test_a_large_file_goes_straight_to_storage_in_parts_with_progress(client: Client, tmp_path: Path) -> None:
    pdf = httpx.get(files("three.pdf")).content
    # A PDF with 70 MiB after its end: two parts, 64 MiB and the rest, as the service cuts them.
    data = pdf + os.urandom(70 * 1024 * 1024)
    path = tmp_path / "large.pdf"
    path.write_bytes(data)
    seen: list[tuple[int, int | None]] = []
    upload = client.upload_file(path, on_progress=lambda sent, total: seen.append((sent, total)))
    assert (upload.size, upload.sha256) == (len(data), hashlib.sha256(data).hexdigest())
    assert seen == [(64 * 1024 * 1024, len(data)), (len(data), len(data))]
    small = client.upload_file(pdf, direct=True, name="small.pdf")
    assert (small.size, small.contentType) == (len(pdf), "application/pdf")

    async def main() -> str:
        async with AsyncClient(env("DUTIL_URL"), env("DUTIL_API_KEY")) as c:
            return (await c.upload_file(pdf, direct=True, name="async.pdf")).sha256

    assert asyncio.run(main()) == hashlib.sha256(pdf).hexdigest()


class _Receiver(http.server.BaseHTTPRequestHandler):
    received: list[tuple[dict[str, str], bytes]] = []
    arrived = threading.Event()

    def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        _Receiver.received.append(({k.lower(): v for k, v in self.headers.items()}, body))
        self.send_response(200)
        self.end_headers()
        _Receiver.arrived.set()

    def log_message(self, *_: object) -> None:
        pass


def test_verify_callback_accepts_the_signed_callback_and_refuses_a_tampered_one(client: Client) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(env("DUTIL_TEST_TLS_CERT"), env("DUTIL_TEST_TLS_KEY"))
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        hook = f"https://localhost:{server.server_address[1]}/hook"
        job = client.submit("split-pdf", {"url": files("three.pdf")}, callback_url=hook)
        assert _Receiver.arrived.wait(60), "no callback within 60 s"
        headers, body = _Receiver.received[0]
        event = verify_callback(body, headers, env("DUTIL_SIGNING_SECRET"))
        assert event.type == "job.succeeded"
        assert (event.data.id, event.data.status) == (job.id, "succeeded")
        assert headers["webhook-id"] == job.id
        with pytest.raises(CallbackVerificationError):
            verify_callback(body.replace(b"succeeded", b"failed"), headers, env("DUTIL_SIGNING_SECRET"))
    finally:
        server.shutdown()


def test_nothing_answering_raises_dutil_connection_error() -> None:
    with Client("http://127.0.0.1:1", "x", max_retries=1, retry_base=0.01) as nowhere:
        with pytest.raises(DutilConnectionError):
            nowhere.utilities()
