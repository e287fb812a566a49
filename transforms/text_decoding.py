"""Decoding an input file's bytes: UTF-8 first, then what a BOM names, then Windows-1252.

Rules, in order:
1. a byte-order mark names the encoding: UTF-8, UTF-16 or UTF-32 (little or big endian;
   Windows Notepad and PowerShell write UTF-16 with a BOM), and the mark is dropped;
2. otherwise UTF-8, strict;
3. otherwise Windows-1252 (cp1252), strict, which reads every printable Latin-1 (ISO
   8859-1) byte the same way and adds the curly quotes and dashes Windows editors write;
   accepted only when the result holds no control characters besides tab, line and
   page breaks, so that a binary file renamed `.txt` is still quarantined.
Anything else is not read (the caller quarantines it with `DecodeError`'s message).

Why not a statistical detector (`charset-normalizer`, installed as a dependency of
`requests`): on short texts it guesses wrong: it names "café crème" in Latin-1 cp1006
(Urdu) and decodes it to Arabic letters. Western European text is the case users hit;
a rule that reads it right every time beats a guess that is mostly right on long texts.
"""

from __future__ import annotations

import codecs
import re

BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
"""Byte-order marks and the codec that reads (and drops) them; UTF-32 LE's mark starts
with UTF-16 LE's, so it is tried first."""
FALLBACK = "cp1252"
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")


class DecodeError(ValueError):
    """The bytes are in no encoding the loader reads; the message says which it tried."""


def decode_text(data: bytes) -> str:
    """The text of a file's bytes by the module's rules; DecodeError otherwise."""
    for bom, codec in BOMS:
        if data.startswith(bom):
            try:
                return data.decode(codec)
            except UnicodeDecodeError as exc:
                name = codec.removesuffix("-sig")
                raise DecodeError(f"invalid {name} after its byte-order mark: {exc}") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        utf8_error = exc
    try:
        text = data.decode(FALLBACK)
    except UnicodeDecodeError:
        text = ""
    if text and not _CONTROL.search(text):
        return text
    raise DecodeError(
        f"not text in UTF-8 ({utf8_error.reason} at byte {utf8_error.start}), "
        "UTF-16/32 with a byte-order mark, or Windows-1252/Latin-1"
    )
