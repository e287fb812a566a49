"""Issue-state events: presence, absence, hypotheticals, identifiers, device context."""

from transforms.state_events import state_events


def _turn(text: str, mentions: list[tuple[str, str]], device: str | None = "Inkwell 3000") -> dict:
    spans = []
    for surface, label in mentions:
        start = text.index(surface)
        spans.append(
            {"text": surface, "label": label, "char_start": start, "char_end": start + len(surface)}
        )
    return {
        "segment_id": "s",
        "collection": "c",
        "doc_id": "d",
        "text": text,
        "speaker": "Dana",
        "context_device": device,
        "mentions": spans,
    }


def _events(text, mentions, device="Inkwell 3000"):
    return [
        (e["head_text"], e["tail_text"], e["negated"])
        for e in state_events(_turn(text, mentions, device))
    ]


def test_presence_and_absence():
    assert _events(
        "My Inkwell 3000 shows error E-42.", [("Inkwell 3000", "PRODUCT"), ("E-42", "CODE")]
    ) == [("Inkwell 3000", "E-42", False)]
    assert _events("There was no E-42 error at all.", [("E-42", "CODE")]) == [
        ("Inkwell 3000", "E-42", True)
    ]
    assert _events("The E-42 error is back.", [("E-42", "CODE")]) == [
        ("Inkwell 3000", "E-42", False)
    ]


def test_hypotheticals_questions_and_identifiers_assert_nothing():
    assert _events("Reply if E-42 comes back.", [("E-42", "CODE")]) == []
    assert _events("Has it shown E-42 since then?", [("E-42", "CODE")]) == []
    assert _events("I opened ticket AC-10482 for you.", [("AC-10482", "CODE")]) == []


def test_no_device_no_state():
    assert _events("It shows E-42.", [("E-42", "CODE")], device=None) == []
