"""The DuckDB call cache: keyed lookups, insert-or-ignore, persistence across opens, and
waiting while another process holds the file."""

import subprocess
import sys
import time

import duckdb

from schemas.llm_outputs import LLM_CACHE
from transforms.llm.base import Completion
from transforms.llm.cache import CacheEntry, LLMCache, cache_key

HOLD_LOCK = (
    "import sys, time, duckdb\n"
    "con = duckdb.connect(sys.argv[1])\n"
    "print('locked', flush=True)\n"
    "time.sleep(1.0)\n"
    "con.close()\n"
)


def _entry(key: str, text: str) -> CacheEntry:
    completion = Completion(text, 12, 3, "served-model", "openai")
    return CacheEntry(key, "openai", "m", "real_atomic_facts/v1", "h", completion, 0.5)


def test_key_depends_on_every_part():
    base = cache_key("openai", "m", "p/v1", "h")
    assert base == cache_key("openai", "m", "p/v1", "h")
    variants = [
        cache_key("llama_cpp", "m", "p/v1", "h"),
        cache_key("openai", "m2", "p/v1", "h"),
        cache_key("openai", "m", "p/v2", "h"),
        cache_key("openai", "m", "p/v1", "h2"),
    ]
    assert base not in variants and len(set(variants)) == 4


def test_put_get_and_ignore_duplicates(cache):
    assert cache.get_many(["k1"]) == {}
    cache.put(_entry("k1", "first"))
    cache.put(_entry("k1", "second"))
    got = cache.get_many(["k1", "k2"])
    assert list(got) == ["k1"]
    assert got["k1"] == Completion("first", 12, 3, "served-model", "openai")
    assert cache.count() == 1


def test_persists_across_instances(tmp_path):
    LLMCache(tmp_path / "c.duckdb").put(_entry("k", "answer"))
    assert LLMCache(tmp_path / "c.duckdb").get_many(["k"])["k"].text == "answer"


def test_waits_for_a_lock_held_by_another_process(tmp_path):
    path = tmp_path / "shared.duckdb"
    LLMCache(path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        started = time.monotonic()
        LLMCache(path, lock_timeout_s=20).put(_entry("k", "after the lock"))
        assert time.monotonic() - started > 0.5
    finally:
        holder.wait(timeout=20)
    assert LLMCache(path).get_many(["k"])["k"].text == "after the lock"


def test_table_matches_its_arrow_schema(cache):
    cache.put(_entry("k", "answer"))
    with duckdb.connect(str(cache.path)) as con:
        table = con.sql("SELECT * FROM llm_cache").to_arrow_table()
    assert table.schema.names == LLM_CACHE.names
    assert table.cast(LLM_CACHE).num_rows == 1
