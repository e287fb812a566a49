"""Where flat retrieval loses to whole-passage search on a MuSiQue-layout benchmark, one
cause at a time.

    python -m benchmarks.flat_gap QUESTIONS.json CORPUS.json [--json-out FILE]

Each row changes one thing from the row above and scores passage recall@2/5/10 of BM25
and of the packaged MiniLM, both ways of counting a hit: the exact gold passage (what
`kgmem eval retrieval` counts) and any passage with a gold title (what
`../shared/reference/musique_flat_recall.py` counts; 85 of MuSiQue's 1,764 titles name
several passages):

1. `reference`: each passage whole, `title` newline `text`; textbook BM25 (k1 1.2,
   b 0.75, lower-cased `\\w+` tokens); MiniLM cosine.
2. `128-token chunks, top 10 segments`: the earlier product: chunks of 128 tokens packed
   greedily, the title only on the first, LanceDB's full-text analyser, and the first 10
   segments' distinct passages (fewer than 10 when chunks of one passage rank together).
3. `+ k distinct passages`: a passage ranked by its best chunk, k distinct passages.
4. `+ title on every chunk`: each chunk indexed with its document's title.
5. `+ 200-token chunks`: chunks that fill MiniLM's 256-word-piece window.
6. `+ balanced chunks`: as few chunks, of even sizes (the product's default).
7. `textbook BM25 tokens`: row 6 with the reference's BM25 in place of LanceDB's analyser.
8. `LanceDB, no stemming`: row 6 with LanceDB's analyser without its stemmer.

Nothing is built or stored: the units are cut with the product's segmenter and rendered
with its search text, encoded with the product's encoder, and indexed in a throwaway
LanceDB folder.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import scipy.sparse as sp
from lancedb.index import FTS

from transforms.embedding import encode
from transforms.graph_links import segment_search_text
from transforms.segmenting import chunk_spans, greedy_chunk_spans

KS = (2, 5, 10)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Unit:
    """One indexed unit: the passage it belongs to and the text that is indexed."""

    passage: int
    text: str


@dataclass(frozen=True)
class GapRow:
    """Recall (%) of one configuration, per signal and way of counting."""

    step: str
    signal: str
    exact: dict[int, float]
    by_title: dict[int, float]


def load(questions_path: Path, corpus_path: Path) -> tuple[list[dict], list[dict], list[set[int]]]:
    """Questions, passages, and per question the indices of its gold passages."""
    questions = json.loads(questions_path.read_text())
    corpus = json.loads(corpus_path.read_text())
    index = {(p["title"], p["text"]): i for i, p in enumerate(corpus)}
    gold = [
        {index[(p["title"], p["paragraph_text"])] for p in q["paragraphs"] if p["is_supporting"]}
        for q in questions
    ]
    return questions, corpus, gold


def units_of(
    corpus: Sequence[dict], chunk_tokens: int | None, titled: bool, balanced: bool = False
) -> list[Unit]:
    """Whole passages (`chunk_tokens` None) or chunks (packed greedily or balanced), with
    or without the title on each."""
    chunker = chunk_spans if balanced else greedy_chunk_spans
    units = []
    for i, passage in enumerate(corpus):
        text = f"{passage['title']}\n{passage['text']}"
        spans = [(0, len(text))] if chunk_tokens is None else chunker(text, chunk_tokens)
        for start, end in spans:
            row = {"text": text[start:end], "kind": "chunk", "title": passage["title"]}
            units.append(Unit(i, segment_search_text(row) if titled else row["text"]))
    return units


def textbook_bm25(units: Sequence[Unit]) -> Callable[[str], np.ndarray]:
    """The reference's BM25 (k1 1.2, b 0.75, lower-cased word tokens) as a scorer."""
    docs = [_WORD.findall(u.text.lower()) for u in units]
    vocabulary = {t: j for j, t in enumerate(sorted({t for d in docs for t in d}))}
    rows, cols, counts = [], [], []
    for i, doc in enumerate(docs):
        for token, count in Counter(doc).items():
            rows.append(i)
            cols.append(vocabulary[token])
            counts.append(count)
    tf = sp.csr_matrix((counts, (rows, cols)), shape=(len(docs), len(vocabulary)), dtype=float)
    lengths = np.array([len(d) for d in docs], float)
    frequency = np.bincount(cols, minlength=len(vocabulary))
    idf = np.log(1 + (len(docs) - frequency + 0.5) / (frequency + 0.5))
    norm = 1.2 * (0.25 + 0.75 * lengths / lengths.mean())
    weighted = tf.tocoo()
    weighted.data = weighted.data * 2.2 / (weighted.data + norm[weighted.row])
    weighted = weighted.tocsc()

    def score(question: str) -> np.ndarray:
        terms = [vocabulary[t] for t in set(_WORD.findall(question.lower())) if t in vocabulary]
        if not terms:
            return np.zeros(len(docs))
        return np.asarray(weighted[:, terms] @ idf[terms]).ravel()

    return score


def lance_bm25(units: Sequence[Unit], folder: Path, stem: bool) -> Callable[[str], np.ndarray]:
    """LanceDB's native full text over the units (its default analyser, or without stems)."""
    table = lancedb.connect(str(folder)).create_table(
        f"units_{'stem' if stem else 'plain'}",
        pa.table({"i": list(range(len(units))), "text": [u.text for u in units]}),
    )
    table.create_index("text", config=FTS(stem=stem))

    def score(question: str) -> np.ndarray:
        scores = np.full(len(units), -np.inf)
        for hit in table.search(question, query_type="fts").limit(200).to_list():
            scores[hit["i"]] = hit["_score"]
        return scores

    return score


def dense(units: Sequence[Unit], questions: Sequence[dict]) -> Callable[[int], np.ndarray]:
    vectors = encode([u.text for u in units])
    asked = encode([q["question"] for q in questions], role="query")
    return lambda i: vectors @ asked[i]


def passages(units: Sequence[Unit], scores: np.ndarray, segments: int | None) -> list[int]:
    """Distinct passages by their best unit; with `segments`, only among the top units."""
    order = np.argsort(-scores, kind="stable")
    if segments is not None:
        order = order[:segments]
    return list(dict.fromkeys(units[j].passage for j in order if np.isfinite(scores[j])))


def recall(rankings: Sequence[list[int]], gold: Sequence[set], key: Callable) -> dict[int, float]:
    """Mean fraction of each question's gold units (passages mapped through `key`) in the
    first k passages of its ranking, in %."""
    fractions = {k: [] for k in KS}
    for ranking, passages_wanted in zip(rankings, gold, strict=True):
        wanted = {key(p) for p in passages_wanted}
        for k in KS:
            fractions[k].append(len(wanted & {key(p) for p in ranking[:k]}) / len(wanted))
    return {k: round(100 * float(np.mean(v)), 1) for k, v in fractions.items()}


def run(questions_path: Path, corpus_path: Path) -> list[GapRow]:
    questions, corpus, gold = load(questions_path, corpus_path)
    titles = [p["title"] for p in corpus]
    rows: list[GapRow] = []

    def score(
        step: str, units: list[Unit], signal: str, scorer: Callable, segments: int | None
    ) -> None:
        rankings = [passages(units, scorer(i, q), segments) for i, q in enumerate(questions)]
        rows.append(
            GapRow(
                step,
                signal,
                recall(rankings, gold, int),
                recall(rankings, gold, titles.__getitem__),
            )
        )

    with tempfile.TemporaryDirectory() as folder:
        ladder = [
            ("reference", units_of(corpus, None, True), "textbook", None),
            ("128-token chunks, top 10 segments", units_of(corpus, 128, False), "lance", 10),
            ("+ k distinct passages", units_of(corpus, 128, False), "lance", None),
            ("+ title on every chunk", units_of(corpus, 128, True), "lance", None),
            ("+ 200-token chunks", units_of(corpus, 200, True), "lance", None),
            ("+ balanced chunks", units_of(corpus, 200, True, balanced=True), "lance", None),
        ]
        for number, (step, units, lexical, segments) in enumerate(ladder):
            bm25 = (
                textbook_bm25(units)
                if lexical == "textbook"
                else lance_bm25(units, Path(folder) / str(number), stem=True)
            )
            score(step, units, "bm25", lambda _i, q, f=bm25: f(q["question"]), segments)
            semantic = dense(units, questions)
            score(step, units, "dense", lambda i, _q, f=semantic: f(i), segments)
        final = ladder[-1][1]
        textbook = textbook_bm25(final)
        score("textbook BM25 tokens", final, "bm25", lambda _i, q: textbook(q["question"]), None)
        plain = lance_bm25(final, Path(folder) / "plain", stem=False)
        score("LanceDB, no stemming", final, "bm25", lambda _i, q: plain(q["question"]), None)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("questions", type=Path)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--json-out", type=Path, help="also write the rows as JSON")
    args = parser.parse_args(argv)
    rows = run(args.questions, args.corpus)
    print(f"{'step':36s} {'signal':6s} " + " ".join(f"R@{k:<3d}" for k in KS) + " | by title R@5")
    for row in rows:
        exact = " ".join(f"{row.exact[k]:5.1f}" for k in KS)
        print(f"{row.step:36s} {row.signal:6s} {exact} | {row.by_title[5]:5.1f}")
    if args.json_out:
        args.json_out.write_text(json.dumps([asdict(r) for r in rows], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
