"""Compatibility levels, composed from each format's one-way check as Confluent does.

``ParsedSchema.compatibility_errors(previous)`` says whether the new schema can read what the
previous one wrote (BACKWARD). FORWARD asks the reverse (the previous schema reads what the
new one writes), FULL both. A plain level checks the latest live version only; a
``_TRANSITIVE`` level checks every live version, newest first, and reports the first that
fails, with the lines Confluent appends (``{oldSchemaVersion: n}``, ``{oldSchema: '...'}``,
``{compatibility: 'LEVEL'}``), which clients print verbatim.
"""

from __future__ import annotations

from collections.abc import Sequence

from schema_registry.errors import invalid_compatibility
from schema_registry.formats import ParsedSchema

LEVELS = (
    "NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL",
    "FULL_TRANSITIVE",
)  # fmt: skip


def level(value: object) -> str:
    """The normalised level name; 42203 for anything else."""
    name = str(value or "").strip().upper()
    if name not in LEVELS:
        raise invalid_compatibility(value)
    return name


def check(
    compatibility: str,
    new: ParsedSchema,
    previous: Sequence[tuple[int, ParsedSchema]],
) -> list[str]:
    """Messages explaining why ``new`` breaks ``compatibility`` against ``previous``
    ((version, schema) pairs, oldest first, live versions only); [] when it does not."""
    if compatibility == "NONE" or not previous:
        return []
    targets = previous if compatibility.endswith("_TRANSITIVE") else previous[-1:]
    backward = compatibility.startswith(("BACKWARD", "FULL"))
    forward = compatibility.startswith(("FORWARD", "FULL"))
    for version, old in reversed(targets):
        errors: list[str] = []
        if backward:
            errors += new.compatibility_errors(old)
        if forward:
            errors += old.compatibility_errors(new)
        if errors:
            return [
                *errors,
                f"{{oldSchemaVersion: {version}}}",
                f"{{oldSchema: '{old.canonical}'}}",
                f"{{validateFields: 'false', compatibility: '{compatibility}'}}",
            ]
    return []
