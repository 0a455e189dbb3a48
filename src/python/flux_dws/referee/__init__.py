"""The referee: the same scenarios run against the emulator and against
the real thing, and every difference listed.  ``referee`` compares the
emulator's API server with kube-apiserver (``flux dws referee``);
``ctlreferee`` compares the emulator's DWS/nnf-sos controllers with the
real managers (``python -m flux_dws.referee.ctlreferee``).
"""
