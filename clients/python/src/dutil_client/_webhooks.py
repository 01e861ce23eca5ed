"""Callback verification: Standard Webhooks signatures, on the ``standardwebhooks`` package."""

from __future__ import annotations

from collections.abc import Mapping

from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from ._errors import DutilError
from ._models import CallbackEvent


class CallbackVerificationError(DutilError):
    """The callback's signature, id or timestamp did not verify: do not trust its body."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "invalid_signature")


def verify_callback(body: bytes | str, headers: Mapping[str, str], secret: str) -> CallbackEvent:
    """Verifies a callback's signature (webhook-id, webhook-timestamp, webhook-signature; the
    timestamp within 5 minutes) against the key's signing secret (``whsec_...``) and returns the
    event: ``type`` is job.succeeded or job.failed, ``data`` the job as ``get`` returns it.

    Pass the raw body, exactly as received. Receivers should de-duplicate on ``webhook-id`` (the
    job id): a callback can arrive more than once.
    """
    try:
        payload = Webhook(secret).verify(body, {k.lower(): v for k, v in headers.items()})
    except WebhookVerificationError as err:
        raise CallbackVerificationError(f"callback not verified: {err}") from err
    return CallbackEvent.model_validate(payload)
