"""An evaluation is fingerprinted with the ranking code: a changed source file means the
snapshot is evaluated again, not reported from the rows the earlier code stored."""

from __future__ import annotations

from pathlib import Path

from memory.evaluation import ranking_code_digest, source_digest


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_the_digest_follows_every_python_source_and_nothing_else(tmp_path: Path) -> None:
    package = _package(tmp_path / "pkg", {"a.py": "x = 1\n", "sub/b.py": "y = 2\n"})
    before = source_digest(package)
    assert source_digest(package) == before
    (package / "notes.txt").write_text("not code")
    assert source_digest(package) == before
    (package / "sub" / "b.py").write_text("y = 3\n")
    changed = source_digest(package)
    assert changed != before
    (package / "sub" / "b.py").rename(package / "c.py")  # same bytes, another module
    assert source_digest(package) not in (before, changed)


def test_the_ranking_code_digest_covers_the_query_package_and_transforms() -> None:
    import memory
    import transforms

    roots = [Path(p.__file__).parent for p in (memory, transforms)]
    assert ranking_code_digest() == source_digest(*roots)
    assert len(ranking_code_digest()) == 64
