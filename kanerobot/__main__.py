import sys

from kanerobot.cli import main

sys.exit(main())
