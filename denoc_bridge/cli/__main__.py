"""``python -m denoc_bridge.cli``: the command line."""

import sys

from denoc_bridge.cli.main import main

sys.exit(main())
