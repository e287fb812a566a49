"""Issue states in conversations: when a device's error code is present and when it is gone.

Support threads (KGERMAR's motivating example) are about a state that comes and goes: "my
Inkwell 3000 shows error E-42", "no E-42 error at all", "the E-42 error is back". Each
sentence of a conversation turn that mentions a code (`CODE` entities) yields a
`has_error` candidate between the device and the code: negated when the sentence says the
code is absent or resolved ("no", "without", "fixed", "resolved", ...), positive
otherwise; codes named as identifiers ("ticket AC-10482") are not states. Conditional
and interrogative sentences ("if E-42 comes back", "has it shown
E-42?") assert nothing and are skipped. The device is a `PRODUCT` mentioned in the turn,
else the conversation's most mentioned product (its `context_device`); without one there
is nothing to attach the state to. Documents are not read for states: they describe
product lines, not one device's history. The fact fold turns the events into intervals
(`has_error` is multi-valued: a retraction closes only its own code).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from transforms.ids import content_id
from transforms.segmenting import sentence_spans

EXTRACTOR = "state_events/v1"
RELATION = "has_error"
CONFIDENCE = 0.85
CODE_LABELS = {"CODE"}
DEVICE_LABELS = {"PRODUCT"}
_ABSENT = re.compile(r"\b(no|not|without|never|fixed|fixes|resolved|gone|cleared|sorted)\b", re.I)
_HYPOTHETICAL = re.compile(r"\b(if|whether|unless|in case)\b", re.I)
_IDENTIFIER = re.compile(r"\b(ticket|case|order|serial|invoice|reference|number)\s*$", re.I)


def state_events(segment: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """`has_error` candidates of one conversation turn (see module doc)."""
    mentions = segment.get("mentions") or []
    devices = [m for m in mentions if m["label"] in DEVICE_LABELS]
    device = devices[0]["text"] if devices else segment.get("context_device")
    if not segment.get("speaker") or not device:
        return
    text = segment["text"]
    for start, end in sentence_spans(text):
        sentence = text[start:end]
        if sentence.rstrip().endswith("?") or _HYPOTHETICAL.search(sentence):
            continue
        codes = [
            m
            for m in mentions
            if m["label"] in CODE_LABELS
            and start <= m["char_start"] < end
            and not _IDENTIFIER.search(text[start : m["char_start"]])
        ]
        for code in codes:
            yield {
                "candidate_id": content_id(segment["segment_id"], RELATION, code["char_start"]),
                "collection": segment["collection"],
                "segment_id": segment["segment_id"],
                "doc_id": segment["doc_id"],
                "head_text": device,
                "head_start": devices[0]["char_start"] if devices else -1,
                "head_end": devices[0]["char_end"] if devices else -1,
                "relation": RELATION,
                "tail_text": code["text"],
                "tail_start": code["char_start"],
                "tail_end": code["char_end"],
                "negated": bool(_ABSENT.search(sentence)),
                "confidence": CONFIDENCE,
                "pattern": "state_event",
                "extractor": EXTRACTOR,
            }
