#!/bin/sh
# INVALID: zfs is not a rabbit file system type.
#DW jobdw type=zfs capacity=10GiB name=scratch
flux run -N1 ./app
