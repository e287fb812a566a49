"""Kinds of bad build arguments and settings a user may give, each refused before the first
stage: a one-line error naming the argument, exit status 2, and no warehouse created.

Each kind is (extra build arguments, environment variables, a word the error must name);
`BAD_COLLECTION` and `NO_INPUT` stand for the collection name and the input paths the
check fills in. `benchmarks.reliability.check_bad_arguments` runs each as a real CLI build.
"""

from __future__ import annotations

from typing import NamedTuple


class BadArgument(NamedTuple):
    flags: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    named: str = ""
    """A word the one-line error must contain: the argument or setting it names."""
    collection: str = "args"
    empty_input: bool = False
    """Build an empty folder instead of the corpus."""


BAD_ARGUMENTS: dict[str, BadArgument] = {
    "invalid collection name": BadArgument(collection="Bad Name", named="collection name"),
    "missing input path": BadArgument(flags=("--input", "/no/such/input"), named="--input"),
    "empty input folder": BadArgument(empty_input=True, named="holds no file"),
    "chunk budget 0": BadArgument(flags=("--chunk-tokens", "0"), named="chunk_tokens"),
    "negative chunk budget": BadArgument(flags=("--chunk-tokens", "-5"), named="chunk_tokens"),
    "unknown spaCy model": BadArgument(flags=("--spacy-model", "nosuch"), named="--spacy-model"),
    "missing encoder folder": BadArgument(flags=("--encoder", "/missing/dir"), named="--encoder"),
    "file size limit not a number": BadArgument(
        env=(("KGMEM_MAX_FILE_MB", "abc"),), named="KGMEM_MAX_FILE_MB"
    ),
    "encoder threads not a number": BadArgument(
        env=(("KGMEM_ENCODER_THREADS", "many"),), named="KGMEM_ENCODER_THREADS"
    ),
}
