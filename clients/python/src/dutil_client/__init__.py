"""A typed Python client for the dutil document utilities API.

    from dutil_client import Client, SplitPdfInput

    with Client("http://127.0.0.1:8080", "du_live_...") as client:
        job = client.run("split-pdf", SplitPdfInput(url="https://example.com/a.pdf"))
        client.download(job, "pages/")

:class:`Client` is synchronous (httpx); :class:`AsyncClient` is its asyncio twin.
"""

from ._client import AsyncClient, Client
from ._errors import (
    ConflictError,
    DutilConnectionError,
    DutilError,
    DutilRequestError,
    ForbiddenError,
    InternalError,
    InvalidRequestError,
    JobFailedError,
    NotFoundError,
    RateLimitedError,
    UnauthorizedError,
    WaitTimeoutError,
)
from ._models import (
    INPUT_MODELS,
    CallbackEvent,
    CatalogEntry,
    DocumentInfo,
    EditPdfInput,
    FileReference,
    HtmlImageInput,
    HtmlPdfInput,
    ImageClip,
    ImageOptions,
    Job,
    JobStatus,
    JobSummary,
    MergePdfInput,
    MergePdfSource,
    OfficePdfInput,
    PdfInfoInput,
    PdfMargin,
    PdfOptions,
    PdfRotation,
    PdfStamp,
    SplitPdfInput,
    UnzipFilesInput,
    Utility,
    UtilityInput,
    XlsToXlsxInput,
    ZipFileEntry,
    ZipFilesInput,
)
from ._webhooks import CallbackVerificationError, verify_callback

__version__ = "0.1.0"

__all__ = [
    "INPUT_MODELS",
    "AsyncClient",
    "CallbackEvent",
    "CallbackVerificationError",
    "CatalogEntry",
    "Client",
    "ConflictError",
    "DocumentInfo",
    "DutilConnectionError",
    "DutilError",
    "DutilRequestError",
    "EditPdfInput",
    "FileReference",
    "ForbiddenError",
    "HtmlImageInput",
    "HtmlPdfInput",
    "ImageClip",
    "ImageOptions",
    "InternalError",
    "InvalidRequestError",
    "Job",
    "JobFailedError",
    "JobStatus",
    "JobSummary",
    "MergePdfInput",
    "MergePdfSource",
    "NotFoundError",
    "OfficePdfInput",
    "PdfInfoInput",
    "PdfMargin",
    "PdfOptions",
    "PdfRotation",
    "PdfStamp",
    "RateLimitedError",
    "SplitPdfInput",
    "UnauthorizedError",
    "UnzipFilesInput",
    "Utility",
    "UtilityInput",
    "WaitTimeoutError",
    "XlsToXlsxInput",
    "ZipFileEntry",
    "ZipFilesInput",
    "verify_callback",
]
