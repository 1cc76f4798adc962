"""What a connector name may be: addressable in a URL, printable, and bounded in length.

Kafka Connect refuses names containing ``/`` or ISO control characters (U+0000-U+001F,
U+007F-U+009F), because no URL could address them, and trims surrounding whitespace. It sets
no length limit; Sluice takes Kafka's topic-name limit, 249 characters: a name ends up in
record keys of the internal topics (``status-task-<name>-<n>``), in the sink's consumer group
``connect-<name>`` and in log lines, and a 1.5-million-character name once made the status
write fail after the connector had been stored. Any other Unicode is fine (the ``Location``
header carries it percent-encoded).

``PATTERN`` is the same rule for the OpenAPI schema, so a client generating requests from it
never builds a name the API refuses.
"""

from __future__ import annotations

MAX_LENGTH = 249
_CONTROL = "\\x00-\\x1f\\x7f-\\x9f"
# At least one character that is neither whitespace, "/" nor a control character.
PATTERN = f"^[^/{_CONTROL}]*[^/\\s{_CONTROL}][^/{_CONTROL}]*$"


def _is_control(ch: str) -> bool:
    code = ord(ch)
    return code < 0x20 or 0x7F <= code <= 0x9F


def problem(name: str) -> str | None:
    """Why ``name`` (untrimmed, as sent) cannot name a connector; None when it can."""
    if len(name) > MAX_LENGTH:
        return f"must be at most {MAX_LENGTH} characters (got {len(name)})"
    if not name.strip():
        return "must not be empty"
    if "/" in name or any(_is_control(ch) for ch in name):
        return "must not contain '/' or control characters"
    return None
