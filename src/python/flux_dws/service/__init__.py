"""The dws service: the imperative shell around the libdws engine."""
