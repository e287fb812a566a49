"""Markup that must not become an entity: masking it out of the text NER reads, and the
surface test every entity mention passes.

Documents keep their markup (a README's code block answers "how do I install it?", and
segments keep char offsets into the document), so the mask is applied only to the text
handed to the NER model: each markup region is replaced by spaces of the same length
(line breaks kept), so every offset the model reports is an offset into the real text.

Masked: fenced code blocks (an unclosed fence runs to the end of the text: a chunk may
start or end inside one), inline code spans, HTML tags and comments, the targets of
Markdown links and images (`](...)`, the link text is kept), bare URLs, and BibTeX
fields (`archivePrefix={arXiv}`) and entry heads (`@article{key,`).

The surface test (`is_name_surface`) is the second line: whatever a model still returns
that holds `=`, braces, angle brackets, a backtick, a pipe, a backslash, an `@`, an
underscore joining words (`CUDA_VISIBLE_DEVICES`), a URL scheme or `www.`, or a path
(a slash at either end, or more than one) is not a name. One inner slash is allowed
("AC/DC").
"""

from __future__ import annotations

import re

_MARKUP = re.compile(
    r"(?ms)^[ \t]*(```|~~~).*?(?:^[ \t]*\1[^\n]*$|\Z)"  # fenced code block
    r"|`[^`\n]+`"  # inline code
    r"|<!--.*?(?:-->|\Z)"  # HTML comment
    r"|</?[A-Za-z][^<>\n]*>"  # HTML tag
    r"|(?<=\])\([^()\s]*(?:\s+\"[^\"\n]*\")?\)"  # Markdown link or image target
    r"|\b(?:https?|ftp)://\S+|\bwww\.\S+"  # bare URL
    r"|@[A-Za-z]+\{[^,\n]*,"  # BibTeX entry head
    r"|\b\w+\s*=\s*\{[^{}\n]*\}"  # BibTeX field
)
_TITLE_MARKUP = re.compile(
    r"<!--.*?-->|</?[A-Za-z][^<>]*>"  # HTML comment or tag
    r"|!\[[^\]]*\]\([^()]*\)"  # image
    r"|(?<=\])\([^()]*\)"  # link target (the link text stays)
)
_NOT_IN_NAMES = re.compile(r"[={}<>`|\\@]|\w_\w|://|\bwww\.")


def mask_markup(text: str) -> str:
    """`text` with its markup regions replaced by spaces (line breaks kept), same length."""
    return _MARKUP.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


def title_text(line: str) -> str:
    """The visible text of a Markdown title line: HTML, images, link targets, link
    brackets and heading marks removed, spaces collapsed ('' for a line of badges)."""
    visible = _TITLE_MARKUP.sub(" ", line).replace("[", " ").replace("]", " ")
    return " ".join(visible.lstrip().lstrip("#").split())


def is_name_surface(surface: str) -> bool:
    """Whether `surface` can be an entity's name rather than a piece of markup or code."""
    stripped = surface.strip()
    if not stripped or _NOT_IN_NAMES.search(stripped):
        return False
    return stripped.count("/") <= 1 and not stripped.startswith("/") and not stripped.endswith("/")
