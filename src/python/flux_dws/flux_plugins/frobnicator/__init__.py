"""The ``rabbit`` job-ingest frobnicator plugin (see rabbit.py)."""
