# flux-dws: load the dws service in rc1 (flux-modprobe(1)).  Its entry in
# modprobe.d/dws.toml keeps it to rank 0, after the job manager, and to
# instances whose configuration has a [rabbit] table; rc3 removes it.


def setup(context):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN201
    context.load_modules(["dws"])
