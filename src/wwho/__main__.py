"""``python -m wwho``: the ``wwho`` command run as a module, as the console script runs it.

This module only calls :func:`wwho.cli.main` and exits with its status; it parses no arguments
and holds no behaviour of its own.
"""

import sys

from wwho.cli import main

sys.exit(main())
