#!/bin/sh
# A job Lustre file system with data staged in and out.
#DW jobdw type=lustre capacity=1TiB name=lus
#DW copy_in source=/p/lustre1/me/input destination=$DW_JOB_lus/input
#DW copy_out source=$DW_JOB_lus/output destination=/p/lustre1/me/output
flux run -N16 ./app --in "$DW_JOB_lus/input" --out "$DW_JOB_lus/output"
