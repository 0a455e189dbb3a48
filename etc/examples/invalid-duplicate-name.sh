#!/bin/sh
# INVALID: two jobdw directives may not share a name.
#DW jobdw type=xfs capacity=10GiB name=scratch
#DW jobdw type=raw capacity=10GiB name=scratch
flux run -N1 ./app
