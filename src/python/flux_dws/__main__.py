import sys

from flux_dws.cli.main import main

sys.exit(main())
