# Generated from docs/openapi.yaml by clients/python/scripts/generate.py. Do not edit by hand.

from __future__ import annotations

from typing import Annotated, Any, Literal
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, RootModel


class FileReference(BaseModel):
    url: Annotated[
        str,
        Field(
            description='Download link, presigned; fetch the job again for a fresh one.'
        ),
    ]
    key: Annotated[
        str, Field(description='Storage key <utility>/<YYYY-MM-DD>/<job_id>/<file>.')
    ]
    name: str
    size: Annotated[int | None, Field(ge=0)]
    contentType: str | None
    urlExpiresAt: AwareDatetime | None = None
    pageNumber: Annotated[int | None, Field(description='split-pdf only.', ge=1)] = None
    path: Annotated[
        str | None,
        Field(description='unzip-files only: the entry path inside the zip.'),
    ] = None


class JobTimings(BaseModel):
    queueMs: Annotated[int | None, Field(ge=0)]
    upstreamMs: Annotated[int | None, Field(ge=0)]
    storageMs: Annotated[int | None, Field(ge=0)]
    totalMs: Annotated[int | None, Field(ge=0)]


class JobProgress(BaseModel):
    """
    Extension (additive within v1): how far the utility has got, as it reports it about once a second: split-pdf counts pages stored, merge-pdf pages merged (the total known at the end), unzip-files entries extracted, zip-files files added. Null for utilities that report none, and until the first report. Kept after the job finishes.
    """

    done: Annotated[int, Field(description='Units done so far.', ge=0)]
    total: Annotated[
        int | None, Field(description='All units, once the utility knows them.', ge=0)
    ]
    unit: Literal['pages', 'entries', 'files']
    updatedAt: AwareDatetime


class JobResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
    )
    files: list[FileReference]
    pageCount: Annotated[
        int | None,
        Field(
            description='split-pdf, merge-pdf, office-pdf, edit-pdf; pdf-info unless the PDF needs a password to be read.'
        ),
    ] = None
    format: Annotated[
        str | None,
        Field(
            description='office-pdf: the document format found by its content (docx, xlsx, pptx, odt, …).'
        ),
    ] = None
    fileCount: Annotated[int | None, Field(description='unzip-files.')] = None
    width: Annotated[
        int | None, Field(description="html-image: the picture's width in pixels.")
    ] = None
    height: Annotated[
        int | None, Field(description="html-image: the picture's height in pixels.")
    ] = None
    title: Annotated[
        str | None,
        Field(
            description="edit-pdf: the edited PDF's title as readers show it in its properties, when it has one; pdf-info: the PDF's."
        ),
    ] = None
    author: Annotated[
        str | None,
        Field(
            description="edit-pdf: the edited PDF's author as readers show it in its properties, when it has one; pdf-info: the PDF's."
        ),
    ] = None
    subject: Annotated[
        str | None,
        Field(
            description="edit-pdf: the edited PDF's subject as readers show it in its properties, when it has one; pdf-info: the PDF's."
        ),
    ] = None
    keywords: Annotated[
        str | None,
        Field(
            description="edit-pdf: the edited PDF's keywords as readers show it in its properties (comma-separated), when it has one; pdf-info: the PDF's."
        ),
    ] = None
    creator: Annotated[
        str | None,
        Field(
            description="edit-pdf: the edited PDF's creator as readers show it in its properties, when it has one; pdf-info: the PDF's."
        ),
    ] = None
    producer: Annotated[
        str | None,
        Field(
            description="edit-pdf: the edited PDF's producer as readers show it in its properties, when it has one; pdf-info: the PDF's."
        ),
    ] = None
    pdfVersion: Annotated[
        str | None,
        Field(
            description='pdf-info: the PDF version its header declares, such as "1.7".'
        ),
    ] = None
    encrypted: Annotated[
        bool | None,
        Field(
            description='pdf-info: whether the PDF is encrypted (with or without a password to open it); edit-pdf: whether the edited PDF is (encrypt).'
        ),
    ] = None
    passwordRequired: Annotated[
        bool | None,
        Field(
            description='pdf-info: whether the PDF needs a password to be read; when it does, only encrypted and linearized are known.'
        ),
    ] = None
    bookmarkCount: Annotated[
        int | None,
        Field(
            description='pdf-info with bookmarks: how many bookmarks the outline has (stored as bookmarks.json).'
        ),
    ] = None
    linearized: Annotated[
        bool | None,
        Field(description='pdf-info: whether the PDF is linearized (fast web view).'),
    ] = None
    created: Annotated[
        str | None,
        Field(
            description='pdf-info: the creation date of its document information as ISO 8601 (no offset when the PDF gives none), when it is a date.'
        ),
    ] = None
    modified: Annotated[
        str | None, Field(description='pdf-info: the modification date, as created.')
    ] = None


class JobError(BaseModel):
    code: str
    message: str
    upstreamStatus: int | None = None


class JobCallback(BaseModel):
    url: str
    status: Literal['pending', 'delivered', 'failed']
    attempts: Annotated[int, Field(ge=0)]


class JobLinks(BaseModel):
    self: str


class Job(BaseModel):
    id: Annotated[str, Field(pattern='^job_[0-9A-HJKMNP-TV-Z]{26}$')]
    object: Literal['job']
    utility: str
    mode: Literal['sync', 'async']
    status: Literal['queued', 'running', 'succeeded', 'failed', 'cancelled']
    createdAt: AwareDatetime
    startedAt: AwareDatetime | None
    finishedAt: AwareDatetime | None
    timings: Annotated[JobTimings, Field(title='JobTimings')]
    progress: JobProgress | None
    metadata: dict[str, Any] | None
    result: JobResult | None
    error: JobError | None
    callback: JobCallback | None
    links: Annotated[JobLinks, Field(title='JobLinks')]


class JobSummary(BaseModel):
    id: str
    utility: str
    mode: Literal['sync', 'async']
    status: Literal['queued', 'running', 'succeeded', 'failed', 'cancelled']
    source: Annotated[
        str,
        Field(
            description='"api" for jobs started with an API key, "playground" for console runs.'
        ),
    ]
    createdAt: AwareDatetime
    finishedAt: AwareDatetime | None
    totalMs: Annotated[int | None, Field(ge=0)]
    upstreamMs: Annotated[int | None, Field(ge=0)]
    errorCode: str | None
    apiKeyName: str | None
    userEmail: str | None
    fileCount: Annotated[int, Field(ge=0)]


class JobList(BaseModel):
    items: list[JobSummary]
    nextCursor: Annotated[
        str | None,
        Field(description='Pass as cursor for the next page; null at the end.'),
    ]


class Upload(BaseModel):
    id: Annotated[str, Field(pattern='^file_[0-9A-HJKMNP-TV-Z]{26}$')]
    object: Literal['file']
    name: Annotated[
        str,
        Field(
            description='The name it was uploaded with (the last segment of its url).'
        ),
    ]
    size: Annotated[int, Field(description='Bytes stored.', ge=0)]
    contentType: Annotated[
        str,
        Field(
            description='Told by the content itself, not the name or the Content-Type sent.'
        ),
    ]
    sha256: Annotated[
        str,
        Field(
            description='SHA-256 of the bytes stored, hex.', pattern='^[0-9a-f]{64}$'
        ),
    ]
    createdAt: AwareDatetime
    expiresAt: AwareDatetime
    url: Annotated[
        str,
        Field(
            description="The s3:// name a job's input takes (url, files[].url); readable by this key's jobs only."
        ),
    ]


class Part(BaseModel):
    partNumber: Annotated[int, Field(ge=1)]
    url: Annotated[
        str,
        Field(
            description="A presigned PUT of the part's bytes (from (partNumber − 1) × partSize); answers the part's ETag."
        ),
    ]


class DirectUpload(BaseModel):
    id: Annotated[
        str,
        Field(
            description='The file id it will have.',
            pattern='^file_[0-9A-HJKMNP-TV-Z]{26}$',
        ),
    ]
    object: Literal['direct_upload']
    name: str
    size: Annotated[
        int,
        Field(description='Bytes announced: storage must hold exactly these.', ge=1),
    ]
    expiresAt: Annotated[
        AwareDatetime,
        Field(
            description='Until when the part URLs work and the upload may be completed (an hour).'
        ),
    ]
    partSize: Annotated[
        int, Field(description='Bytes of each part but the last.', ge=1)
    ]
    parts: list[Part]
    completeUrl: Annotated[str, Field(description='POST here once every part is sent.')]


class UploadList(BaseModel):
    items: list[Upload]
    nextCursor: Annotated[
        str | None,
        Field(description='Pass as cursor for the next page; null at the end.'),
    ]


class ErrorDetail(BaseModel):
    path: str
    message: str


class ErrorBody(BaseModel):
    code: Annotated[str, Field(description='Branch on this, never on message.')]
    message: str
    details: list[ErrorDetail] | None = None
    requestId: str | None = None


class Error(BaseModel):
    error: Annotated[ErrorBody, Field(title='ErrorBody')]


class CatalogEntry(BaseModel):
    slug: str
    name: str
    description: str
    category: str
    icon: str
    target: str
    maxDurationSeconds: int
    inputSchema: Annotated[
        dict[str, Any], Field(description='JSON Schema of the utility input.')
    ]
    exampleInput: dict[str, Any]
    enabled: bool


class UtilityList(BaseModel):
    items: list[CatalogEntry]


class CallbackEvent(BaseModel):
    type: Literal['job.succeeded', 'job.failed']
    timestamp: Annotated[
        str, Field(description='When the event was made (ISO-8601 with milliseconds).')
    ]
    data: Job


class Asset(BaseModel):
    """
    A file of the page: an upload (or an earlier output) of the caller.
    """

    model_config = ConfigDict(
        extra='forbid',
    )
    url: Annotated[
        str,
        Field(
            description='s3:// URL of an upload or of an output of an earlier job, at most 4096 characters.',
            max_length=4096,
            pattern='^s3://[^\\s]+$',
        ),
    ]
    name: Annotated[
        str | None,
        Field(
            description='The relative path the page refers to the file by (e.g. "logo.png", "fonts/body.woff2"); by default the upload\'s file name.',
            max_length=1024,
            min_length=1,
            pattern='^[^/\\\\\\u0000-\\u001f\\u007f?#][^\\\\\\u0000-\\u001f\\u007f?#]*$',
        ),
    ] = None


class PdfMargin(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    top: Annotated[
        str | None,
        Field(
            description='A length with a unit: px, in, cm or mm (e.g. "10mm", "0.5in").',
            max_length=32,
            pattern='^(0|[0-9]+(\\.[0-9]+)?(px|in|cm|mm))$',
        ),
    ] = None
    right: Annotated[
        str | None,
        Field(
            description='A length with a unit: px, in, cm or mm (e.g. "10mm", "0.5in").',
            max_length=32,
            pattern='^(0|[0-9]+(\\.[0-9]+)?(px|in|cm|mm))$',
        ),
    ] = None
    bottom: Annotated[
        str | None,
        Field(
            description='A length with a unit: px, in, cm or mm (e.g. "10mm", "0.5in").',
            max_length=32,
            pattern='^(0|[0-9]+(\\.[0-9]+)?(px|in|cm|mm))$',
        ),
    ] = None
    left: Annotated[
        str | None,
        Field(
            description='A length with a unit: px, in, cm or mm (e.g. "10mm", "0.5in").',
            max_length=32,
            pattern='^(0|[0-9]+(\\.[0-9]+)?(px|in|cm|mm))$',
        ),
    ] = None


class PdfOptions(BaseModel):
    """
    Chromium print options.
    """

    model_config = ConfigDict(
        extra='forbid',
    )
    format: Annotated[
        Literal[
            'Letter',
            'Legal',
            'Tabloid',
            'Ledger',
            'A0',
            'A1',
            'A2',
            'A3',
            'A4',
            'A5',
            'A6',
        ]
        | None,
        Field(description='Paper format; not together with width/height.'),
    ] = None
    width: Annotated[
        str | None,
        Field(
            description='A length with a unit: px, in, cm or mm (e.g. "10mm", "0.5in").',
            max_length=32,
            pattern='^(0|[0-9]+(\\.[0-9]+)?(px|in|cm|mm))$',
        ),
    ] = None
    height: Annotated[
        str | None,
        Field(
            description='A length with a unit: px, in, cm or mm (e.g. "10mm", "0.5in").',
            max_length=32,
            pattern='^(0|[0-9]+(\\.[0-9]+)?(px|in|cm|mm))$',
        ),
    ] = None
    orientation: Literal['portrait', 'landscape'] | None = None
    landscape: Annotated[
        bool | None, Field(description='Same as orientation "landscape".')
    ] = None
    scale: Annotated[
        float | None,
        Field(description='Rendering scale, 0.1 to 2 (default 1).', ge=0.1, le=2.0),
    ] = None
    preferCSSPageSize: bool | None = None
    printBackground: bool | None = None
    margin: Annotated[PdfMargin | None, Field(title='PdfMargin')] = None
    pageRanges: Annotated[
        str | None,
        Field(
            description='The pages to print, e.g. "1-3,5" or "2-" (to the end), in document order; all pages when absent.',
            max_length=200,
            pattern='^ *[1-9][0-9]{0,4}( *- *([1-9][0-9]{0,4})?)?( *, *[1-9][0-9]{0,4}( *- *([1-9][0-9]{0,4})?)?)* *$',
        ),
    ] = None
    headerTemplate: Annotated[
        str | None,
        Field(
            description='HTML printed at the top of every page, in the top margin (give one): elements of class pageNumber, totalPages, date, title and url are filled in. Pictures as data: URLs only.',
            max_length=65536,
        ),
    ] = None
    footerTemplate: Annotated[
        str | None,
        Field(
            description='HTML printed at the bottom of every page, in the bottom margin, as headerTemplate.',
            max_length=65536,
        ),
    ] = None
    tagged: Annotated[bool | None, Field(description='A tagged (accessible) PDF.')] = (
        None
    )
    singlePage: Annotated[
        bool | None,
        Field(
            description="The whole page on one PDF page, as tall as its content (at most 200 in) on the paper's width; not with pageRanges or preferCSSPageSize."
        ),
    ] = None
    omitBackground: Annotated[
        bool | None,
        Field(
            description="No white page background: where the page has none, the PDF's is transparent."
        ),
    ] = None
    outline: Annotated[
        bool | None,
        Field(
            description="The document's outline (bookmarks) from its headings; makes the PDF tagged."
        ),
    ] = None
    pdfa: Annotated[
        Literal['PDF/A-2b', 'PDF/A-3b'] | None,
        Field(
            description="An archival PDF of this PDF/A level: Chromium's PDF (its fonts embedded) with an sRGB output intent and XMP metadata agreeing with its document information. PDF/A-1b is not offered: Chromium's pages use transparency, which PDF/A-1 lacks."
        ),
    ] = None
    pdfua: Annotated[
        bool | None,
        Field(
            description='An accessible PDF (PDF/UA-1): tagged, its title shown by readers, its links described, declared in its metadata. The page needs a <title> and a language (<html lang>).'
        ),
    ] = None


class Wait(BaseModel):
    """
    Waits after the page has loaded, before printing: at most 30 s in all, or the job fails upstream_rejected.
    """

    model_config = ConfigDict(
        extra='forbid',
    )
    selector: Annotated[
        str | None,
        Field(
            description='A CSS selector: wait until an element matches it.',
            max_length=1000,
            min_length=1,
        ),
    ] = None
    expression: Annotated[
        str | None,
        Field(
            description="A JavaScript expression evaluated in the page: wait until it is truthy (the page's own scripts run as they do).",
            max_length=10000,
            min_length=1,
        ),
    ] = None
    delayMs: Annotated[
        int | None,
        Field(description='Then wait this many milliseconds more.', ge=0, le=30000),
    ] = None


class HtmlPdfInput(BaseModel):
    """
    The page as url, html or markdown (one of them).
    """

    model_config = ConfigDict(
        extra='forbid',
    )
    url: Annotated[
        str | None,
        Field(
            description='http://, https:// or s3:// URL, at most 4096 characters.',
            max_length=4096,
            pattern='^(https?|s3)://[^\\s]+$',
        ),
    ] = None
    html: Annotated[
        str | None,
        Field(
            description='The page itself (at most 2 MiB characters), instead of url. Its relative references resolve to its assets.',
            max_length=2097152,
            min_length=1,
        ),
    ] = None
    markdown: Annotated[
        str | None,
        Field(
            description='The page as Markdown (GitHub-flavoured, at most 2 MiB characters), instead of url or html: rendered with a default stylesheet, or stylesheet. Its relative references resolve to its assets.',
            max_length=2097152,
            min_length=1,
        ),
    ] = None
    stylesheet: Annotated[
        str | None,
        Field(
            description='CSS for a Markdown page (markdown, or an s3:// document named .md), in place of the default stylesheet; at most 256 KiB characters.',
            max_length=262144,
        ),
    ] = None
    assets: Annotated[
        list[Asset] | None,
        Field(
            description='Files the page refers to by relative path (images, styles, fonts), beside html or an s3:// url.',
            max_length=100,
        ),
    ] = None
    pdfOptions: Annotated[
        PdfOptions | None,
        Field(description='Chromium print options.', title='PdfOptions'),
    ] = None
    media: Annotated[
        Literal['print', 'screen'] | None,
        Field(
            description='The CSS media type the page is laid out for (default print).'
        ),
    ] = None
    wait: Annotated[
        Wait | None,
        Field(
            description='Waits after the page has loaded, before printing: at most 30 s in all, or the job fails upstream_rejected.'
        ),
    ] = None


class ImageClip(BaseModel):
    """
    A rectangle of the page to picture, in page coordinates.
    """

    model_config = ConfigDict(
        extra='forbid',
    )
    x: Annotated[
        int,
        Field(description='From the left of the page, in CSS pixels.', ge=0, le=100000),
    ]
    y: Annotated[
        int,
        Field(description='From the top of the page, in CSS pixels.', ge=0, le=100000),
    ]
    width: Annotated[int, Field(description='In CSS pixels.', ge=1, le=16384)]
    height: Annotated[int, Field(description='In CSS pixels.', ge=1, le=16384)]


class ImageOptions(BaseModel):
    """
    The picture: its format, the viewport, and what part of the page.
    """

    model_config = ConfigDict(
        extra='forbid',
    )
    format: Annotated[
        Literal['png', 'jpeg', 'webp'] | None,
        Field(description="The picture's format (default png)."),
    ] = None
    quality: Annotated[
        int | None,
        Field(
            description='jpeg and webp: the quality, 0 to 100 (default 80).',
            ge=0,
            le=100,
        ),
    ] = None
    width: Annotated[
        int | None,
        Field(
            description='The viewport width in CSS pixels, 16 to 3,840 (default 800).',
            ge=16,
            le=3840,
        ),
    ] = None
    height: Annotated[
        int | None,
        Field(
            description='The viewport height in CSS pixels, 16 to 16,384 (default 600).',
            ge=16,
            le=16384,
        ),
    ] = None
    deviceScaleFactor: Annotated[
        float | None,
        Field(
            description='Device pixels per CSS pixel, 0.25 to 4 (default 1; 2 for a sharp picture on high-density screens).',
            ge=0.25,
            le=4.0,
        ),
    ] = None
    fullPage: Annotated[
        bool | None,
        Field(
            description='The whole page as tall and wide as its content, not just the viewport.'
        ),
    ] = None
    clip: Annotated[
        ImageClip | None,
        Field(
            description='A rectangle of the page to picture, in page coordinates.',
            title='ImageClip',
        ),
    ] = None
    selector: Annotated[
        str | None,
        Field(
            description='A CSS selector: the picture of the first element it matches (the job fails if none does).',
            max_length=1000,
            min_length=1,
        ),
    ] = None
    omitBackground: Annotated[
        bool | None,
        Field(
            description="png and webp: no white background, where the page has none the picture's is transparent."
        ),
    ] = None
    optimizeForSpeed: Annotated[
        bool | None,
        Field(description='Encode faster, for a larger file (png and webp).'),
    ] = None


class HtmlImageInput(BaseModel):
    """
    The page as url, html or markdown (one of them).
    """

    model_config = ConfigDict(
        extra='forbid',
    )
    url: Annotated[
        str | None,
        Field(
            description='http://, https:// or s3:// URL, at most 4096 characters.',
            max_length=4096,
            pattern='^(https?|s3)://[^\\s]+$',
        ),
    ] = None
    html: Annotated[
        str | None,
        Field(
            description='The page itself (at most 2 MiB characters), instead of url. Its relative references resolve to its assets.',
            max_length=2097152,
            min_length=1,
        ),
    ] = None
    markdown: Annotated[
        str | None,
        Field(
            description='The page as Markdown (GitHub-flavoured, at most 2 MiB characters), instead of url or html: rendered with a default stylesheet, or stylesheet. Its relative references resolve to its assets.',
            max_length=2097152,
            min_length=1,
        ),
    ] = None
    stylesheet: Annotated[
        str | None,
        Field(
            description='CSS for a Markdown page (markdown, or an s3:// document named .md), in place of the default stylesheet; at most 256 KiB characters.',
            max_length=262144,
        ),
    ] = None
    assets: Annotated[
        list[Asset] | None,
        Field(
            description='Files the page refers to by relative path (images, styles, fonts), beside html or an s3:// url.',
            max_length=100,
        ),
    ] = None
    imageOptions: Annotated[
        ImageOptions | None,
        Field(
            description='The picture: its format, the viewport, and what part of the page.',
            title='ImageOptions',
        ),
    ] = None
    media: Annotated[
        Literal['screen', 'print'] | None,
        Field(
            description='The CSS media type the page is laid out for (default screen).'
        ),
    ] = None
    wait: Annotated[
        Wait | None,
        Field(
            description='Waits after the page has loaded, before printing: at most 30 s in all, or the job fails upstream_rejected.'
        ),
    ] = None


class OfficePdfInput(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    url: Annotated[
        str,
        Field(
            description='http://, https:// or s3:// URL, at most 4096 characters.',
            max_length=4096,
            pattern='^(https?|s3)://[^\\s]+$',
        ),
    ]
    password: Annotated[
        str | None,
        Field(
            description='Opens a password-protected docx, xlsx, pptx, OpenDocument, doc or xls file (a protected ppt is refused). Sealed until the runner opens it; never shown again.',
            max_length=127,
            min_length=1,
            pattern='^[^\\u0000-\\u001f\\u007f]*$',
        ),
    ] = None
    pageRanges: Annotated[
        str | None,
        Field(
            description='The pages to convert, e.g. "1-3,5" or "2-" (to the end); all pages when absent.',
            max_length=200,
            pattern='^ *[1-9][0-9]{0,4}( *- *([1-9][0-9]{0,4})?)?( *, *[1-9][0-9]{0,4}( *- *([1-9][0-9]{0,4})?)?)* *$',
        ),
    ] = None
    landscape: Annotated[
        bool | None,
        Field(
            description="Turns the pages of a text document or spreadsheet landscape; slides keep their own format. Default: the document's own orientation."
        ),
    ] = None
    pdfa: Annotated[
        Literal['PDF/A-1b', 'PDF/A-2b', 'PDF/A-3b'] | None,
        Field(description='Makes an archival PDF of this PDF/A level.'),
    ] = None
    pdfua: Annotated[
        bool | None,
        Field(description='Makes an accessible PDF (PDF/UA: tagged, with structure).'),
    ] = None
    imageQuality: Annotated[
        int | None,
        Field(
            description='JPEG quality of the pictures, 1 to 100 (lower: a smaller file). Default: 90.',
            ge=1,
            le=100,
        ),
    ] = None
    maxImageResolution: Annotated[
        Literal[75, 150, 300, 600, 1200] | None,
        Field(
            description='Scales pictures down to at most this many dots per inch (75, 150, 300, 600 or 1200). Default: pictures keep their resolution.'
        ),
    ] = None
    losslessImages: Annotated[
        bool | None,
        Field(
            description='Compresses pictures losslessly (PNG-like) instead of as JPEG. Default: false.'
        ),
    ] = None
    exportBookmarks: Annotated[
        bool | None,
        Field(
            description="The document's headings as the PDF's bookmarks (outline). Default: true."
        ),
    ] = None
    exportNotes: Annotated[
        bool | None,
        Field(
            description="The document's comments as PDF annotations. Default: false."
        ),
    ] = None
    exportFormFields: Annotated[
        bool | None,
        Field(
            description="The document's form controls as PDF form fields (false: printed as they look). Default: true."
        ),
    ] = None
    singlePageSheets: Annotated[
        bool | None,
        Field(
            description='Each sheet of a spreadsheet on one page of its own size. Default: false.'
        ),
    ] = None


class SplitPdfInput(BaseModel):
    """
    The PDF to split, and how.
    """

    model_config = ConfigDict(
        extra='forbid',
    )
    url: Annotated[
        str,
        Field(
            description='http://, https:// or s3:// URL, at most 4096 characters.',
            max_length=4096,
            pattern='^(https?|s3)://[^\\s]+$',
        ),
    ]
    every: Annotated[
        int | None,
        Field(
            description='Files of this many pages each, in order (the last may have fewer). Default: 1, a file per page.',
            ge=1,
            le=500,
        ),
    ] = None
    pages: Annotated[
        str | None,
        Field(
            description='Only these pages, in the order given, e.g. "1-3,5" or "4-" (to the end): a file each, or one file of them all with unify. Not with every.',
            max_length=200,
            pattern='^ *[1-9][0-9]{0,4}( *- *([1-9][0-9]{0,4})?)?( *, *[1-9][0-9]{0,4}( *- *([1-9][0-9]{0,4})?)?)* *$',
        ),
    ] = None
    unify: Annotated[
        bool | None,
        Field(
            description='With pages: one file of the pages asked for, instead of a file each.'
        ),
    ] = None


class MergePdfSource(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    url: Annotated[
        str,
        Field(
            description='http://, https:// or s3:// URL, at most 4096 characters.',
            max_length=4096,
            pattern='^(https?|s3)://[^\\s]+$',
        ),
    ]
    rotate: Annotated[
        Literal[90, 180, 270] | None,
        Field(
            description="Turns every page of this PDF clockwise by 90, 180 or 270 degrees (added to the page's own)."
        ),
    ] = None


class Keyword(RootModel[str]):
    root: Annotated[str, Field(max_length=200)]


class Info(BaseModel):
    """
    The merged PDF's document information, as PDF readers show it in its properties (the inputs' own are not kept).
    """

    model_config = ConfigDict(
        extra='forbid',
    )
    title: Annotated[str | None, Field(max_length=1000)] = None
    author: Annotated[str | None, Field(max_length=1000)] = None
    subject: Annotated[str | None, Field(max_length=1000)] = None
    keywords: Annotated[list[Keyword] | None, Field(max_length=50)] = None
    creator: Annotated[str | None, Field(max_length=1000)] = None
    producer: Annotated[str | None, Field(max_length=1000)] = None


class MergePdfInput(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    files: Annotated[
        list[MergePdfSource],
        Field(description='The PDFs to merge, in order.', max_length=100, min_length=2),
    ]
    info: Annotated[
        Info | None,
        Field(
            description="The merged PDF's document information, as PDF readers show it in its properties (the inputs' own are not kept).",
            title='Info',
        ),
    ] = None


class PdfRotation(BaseModel):
    """
    Turns pages.
    """

    model_config = ConfigDict(
        extra='forbid',
    )
    angle: Annotated[
        Literal[90, 180, 270],
        Field(description="Clockwise, added to the page's own rotation."),
    ]
    pages: Annotated[
        str | None,
        Field(
            description='The pages to turn, e.g. "1-3,5" or "2-" (to the end); every page when absent.',
            max_length=200,
            pattern='^ *[1-9][0-9]{0,4}( *- *([1-9][0-9]{0,4})?)?( *, *[1-9][0-9]{0,4}( *- *([1-9][0-9]{0,4})?)?)* *$',
        ),
    ] = None


class PdfStamp(BaseModel):
    """
    Text (in Helvetica Bold), a picture or a PDF page laid across the middle of pages.
    """

    model_config = ConfigDict(
        extra='forbid',
    )
    text: Annotated[
        str | None,
        Field(
            description='The text, one line (Windows-1252 characters: Western European letters). Give text or image.',
            max_length=200,
            min_length=1,
        ),
    ] = None
    image: Annotated[
        str | None,
        Field(
            description="A PNG or JPEG picture, or a PDF whose first page is the stamp (as it is drawn: scaled to the page, centred), by http(s):// URL or an upload's s3:// URL; at most 20 MB. Give text or image.",
            max_length=4096,
            pattern='^(https?|s3)://[^\\s]+$',
        ),
    ] = None
    scale: Annotated[
        float | None,
        Field(
            description="A picture's longer side as a share of the page's shorter side. Default 0.5.",
            ge=0.05,
            le=1.0,
        ),
    ] = None
    layer: Annotated[
        Literal['over', 'under'] | None,
        Field(
            description="over (a stamp, the default): on top of the page's content; under (a watermark): behind it, hidden where the page paints an opaque background."
        ),
    ] = None
    pages: Annotated[
        str | None,
        Field(
            description='The pages to stamp, e.g. "1-3,5" or "2-" (to the end); every page when absent.',
            max_length=200,
            pattern='^ *[1-9][0-9]{0,4}( *- *([1-9][0-9]{0,4})?)?( *, *[1-9][0-9]{0,4}( *- *([1-9][0-9]{0,4})?)?)* *$',
        ),
    ] = None
    fontSize: Annotated[
        float | None,
        Field(
            description='Points on a page 595 pt (A4) on its shorter side; the stamp scales with the page. Default 48.',
            ge=6.0,
            le=400.0,
        ),
    ] = None
    angle: Annotated[
        float | None,
        Field(
            description='Degrees, counter-clockwise, about the page centre. Default 0.',
            ge=-180.0,
            le=180.0,
        ),
    ] = None
    color: Annotated[
        str | None,
        Field(
            description='As #rrggbb. Default #808080 (grey).',
            pattern='^#[0-9a-fA-F]{6}$',
        ),
    ] = None
    opacity: Annotated[
        float | None,
        Field(description='From 0.05 to 1 (opaque). Default 0.5.', ge=0.05, le=1.0),
    ] = None


class DocumentInfo(BaseModel):
    """
    Document information to write, as PDF readers show it in its properties: the fields given replace the document's own, the others stay.
    """

    model_config = ConfigDict(
        extra='forbid',
    )
    title: Annotated[str | None, Field(max_length=1000)] = None
    author: Annotated[str | None, Field(max_length=1000)] = None
    subject: Annotated[str | None, Field(max_length=1000)] = None
    keywords: Annotated[list[Keyword] | None, Field(max_length=50)] = None
    creator: Annotated[str | None, Field(max_length=1000)] = None
    producer: Annotated[str | None, Field(max_length=1000)] = None


class Attachment(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    url: Annotated[
        str,
        Field(
            description='http://, https:// or s3:// URL, at most 4096 characters.',
            max_length=4096,
            pattern='^(https?|s3)://[^\\s]+$',
        ),
    ]
    name: Annotated[
        str | None,
        Field(
            description="Its file name in the PDF (no slashes); the URL's last segment when absent.",
            max_length=255,
            min_length=1,
            pattern='^[^\\u0000-\\u001f\\u007f/\\\\]+$',
        ),
    ] = None
    description: Annotated[
        str | None,
        Field(
            description='As readers show it beside the file.',
            max_length=1000,
            pattern='^[^\\u0000-\\u001f\\u007f]*$',
        ),
    ] = None
    mimeType: Annotated[
        str | None,
        Field(
            description='Its media type, as type/subtype (text/xml, image/png); none when absent.',
            max_length=127,
            pattern='^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$',
        ),
    ] = None


class BookmarkLevel5(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    title: Annotated[
        str, Field(description='As readers show it.', max_length=1000, min_length=1)
    ]
    page: Annotated[
        int,
        Field(description='The page it opens, from 1 (shown whole).', ge=1, le=2000),
    ]


class BookmarkLevel4(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    title: Annotated[
        str, Field(description='As readers show it.', max_length=1000, min_length=1)
    ]
    page: Annotated[
        int,
        Field(description='The page it opens, from 1 (shown whole).', ge=1, le=2000),
    ]
    children: Annotated[
        list[BookmarkLevel5] | None,
        Field(description='The bookmarks under it.', max_length=10000),
    ] = None


class BookmarkLevel3(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    title: Annotated[
        str, Field(description='As readers show it.', max_length=1000, min_length=1)
    ]
    page: Annotated[
        int,
        Field(description='The page it opens, from 1 (shown whole).', ge=1, le=2000),
    ]
    children: Annotated[
        list[BookmarkLevel4] | None,
        Field(description='The bookmarks under it.', max_length=10000),
    ] = None


class BookmarkLevel2(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    title: Annotated[
        str, Field(description='As readers show it.', max_length=1000, min_length=1)
    ]
    page: Annotated[
        int,
        Field(description='The page it opens, from 1 (shown whole).', ge=1, le=2000),
    ]
    children: Annotated[
        list[BookmarkLevel3] | None,
        Field(description='The bookmarks under it.', max_length=10000),
    ] = None


class Bookmark(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    title: Annotated[
        str, Field(description='As readers show it.', max_length=1000, min_length=1)
    ]
    page: Annotated[
        int,
        Field(description='The page it opens, from 1 (shown whole).', ge=1, le=2000),
    ]
    children: Annotated[
        list[BookmarkLevel2] | None,
        Field(description='The bookmarks under it.', max_length=10000),
    ] = None


class Encrypt(BaseModel):
    """
    Protects the edited PDF with AES-256 (PDF 2.0, readable by every current PDF reader): a password to open it, one that lifts its permissions, or both, and what it permits without the owner password.
    """

    model_config = ConfigDict(
        extra='forbid',
    )
    userPassword: Annotated[
        str | None,
        Field(
            description='Asked for to open the PDF. Absent or empty: anyone may open it, and the permissions below still hold.',
            max_length=127,
            min_length=0,
            pattern='^[^\\u0000-\\u001f\\u007f]*$',
        ),
    ] = None
    ownerPassword: Annotated[
        str | None,
        Field(
            description='Lifts the permissions (and opens the PDF). Absent: the same as userPassword.',
            max_length=127,
            min_length=1,
            pattern='^[^\\u0000-\\u001f\\u007f]*$',
        ),
    ] = None
    print: Annotated[
        Literal['full', 'low', 'none'] | None,
        Field(
            description='Printing allowed: full (the default), low (low resolution only) or none.'
        ),
    ] = None
    modify: Annotated[
        Literal['all', 'annotate', 'form', 'assembly', 'none'] | None,
        Field(
            description='Changes allowed: all (the default); annotate (comments, form filling, pages inserted, turned or removed); form (form filling and page assembly); assembly (pages only); none.'
        ),
    ] = None
    copy_: Annotated[
        bool | None,
        Field(
            alias='copy',
            description='Whether text and pictures may be copied out (default true; accessibility tools always may).',
        ),
    ] = None


class EditPdfInput(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    url: Annotated[
        str,
        Field(
            description='http://, https:// or s3:// URL, at most 4096 characters.',
            max_length=4096,
            pattern='^(https?|s3)://[^\\s]+$',
        ),
    ]
    flatten: Annotated[
        bool | None,
        Field(
            description='Draws form fields and annotations into the pages: what they show stays, they can no longer be edited.'
        ),
    ] = None
    rotate: Annotated[
        PdfRotation | None, Field(description='Turns pages.', title='PdfRotation')
    ] = None
    stamp: Annotated[
        PdfStamp | None,
        Field(
            description='Text (in Helvetica Bold), a picture or a PDF page laid across the middle of pages.',
            title='PdfStamp',
        ),
    ] = None
    info: Annotated[
        DocumentInfo | None,
        Field(
            description="Document information to write, as PDF readers show it in its properties: the fields given replace the document's own, the others stay.",
            title='DocumentInfo',
        ),
    ] = None
    attachments: Annotated[
        list[Attachment] | None,
        Field(
            description="Files embedded in the PDF (its attachments, as readers list them), by http(s):// URL or an upload's s3:// URL: at most 20, 50 MB each and 200 MB in all; one of the same name is replaced.",
            max_length=20,
            min_length=1,
        ),
    ] = None
    bookmarks: Annotated[
        list[Bookmark] | None,
        Field(
            description="The PDF's outline, replacing its own ([] removes it): titles, the pages they open and the bookmarks under them (5 levels, at most 10,000 in all).",
            max_length=10000,
        ),
    ] = None
    imageQuality: Annotated[
        int | None,
        Field(
            description='Re-encodes the colour and grey pictures as JPEG of this quality, 1 to 100 (lower: a smaller file), with Ghostscript. Absent: pictures keep their encoding.',
            ge=1,
            le=100,
        ),
    ] = None
    maxImageResolution: Annotated[
        Literal[75, 150, 300, 600, 1200] | None,
        Field(
            description='Scales colour and grey pictures down to at most this many dots per inch as they are drawn on the page (75, 150, 300, 600 or 1200), with Ghostscript; black-and-white pictures (scans of text) keep theirs. Absent: pictures keep their resolution.'
        ),
    ] = None
    pdfa: Annotated[
        Literal['PDF/A-1b', 'PDF/A-2b', 'PDF/A-3b'] | None,
        Field(
            description='Makes the PDF an archival PDF of this PDF/A level, with Ghostscript: fonts embedded, colours in sRGB, what the level forbids left out (embedded files, JavaScript; under PDF/A-1, which has no transparency, a page that uses it is drawn as a picture); its document information kept. A tagged PDF loses its tags. Not with encrypt or attachments.'
        ),
    ] = None
    pdfua: Annotated[
        bool | None,
        Field(
            description="Makes a tagged PDF accessible (PDF/UA-1): its metadata declares it, readers show its title, its links are described. The PDF must be tagged (as html-pdf's tagged and office-pdf's pdfua make it) and state its language; its title is info.title or its own. At most 15 MB. Not with pdfa, imageQuality, maxImageResolution, stamp, flatten or encrypt."
        ),
    ] = None
    compress: Annotated[
        bool | None,
        Field(
            description='Packs objects into compressed object streams and compresses every stream at the highest level, losslessly (pictures are kept as they are).'
        ),
    ] = None
    linearize: Annotated[
        bool | None,
        Field(
            description='Linearizes the PDF ("fast web view"): a browser shows its first page before the rest arrives.'
        ),
    ] = None
    encrypt: Annotated[
        Encrypt | None,
        Field(
            description='Protects the edited PDF with AES-256 (PDF 2.0, readable by every current PDF reader): a password to open it, one that lifts its permissions, or both, and what it permits without the owner password.'
        ),
    ] = None
    password: Annotated[
        str | None,
        Field(
            description="Opens a protected PDF: its owner password (the one that lifts its permissions). The edited PDF is without protection unless `encrypt` protects it again; a password alone, with no edit, removes the protection. Sealed where the job's input is stored, used by its runner alone, never shown again.",
            max_length=127,
            min_length=1,
            pattern='^[^\\u0000-\\u001f\\u007f]*$',
        ),
    ] = None


class PdfInfoInput(BaseModel):
    """
    The PDF to read.
    """

    model_config = ConfigDict(
        extra='forbid',
    )
    url: Annotated[
        str,
        Field(
            description='http://, https:// or s3:// URL, at most 4096 characters.',
            max_length=4096,
            pattern='^(https?|s3)://[^\\s]+$',
        ),
    ]
    bookmarks: Annotated[
        bool | None,
        Field(
            description="Also stores the PDF's bookmarks (its outline) as bookmarks.json: [{ title, page, children }], page from 1 or null (at most 10,000)."
        ),
    ] = None
    password: Annotated[
        str | None,
        Field(
            description="Opens a PDF protected by a password (its user or owner password): its facts are read as without one. Sealed where the job's input is stored, used by its runner alone, never shown again.",
            max_length=127,
            min_length=1,
            pattern='^[^\\u0000-\\u001f\\u007f]*$',
        ),
    ] = None


class ZipFileEntry(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    url: Annotated[
        str,
        Field(
            description='http://, https:// or s3:// URL, at most 4096 characters.',
            max_length=4096,
            pattern='^(https?|s3)://[^\\s]+$',
        ),
    ]
    fileName: Annotated[
        str,
        Field(
            description='Name (path) of the entry in the archive; unique, no leading / and no ..',
            max_length=255,
            min_length=1,
        ),
    ]


class ZipFilesInput(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    files: Annotated[list[ZipFileEntry], Field(max_length=500, min_length=1)]


class UnzipFilesInput(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    url: Annotated[
        str,
        Field(
            description='http://, https:// or s3:// URL, at most 4096 characters.',
            max_length=4096,
            pattern='^(https?|s3)://[^\\s]+$',
        ),
    ]


class XlsToXlsxInput(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    url: Annotated[
        str,
        Field(
            description='http://, https:// or s3:// URL, at most 4096 characters.',
            max_length=4096,
            pattern='^(https?|s3)://[^\\s]+$',
        ),
    ]


Utility = Literal["html-pdf", "html-image", "office-pdf", "split-pdf", "merge-pdf", "edit-pdf", "pdf-info", "zip-files", "unzip-files", "xls-to-xlsx"]
"""The utilities of this API version (one `/v1/utilities/<slug>` route each)."""

JobStatus = Literal["queued", "running", "succeeded", "failed", "cancelled"]

UtilityInput = HtmlPdfInput | HtmlImageInput | OfficePdfInput | SplitPdfInput | MergePdfInput | EditPdfInput | PdfInfoInput | ZipFilesInput | UnzipFilesInput | XlsToXlsxInput

INPUT_MODELS: dict[str, type[BaseModel]] = {
    "html-pdf": HtmlPdfInput,
    "html-image": HtmlImageInput,
    "office-pdf": OfficePdfInput,
    "split-pdf": SplitPdfInput,
    "merge-pdf": MergePdfInput,
    "edit-pdf": EditPdfInput,
    "pdf-info": PdfInfoInput,
    "zip-files": ZipFilesInput,
    "unzip-files": UnzipFilesInput,
    "xls-to-xlsx": XlsToXlsxInput,
}
"""Each utility's input model."""
