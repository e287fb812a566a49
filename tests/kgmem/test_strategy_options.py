"""`--option KEY=VALUE` of `kgmem query` and `kgmem bench retrieval`: parsed as JSON where
it parses, refused clearly where it is not KEY=VALUE."""

from __future__ import annotations

import argparse

import pytest

from kgmem.cli.app import parser as build_parser
from kgmem.cli.common import strategy_option


def test_values_are_json_where_they_parse_else_text():
    assert strategy_option("vector_probes=0") == ("vector_probes", 0)
    assert strategy_option("damping=0.5") == ("damping", 0.5)
    assert strategy_option("query_links=named") == ("query_links", "named")
    assert strategy_option("flag=true") == ("flag", True)
    assert strategy_option("restriction=a=b") == ("restriction", "a=b")


@pytest.mark.parametrize("text", ["vector_probes", "=3", " =3"])
def test_a_malformed_option_is_refused(text):
    with pytest.raises(argparse.ArgumentTypeError, match="KEY=VALUE"):
        strategy_option(text)


def test_query_and_bench_retrieval_collect_repeated_options():
    parser = build_parser()
    query = parser.parse_args(["query", "who?", "--option", "a=1", "--option", "b=x"])
    assert dict(query.options) == {"a": 1, "b": "x"}
    bench = parser.parse_args(["bench", "retrieval", "--option", "vector_probes=0"])
    assert dict(bench.options) == {"vector_probes": 0}
    assert parser.parse_args(["query", "who?"]).options == []
