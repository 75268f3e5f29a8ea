import sys

from kanerobot.cli import main

# guarded so that importing the module (Sphinx's autosummary walks the package) runs nothing
if __name__ == "__main__":
    sys.exit(main())
