"""The ``flux-dws`` command (also ``flux dws`` where Flux is installed)."""
