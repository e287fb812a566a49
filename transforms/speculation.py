"""Speculative statements: relations read from future, hypothetical or question sentences.

"Can't wait to see more when I'm in Boston!" does not say that its speaker is in Boston,
and "Will Maria join Acme?" does not say that she did. REAL keeps facts below its
θ_stable (0.8) out of retrieval unless the query itself is speculative ("maybe",
"guess"), and marks such memories as speculation (see /work/shared/papers/real.md §III-B);
so a relation whose verb is speculative keeps its candidate, with its confidence
multiplied by `SPECULATIVE_FACTOR` (a single statement then sits below θ_stable) and its
extractor prefixed `speculative:`, as `transforms.reported_speech` marks reported speech.
Later plain statements of the same fact still confirm it (the fold's noisy-OR).

A verb is speculative, on spaCy's parse, when its sentence ends in '?', or when it or a
clause above it (its chain of heads up to the sentence root):
- has a modal or future auxiliary: will/'ll/wo(n't), would/'d, shall, should, could,
  might, may, must ("can" is ability, not a hypothesis, and is left out), except a
  narrative "would" ("he would later found ...", "would go on to ..."), which a
  biography uses for what did happen;
- is, above the verb itself, a verb of wish or plan: want, hope, plan, wish, intend,
  wait ("can't wait to"), expect, dream, aim, or a progressive "going to";
- is conditional: opened by "if" or "unless", or governing such a clause.
The rule reads only the parse, so it costs nothing beyond the parse the relation
patterns already need.
"""

from __future__ import annotations

from collections.abc import Iterator

from spacy.tokens import Token

SPECULATIVE_FACTOR = 0.5
SPECULATIVE_PREFIX = "speculative:"

_MODALS = frozenset(
    {"will", "'ll", "wo", "would", "'d", "shall", "should", "could", "might", "may", "must"}
)
_NARRATIVE_ADVERBS = frozenset({"later", "eventually", "subsequently", "afterwards", "soon"})
_WISH_VERBS = frozenset(
    {"want", "hope", "plan", "wish", "intend", "wait", "expect", "dream", "aim", "long"}
)
_CONDITIONS = frozenset({"if", "unless"})


def is_speculative(token: Token) -> bool:
    """Whether the statement made with the verb `token` is a question, a future, a
    hypothesis or a wish rather than an assertion (rules in the module docstring)."""
    if token.sent.text.rstrip().endswith("?"):
        return True
    for below, clause in _chain(token):
        if _has_modal(clause) or _is_conditional(clause):
            return True
        if below is not None and _wishes(clause, below):
            return True
    return False


def speculative_extractor(extractor: str) -> str:
    """The extractor name of an assertion read from a speculative statement."""
    return f"{SPECULATIVE_PREFIX}{extractor}"


def _chain(token: Token) -> Iterator[tuple[Token | None, Token]]:
    """(the token below, token) from `token` up through its heads to the sentence root."""
    below: Token | None = None
    while True:
        yield below, token
        if token.head.i == token.i:
            return
        below, token = token, token.head


def _has_modal(clause: Token) -> bool:
    for child in clause.children:
        if child.dep_ in {"aux", "auxpass"} and child.lower_ in _MODALS:
            return not (child.lower_ in {"would", "'d"} and _narrative(clause))
    return False


def _narrative(clause: Token) -> bool:
    """A "would" that tells what did happen: "would later become", "would go on to"."""
    return any(
        (c.dep_ == "advmod" and c.lower_ in _NARRATIVE_ADVERBS)
        or (c.dep_ == "prt" and c.lower_ == "on")
        for c in clause.children
    )


def _is_conditional(clause: Token) -> bool:
    if any(c.dep_ == "mark" and c.lower_ in _CONDITIONS for c in clause.children):
        return True
    return any(
        c.dep_ == "advcl" and any(m.dep_ == "mark" and m.lower_ in _CONDITIONS for m in c.children)
        for c in clause.children
    )


def _wishes(clause: Token, below: Token) -> bool:
    if clause.lemma_.lower() in _WISH_VERBS:
        return True
    return clause.lemma_.lower() == "go" and clause.tag_ == "VBG" and below.dep_ == "xcomp"
