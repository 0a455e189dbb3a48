"""flux-core plugins shipped with flux-dws (they import flux; nothing here
is imported by the rest of flux_dws).

- ``frobnicator/rabbit.py``: job-ingest frobnicator plugin ``rabbit``
- ``validator/rabbit.py``: job-ingest validator plugin ``rabbit``
- ``cli/chassis.py``: flux run/submit/batch/alloc plugin (a copy of
  etc/cli/plugins/chassis.py, installed with the package)

Their decisions live in flux_dws.ingest and flux_dws.jobspec_chassis.  How
to enable them: doc/guide/admin-plugins.rst.
"""
