"""``python -m denoc_bridge_cli``: the ``denoc-bridge`` console script."""

import sys

from denoc_bridge_cli import main

sys.exit(main())
