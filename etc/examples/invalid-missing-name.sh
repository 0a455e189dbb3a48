#!/bin/sh
# INVALID: every jobdw needs a name.
#DW jobdw type=xfs capacity=10GiB
flux run -N1 ./app
