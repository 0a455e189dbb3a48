"""Generate the C source of the cffi extension flux_dws._libdws.

Run by meson at build time:  _libdws_build.py OUT.c SELF CDEF...
The declarations come from the per-module .cdef files (plain C prototypes
that mirror the libdws headers); set_source includes the umbrella header.
"""

import sys
from pathlib import Path

from cffi import FFI


def main(argv: list[str]) -> int:
    out_c = argv[1]
    cdefs = [Path(p) for p in argv[2:] if p.endswith(".cdef")]
    ffi = FFI()
    ffi.cdef("\n".join(p.read_text() for p in cdefs))
    ffi.set_source("flux_dws._libdws", '#include "dws.h"\n')
    ffi.emit_c_code(out_c)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
