"""Exceptions raised by flux_dws."""


class DwsError(Exception):
    """A libdws call failed; str(exc) is libdws' message naming the input."""
