"""Input files in UTF-16 with a BOM, Windows-1252 or Latin-1 are read, binary is not."""

import codecs

import pytest

from transforms.text_decoding import DecodeError, decode_text

TEXT = "Zoë met “Acme” – in Köln, café crème.\n"


@pytest.mark.parametrize(
    "data",
    [
        TEXT.encode("utf-8"),
        codecs.BOM_UTF8 + TEXT.encode("utf-8"),
        TEXT.encode("utf-16"),
        codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"),
        TEXT.encode("utf-32"),
        TEXT.encode("cp1252"),
    ],
    ids=["utf-8", "utf-8 bom", "utf-16", "utf-16-be bom", "utf-32", "cp1252"],
)
def test_each_encoding_reads_the_same_text(data):
    assert decode_text(data) == TEXT


def test_latin1_reads_as_itself():
    assert decode_text("café crème, Ångström".encode("latin-1")) == "café crème, Ångström"


def test_binary_bytes_are_refused_with_what_was_tried():
    with pytest.raises(DecodeError, match=r"not text in UTF-8 .* Windows-1252/Latin-1"):
        decode_text(bytes(range(256)) * 4)
