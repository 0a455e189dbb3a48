"""A Kubernetes API server in Python: what the emulator serves and what
its controllers and the dws service talk to (discovery, CRUD, merge and
JSON patch, resourceVersion, watch and bookmarks, finalizers, field and
label selectors, tables, TLS and bearer tokens, HTTP-level faults), over
an in-memory store with SQLite persistence (``store``, ``persist``), and
``remote``, the same store's interface (StoreApi) over another API
server's HTTP.  It knows nothing of DWS or NNF: those are the
controllers' (``flux_dws.emulator``), which need only StoreApi and run on
this server or on a real kube-apiserver alike.  Nothing here imports
``flux_dws.emulator`` (t/python/emulator/test_import_graph.py).
"""
