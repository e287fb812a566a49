"""Markup masked out of what NER reads, the name-surface test, and Markdown title text."""

import pytest

from transforms.markup import is_name_surface, mask_markup, title_text


def test_the_mask_keeps_length_and_line_breaks_and_blanks_only_markup():
    text = (
        "See [the docs](https://x.org/a) and <b>Acme</b>.\n"
        "```\nexport A_B=1\n```\n"
        "@article{key,\n  archivePrefix={arXiv},\n}\nRun `make demo` in Leeds."
    )
    masked = mask_markup(text)
    assert len(masked) == len(text)
    assert [i for i, c in enumerate(text) if c == "\n"] == [
        i for i, c in enumerate(masked) if c == "\n"
    ]
    for kept in ("See [the docs]", "Acme", "in Leeds."):
        assert kept in masked
    for gone in ("https", "<b>", "A_B", "archivePrefix", "make demo", "@article"):
        assert gone not in masked


def test_an_unclosed_code_fence_runs_to_the_end():
    assert mask_markup("Intro.\n```python\nimport Paris\n").strip() == "Intro."


@pytest.mark.parametrize(
    ("surface", "name"),
    [
        ("Lyon Cohen", True),
        ("AC/DC", True),
        ("AT&T", True),
        ("archivePrefix={arXiv}", False),
        ("CUDA_VISIBLE_DEVICES", False),
        ("github.com/meta/llama", False),
        ("https://example.org", False),
        ("www.example.org", False),
        ("/usr/local", False),
        ("user@example.org", False),
        ("   ", False),
    ],
)
def test_name_surfaces(surface, name):
    assert is_name_surface(surface) is name


@pytest.mark.parametrize(
    ("line", "title"),
    [
        ('<h1 align="center">Kgmem <img src="logo.png"/></h1>', "Kgmem"),
        ("[![CI](https://ci/badge.svg)](https://ci)", ""),
        ("# The [kgmem](https://x) memory", "The kgmem memory"),
        ("<p align='center'>", ""),
    ],
)
def test_markdown_title_text(line, title):
    assert title_text(line) == title
