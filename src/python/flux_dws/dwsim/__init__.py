"""What DWS and nnf-sos decide, as pure functions (no I/O, no clock).

The emulator's controllers feed these with objects from its API store and
write back what they return; tests feed them directly.  Each module follows
the DWS/nnf-sos behaviour doc/guide/emulator.rst describes (Controllers).
"""
