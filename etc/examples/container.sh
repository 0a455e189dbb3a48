#!/bin/sh
# A user container on the rabbits, with job GFS2 and persistent Lustre storage.
#DW jobdw type=gfs2 capacity=1TB name=my-gfs2
#DW persistentdw name=some-lustre
#DW container name=my-foo profile=foo DW_JOB_foo_local_storage=my-gfs2 DW_PERSISTENT_foo_persistent_storage=some-lustre
flux run -N2 ./client
