"""flux-dws: Flux integration with HPE Rabbit near-node storage (DWS)."""

from pkgutil import extend_path

# Let the compiled extension live in a build directory next to the sources
# during development (PYTHONPATH=src/python:build/src/python), as well as in
# the installed package.
__path__ = extend_path(__path__, __name__)

__version__ = "0.1.0"
