"""The Kubernetes-facing layer of flux-dws (official ``kubernetes`` client).

One module per room, top first; each imports only modules below it in
this list, and nothing here imports the service
(t/python/k8s/test_layers.py checks both):

``layer``      ``KubeLayer``: connect, start the watches, submit, barriers, stop
``writing``    the writer pool (``WriterPool``) and its retries
``watching``   one list+watch thread per kind (``KindWatch``, ``WatchSpec``)
``api``        raw API calls: JSON in, (status, JSON) out, no retries
``kinds``      the kinds the service reads and writes, and where they live
``settings``   KubeSettings: pool size, retries, timeouts, the config keys
``events``     what the layer posts: ``Post`` and the event shapes
``errors``     KubeError, the transport errors, reading an error answer
``crd``        the DWS and NNF API groups, their versions, the probe
"""
