"""The ``rabbit`` job-ingest validator plugin (see rabbit.py)."""
