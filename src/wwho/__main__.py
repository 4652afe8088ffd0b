import sys

from wwho.cli import main

sys.exit(main())
