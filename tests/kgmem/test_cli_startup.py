"""The CLI starts light: parsing arguments (`--help`, argument errors) loads no orchestrator,
runner or model library, and `kgmem query` loads the query package without Dagster or Beam."""

from __future__ import annotations

import subprocess
import sys

from tests.import_probe import loaded_after

HEAVY = ("dagster", "apache_beam", "torch", "transformers", "spacy", "lancedb")


def _loaded_after(code: str) -> list[str]:
    return loaded_after(code, HEAVY)


def test_parsing_every_command_loads_no_heavy_library():
    assert _loaded_after("from kgmem.cli.app import parser\nparser()") == []


def test_help_and_argument_errors_exit_before_any_heavy_import():
    code = (
        "from kgmem.cli.app import main\n"
        "for argv in (['--help'], ['query'], ['build', '--no-such-flag']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit as exc:\n"
        "        assert exc.code in (0, 2), exc.code\n"
    )
    assert _loaded_after(code) == []


def test_query_package_imports_without_orchestrator_or_runner():
    loaded = _loaded_after("from memory import Memory\nMemory.open")
    assert "dagster" not in loaded and "apache_beam" not in loaded


def _import_beam_after_routing(home, verbose: bool) -> subprocess.CompletedProcess:
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from kgmem.cli.common import route_library_logs\n"
        f"route_library_logs(Path(sys.argv[1]), {verbose})\n"
        "import apache_beam.io.gcp.bigquery, lancedb, tempfile\n"
        "lancedb.connect(tempfile.mkdtemp()).create_table('t', [{'x': 1}], mode='overwrite')\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(home)], capture_output=True, text=True, timeout=120
    )


def test_library_warnings_go_to_the_log_file_and_to_stderr_only_when_verbose(tmp_path):
    quiet = _import_beam_after_routing(tmp_path / "quiet", verbose=False)
    assert quiet.returncode == 0 and "apitools" not in quiet.stderr
    assert "WARN" not in quiet.stderr  # LanceDB's "No existing dataset ... will be created"
    assert "apitools" in (tmp_path / "quiet" / "logs" / "kgmem.log").read_text()
    loud = _import_beam_after_routing(tmp_path / "loud", verbose=True)
    assert "apitools" in loud.stderr
