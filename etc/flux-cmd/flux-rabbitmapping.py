#!/bin/false
# flux rabbitmapping: installed into flux-core's command directory (fluxcmddir), where
# flux finds it and runs it with flux-core's own Python and Python path
# ('flux rabbitmapping'), which finds the flux_dws package through its link in
# <fluxlibdir>/python3.X.
import sys

from flux_dws.cli.rabbitmapping import main

sys.exit(main())
