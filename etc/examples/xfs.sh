#!/bin/sh
# Node-local XFS scratch: 10 GiB on the rabbit of every compute node.
#DW jobdw type=xfs capacity=10GiB name=scratch
flux run -N4 ./app --scratch "$DW_JOB_scratch"
