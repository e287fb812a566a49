"""kgmem's command line (`kgmem.cli`): the `kgmem` command and `python -m kgmem`.

It sits above every other package: it parses arguments with nothing heavy loaded, then
imports only what the chosen command needs (the query package for `kgmem query`; Dagster,
Beam and the models for `kgmem build`)."""
