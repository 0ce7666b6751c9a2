"""What a dead letter keeps of the record it rejects: a bounded excerpt, named fields redacted, or only a hash (pure).

A rejected record may describe a person (race, sex, age, score); the dead-letter topic is read by operators who need
to see why a record failed, not who it was about.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

REDACTED = "<redacted>"


def record_text(payload: Any) -> str:
    """A raw payload as text: lines without their line break, bytes decoded (bad bytes replaced), dicts as JSON."""
    if isinstance(payload, bytes):
        return payload.decode("utf-8", errors="replace").rstrip("\r\n")
    if isinstance(payload, str):
        return payload.rstrip("\r\n")
    return orjson.dumps(payload, default=str, option=orjson.OPT_NON_STR_KEYS).decode()


@dataclass(frozen=True)
class LetterRecord:
    """How a dead letter shows its record: `excerpt` (the text, with `redact`ed fields' values replaced, cut to
    `max_chars`, a cut one with its full length and SHA-256; an entry ending in `*` redacts every field it begins) or `hash` (only the SHA-256 of the raw bytes, to match
    it against the source)."""

    keep: str = "excerpt"
    max_chars: int = 2000
    redact: tuple[str, ...] = ()

    def __call__(self, payload: Any) -> str:
        if self.keep == "hash":
            return _sha256(payload)
        text = self._redacted(payload) if self.redact else record_text(payload)
        if len(text) <= self.max_chars:
            return text
        return f"{text[: self.max_chars]}… ({len(text):,} characters in all, {_sha256(payload)})"

    def _redacted(self, payload: Any) -> str:
        """The record with the named fields' values replaced; a record that is not a JSON object cannot show a field, so it is hashed."""
        record = payload
        if not isinstance(payload, dict):
            try:
                record = orjson.loads(payload)
            except (orjson.JSONDecodeError, TypeError):
                record = None
        if not isinstance(record, dict):
            return LetterRecord(keep="hash")(payload)
        return record_text({name: REDACTED if self.redacts(name) else value for name, value in record.items()})

    def redacts(self, name: str) -> bool:
        """A named field, or a column of a field read from several (`race_p_*`: a probabilities field's CSV columns)."""
        return name in self.redact or any(entry.endswith("*") and name.startswith(entry[:-1]) for entry in self.redact)


def _sha256(payload: Any) -> str:
    """The SHA-256 of the raw record, to find it in the source."""
    raw = payload if isinstance(payload, bytes) else record_text(payload).encode()
    return f"sha256:{hashlib.sha256(raw).hexdigest()}"


DEFAULT = LetterRecord()
"""Dead letters keep the first 2,000 characters of their record, nothing redacted."""
