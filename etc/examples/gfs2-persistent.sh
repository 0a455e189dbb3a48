#!/bin/sh
# Shared GFS2 per rabbit plus an existing persistent Lustre file system.
#DW jobdw type=gfs2 capacity=200GiB name=shared
#DW persistentdw name=project-lustre
flux run -N2 ./app
