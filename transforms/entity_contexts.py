"""KGERMAR's entity text embedding: e_text = MeanPool(LM(context_C(e, d))), C = 64 tokens.

For each entity, the text around its mentions is embedded and the token vectors of the
mention span are mean-pooled, so the vector says what the entity *is in its context*
rather than what its name looks like. The paper pools a 3B LM's hidden states over the
span of one mention; here the sentence encoder (MiniLM by default) plays the LM, and an
entity with several mentions averages the pooled vectors of at most `MAX_MENTIONS`
windows: the first mention of each segment it appears in, from its first `MAX_MENTIONS`
segments by segment id (so the choice is deterministic). The paper pools one mention per
context and builds one graph per context; it is silent on entities seen in several
contexts, so the cap is our choice: one window per segment, because a second mention in
the same segment shares most of its window's words (a list of names, a repeated subject)
and adds encoder work, not context.

The window is `CONTEXT_TOKENS` whitespace tokens including the mention (half before,
half after, shifted when the text ends), cut from the mention's segment. Windows are
stored as text with the span marked by `SPAN_OPEN`/`SPAN_CLOSE`, so the LanceDB sync
re-embeds only entities whose windows changed. The pooled vector of each marked window
(`window_vectors`) is what the build caches, not the entity's joined windows: an entity
that gains a mention in new documents has only that window encoded, its other windows
come from the cache, and the entity vector is their mean again (`pool_contexts`).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from transforms.consolidation import normalize_name
from transforms.embedding import encode, encoder_dimension, has_token_outputs, token_batches
from transforms.embedding_cache import Embed

CONTEXT_TOKENS = 64
MAX_MENTIONS = 8
SPAN_OPEN, SPAN_CLOSE = "⟦", "⟧"
WINDOW_SEPARATOR = "\n⁂\n"
_MARKS = str.maketrans("", "", SPAN_OPEN + SPAN_CLOSE + "⁂")


def context_window(text: str, start: int, end: int, tokens: int = CONTEXT_TOKENS) -> str:
    """`tokens` whitespace tokens of `text` around the span [start, end), span marked."""
    clean = text.translate(_MARKS)
    before, span, after = clean[:start].split(), clean[start:end], clean[end:].split()
    budget = max(tokens - len(span.split()), 0)
    left = min(len(before), budget // 2 + max(budget - budget // 2 - len(after), 0))
    right = min(len(after), budget - left)
    pieces = [*before[len(before) - left :], f"{SPAN_OPEN}{span}{SPAN_CLOSE}", *after[:right]]
    return " ".join(pieces)


def context_rows(
    mentions: Iterable[Mapping[str, object]], entity_of: Mapping[str, str]
) -> list[dict[str, str]]:
    """One row per entity: `entity_id` and `contexts` (its marked windows, joined).

    `mentions` rows carry `surface`, `segment_id`, `segment_text`, `char_start` and
    `char_end` (offsets in the segment); a surface resolves through `entity_of`
    (normalised key -> entity id), unresolved ones are skipped."""
    first: dict[str, dict[str, tuple[int, int, str]]] = defaultdict(dict)
    for m in mentions:
        entity = entity_of.get(normalize_name(str(m["surface"])))
        text, start, end = str(m["segment_text"]), int(m["char_start"]), int(m["char_end"])
        if entity is None or not 0 <= start < end <= len(text):
            continue
        kept = first[entity].get(str(m["segment_id"]))
        if kept is None or (start, end) < kept[:2]:
            first[entity][str(m["segment_id"])] = (start, end, text)
    return [
        {
            "entity_id": entity,
            "contexts": WINDOW_SEPARATOR.join(
                context_window(text, start, end)
                for _, (start, end, text) in sorted(by_segment.items())[:MAX_MENTIONS]
            ),
        }
        for entity, by_segment in sorted(first.items())
    ]


def windows_of(contexts: Iterable[str]) -> list[list[str]]:
    """The marked windows of each joined `contexts` string (a row of `context_rows`)."""
    return [joined.split(WINDOW_SEPARATOR) for joined in contexts]


def split_marked(window: str) -> tuple[str, int, int]:
    """(plain text, span start, span end) of a marked window."""
    start = window.index(SPAN_OPEN)
    end = window.index(SPAN_CLOSE) - len(SPAN_OPEN)
    return window.replace(SPAN_OPEN, "").replace(SPAN_CLOSE, ""), start, end


def span_pooled_encoder(window_embed: Embed) -> Embed:
    """An `embed` function for `sync_table`: contexts strings -> normalised entity vectors,
    each marked window's vector coming from `window_embed` (`window_vectors`, usually
    behind the embedding cache, so a window is encoded once across builds)."""
    return functools.partial(pool_contexts, window_embed=window_embed)


def encode_contexts(contexts: Sequence[str], model: str, batch_size: int = 64) -> np.ndarray:
    """Per contexts string: the normalised mean of its windows' span-pooled vectors."""
    window_embed = functools.partial(window_vectors, model=model, batch_size=batch_size)
    return pool_contexts(contexts, window_embed)


def pool_contexts(contexts: Sequence[str], window_embed: Embed) -> np.ndarray:
    """Per contexts string: the normalised mean of its marked windows' vectors.

    The distinct marked windows go to `window_embed` in one call, ordered by their plain
    text, so windows sharing a text (mentions of several entities in one short segment)
    sit together and reach the encoder in the same chunk."""
    rows = windows_of(contexts)
    distinct = sorted({w for ws in rows for w in ws}, key=lambda w: (split_marked(w)[0], w))
    vectors = np.asarray(window_embed(distinct), np.float32)
    if not rows:
        return np.zeros((0, vectors.shape[1]), np.float32)
    position = {w: i for i, w in enumerate(distinct)}
    pooled = np.array([vectors[[position[w] for w in ws]].mean(axis=0) for ws in rows])
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def window_vectors(windows: Sequence[str], model: str, batch_size: int = 64) -> np.ndarray:
    """Per marked window: the mean of `model`'s token vectors over the marked span.

    Windows with the same plain text run through the encoder once, and the distinct texts
    are batched in length order, so padding stays small; each window's span is pooled
    from its text's token vectors, which padding does not change.

    An encoder without token outputs (the packaged e5 engine) gives each window its plain
    text's sentence vector instead: the entity is still described by its contexts, not
    pooled over its span."""
    if not windows:
        return np.zeros((0, encoder_dimension(model)), np.float32)
    marked = [split_marked(w) for w in windows]
    if not has_token_outputs(model):
        distinct = sorted({text for text, _, _ in marked})
        by_text = dict(zip(distinct, encode(distinct, model, batch_size), strict=True))
        return np.array([by_text[text] for text, _, _ in marked], np.float32)
    spans: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    for row, (text, start, end) in enumerate(marked):
        spans[text].append((row, start, end))
    texts = sorted(spans, key=len)
    vectors = np.zeros((len(windows), encoder_dimension(model)), np.float32)
    for batch in token_batches(texts, model, batch_size):
        for i, text_row in enumerate(batch.rows):
            offsets, hidden = batch.offsets[i], batch.states[i]
            real = batch.mask[i] & (offsets[:, 1] > offsets[:, 0])
            for row, start, end in spans[texts[text_row]]:
                span = real & (offsets[:, 0] < end) & (offsets[:, 1] > start)
                vectors[row] = hidden[span if span.any() else real].mean(axis=0)
    return vectors
