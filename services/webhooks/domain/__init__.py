"""Pure webhook rules: the signature over timestamp and body, and the retry schedule."""

from services.webhooks.domain.retry import Outcome, RetryPolicy, after_attempt
from services.webhooks.domain.signing import SIGNATURE_HEADER, sign, signature_header, verify

__all__ = [
    "SIGNATURE_HEADER",
    "Outcome",
    "RetryPolicy",
    "after_attempt",
    "sign",
    "signature_header",
    "verify",
]
