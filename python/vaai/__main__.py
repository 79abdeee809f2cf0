"""python3 -m vaai: the same as vaaictl."""

import sys

from .cli import main

sys.exit(main())
