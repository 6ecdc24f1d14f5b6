"""Secrets kept out of everything printed or stored (issue 10 §4, SPEC §7).

* :func:`redact` replaces the API key's value (when known), any ``Bearer <token>`` (a token with a digit) and the value of
  any ``Authorization`` / ``api-key`` / ``x-api-key`` / ``proxy-authorization`` field (a server echoing the request's
  headers in an error body, or a model repeating them in an answer) by ``[redacted]``.
* :func:`public_url` strips an endpoint URL's userinfo (``user:pass@``) and the values of credential-looking query
  parameters (``key``, ``api_key``, ``token``, ``access_token``, ``secret``, ``password``, ``sig``, ``signature``,
  ``auth``…) before the URL is written to a manifest, results or an export.

* :func:`redact_urls` applies :func:`public_url` to every URL inside a text (an error line, a note).

Pure functions (no IO).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

REDACTED = "[redacted]"

_BEARER = re.compile(r"(?i)\b(bearer)(\s+|%20)(?=[A-Za-z._~+/=\-]*[0-9])[A-Za-z0-9._~+/=\-]{8,}")
_AUTH_FIELD = re.compile(
    r"""(?ix)
    (["']?(?:proxy-)?authori[sz]ation["']?|["']?x?-?api[-_]?key["']?)   # the field name, maybe quoted
    (\s*[:=]\s*["']?)                                                    # separator
    ((?:(?:bearer|basic|token|digest)\s+)?[^\s"',;}]+)                   # [scheme] and one token
    """
)
_SECRET_PARAM = re.compile(
    r"(?i)^(?:.*[-_])?(?:key|apikey|api[-_]?key|token|access[-_]?token|auth|authorization|secret|client[-_]?secret|"
    r"password|passwd|pwd|sig|signature|credential|credentials|session)$"
)
_MIN_KEY_LENGTH = 4  # a shorter "key" would redact ordinary words


def redact(text: str, secrets: tuple[str | None, ...] = ()) -> str:
    """``text`` with each of ``secrets`` (the API key's value) and any bearer token / authorization field value
    replaced by ``[redacted]``."""
    for secret in secrets:
        if secret and len(secret) >= _MIN_KEY_LENGTH and secret in text:
            text = text.replace(secret, REDACTED)
    lowered = text.lower()
    if "bearer" in lowered:
        text = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    if "author" in lowered or "key" in lowered:
        text = _AUTH_FIELD.sub(lambda m: m.group(1) + m.group(2) + REDACTED, text)
    return text


def public_url(url: str) -> str:
    """``url`` without userinfo and with credential-looking query parameter values replaced by ``[redacted]``; a
    text that is not a URL is returned redacted by :func:`redact` only."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return redact(url)
    if not parts.scheme or not parts.netloc:
        return redact(url)
    netloc = (f"[{host}]" if ":" in host else host) + (f":{port}" if port is not None else "")
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = "&".join(
            f"{quote(k, safe='')}={REDACTED if _SECRET_PARAM.match(k) else quote(v, safe='')}" for k, v in pairs
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


_URL = re.compile(r"""https?://[^\s'"<>()]+""", re.IGNORECASE)


def redact_urls(text: str) -> str:
    """``text`` with every http(s) URL in it replaced by its :func:`public_url` (the last edge before a line is
    printed)."""
    if "://" not in text:
        return text
    return _URL.sub(lambda m: public_url(m.group(0)), text)
