"""The `kgmem` command line; each command lives in its own module of this package.

    kgmem build --collection NAME --input PATH [--input PATH ...]
    kgmem backfill --collections A,B | --from DATE --to DATE [--split NAME] [--max-concurrent N]
    kgmem query "TEXT" [--snapshot ID] [--strategy NAME] [-k N] [--valid-at DATE] [--explain]
    kgmem facts ENTITY [--valid-at DATE] [--known-at DATE] [--relation R] [--json]
    kgmem entities show|split|merge NAME [OTHER] --collection NAME
    kgmem eval extraction|consolidation|window-recall|temporal --dataset PATH [--json]
    kgmem eval retrieval --benchmark locomo|musique [--strategies all|A,B] [--json]
    kgmem train relation-classifier --dataset PATH
    kgmem train fusion-weights --questions FILE.jsonl
    kgmem bench extraction|retrieval|build [...]
    kgmem snapshots [--collection NAME] [--json]
    kgmem ui [--port 3000]

Every command takes `--home` (default: `$KGMEM_HOME`, else ./kgmem_home). An error is one
line and exit code 2; `kgmem --debug COMMAND ...` shows its traceback instead.
"""

from kgmem.cli.app import main

__all__ = ["main"]
