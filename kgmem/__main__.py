"""`python -m kgmem`: the kgmem command line."""

import sys

from kgmem.cli import main

sys.exit(main())
