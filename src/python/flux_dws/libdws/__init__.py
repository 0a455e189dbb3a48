"""libdws through cffi: one module per libdws module it wraps, each a thin
typed layer over the C (the extension is ``flux_dws._libdws``; ``_ffi``
holds the conventions of its surface).  The modules by libdws' rooms
(src/common/libdws/, doc/guide/libdws.rst):

=============  ==============================================================
room           modules
=============  ==============================================================
``util/``      ``hostlist`` (RFC 29), ``idset`` (RFC 22)
``parse/``     ``directives`` (``#DW`` and its rules), ``breakdown``
               (DirectiveBreakdown -> jobspec)
``placement/`` ``jgf`` (the Fluxion graph), ``lustre``, ``rssd`` (node-local
               ssd vertices)
``config/``    ``rabbitconf`` (the ``[rabbit]`` table), ``resource_config``
               (R from a ``[resource]`` table)
``engine/``    ``engine`` (the dws service's decisions), ``limits``
               (``[rabbit.limits]``), ``wfstates`` (the Workflow's states)
``jobtap/``    ``jobsm`` (dws-jobtap's job machine), ``dataout``
``wire/``      ``explain`` (what a DWS error means, in plain words)
=============  ==============================================================

Nothing here does I/O: the service, the emulator and the commands call
these; these call only libdws.
"""
