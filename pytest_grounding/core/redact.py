"""Secrets out of every text that comes from a server. A served detector registers the value of
the API key it sends (`register`); `redact` replaces that value, in the forms a server may echo it
(as sent, JSON-escaped, URL-encoded), and any `Bearer <token>`, with a mask. Called where server
error texts and raw answers enter records, and again where records are built, so no artifact
(terminal, JSON report, predictions file, JUnit XML, HTML) holds a key. Pure; no pytest."""

from __future__ import annotations

import json
import os
import re
import threading
import urllib.parse
from typing import Any

MASK = "[redacted]"
MIN_LENGTH = 4  # a shorter "key" would mask ordinary words; such a key is no secret anyway
BEARER = re.compile(r"(?i)\b(bearer)(\s+|%20|\+)[^\s\"'<>&,;\\]{8,}")  # a token, not "bearer of"

_lock = threading.Lock()
_forms: set[str] = set()
_longest_first: tuple[str, ...] = ()  # _forms, the longest first (a form inside another masks last)
_values: tuple[str, ...] = ()  # the secrets as registered: percent-encoded runs are decoded and compared
# A run of URL characters holding at least one %XX escape: a key a server echoes percent-encoded in
# any way (%2D for "-", lower-case hex, every character escaped) is such a run.
ENCODED_RUN = re.compile(r"[A-Za-z0-9._~+\-%/]*%[0-9A-Fa-f]{2}[A-Za-z0-9._~+\-%/]*")


def register(value: str | None) -> None:
    """Mask `value` (an API key) from now on in this process."""
    if not value or len(value) < MIN_LENGTH:
        return
    escaped = json.dumps(value)[1:-1]
    forms = {
        value,
        escaped,
        escaped.replace("/", "\\/"),
        urllib.parse.quote(value, safe=""),
        urllib.parse.quote_plus(value),
    }
    global _longest_first, _values
    with _lock:
        _forms.update(form for form in forms if len(form) >= MIN_LENGTH)
        _longest_first = tuple(sorted(_forms, key=len, reverse=True))
        _values = (*_values, value)


def register_env(name: str | None) -> None:
    """Mask the value of the environment variable `name` (a detector's api_key_env)."""
    if name:
        register(os.environ.get(name))


def redact(text: Any) -> Any:
    """`text` without any registered secret nor bearer token; a non-str is returned as it is."""
    if not isinstance(text, str):
        return text
    for form in _longest_first:  # read once: a tuple, replaced whole by register
        if form in text:
            text = text.replace(form, MASK)
    if "%" in text and _values:
        text = ENCODED_RUN.sub(_masked_if_secret, text)
    if "earer" in text or "EARER" in text:
        text = BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)
    return text


def _masked_if_secret(match: re.Match[str]) -> str:
    decoded = urllib.parse.unquote_plus(match.group(0))
    return MASK if any(value in decoded for value in _values) else match.group(0)


def redact_deep(value: Any) -> Any:
    """`redact` through dicts and lists (a record's meta)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_deep(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_deep(v) for v in value]
    return value
