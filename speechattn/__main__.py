"""`python -m speechattn` (torchrun runs `-m speechattn.cli` the same way)."""

import sys

from speechattn.cli import main

sys.exit(main())
