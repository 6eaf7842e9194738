"""`python -m speechattn.cli` (torchrun runs it this way)."""

import sys

from speechattn.cli import main

sys.exit(main())
