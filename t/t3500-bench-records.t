#!/bin/sh
test_description='bench_scale record check: thousands of reads on one handle (issue 51.4)

t/bench/bench_scale.py checks every ended job'"'"'s KVS record after its
workload.  It read each key with flux.kvs.get, which (flux-core 0.88) on a
key that is missing or a directory raises before it destroys its lookup'"'"'s
future: that future'"'"'s private reactor, an epoll instance watching the
handle'"'"'s epoll fd, stays open.  After about 500 of them on one handle the
kernel refuses the next (epoll'"'"'s wakeup-path limit, EINVAL) and libev
aborts the process: "I/O watcher with invalid fd found in epoll_ctl",
the end of every El Capitan chaos run.  Here one ended job with a
rabbit_workflow memo and no record at all (every key the check reads is
missing) is checked 100 times over in one process: the check must report
what the record lacks, 100 times each, and end normally, with no more
file descriptors open than before it.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_flux
dws_pythonpath

cat >records.py <<'EOF2'
import gc
import os
import sys

sys.path.insert(0, sys.argv[1])
import bench_scale  # noqa: E402

jobid = int(sys.argv[2])
jobs = [bench_scale.Job("xfs", 1, "") for _ in range(100)]
for job in jobs:
    job.id = jobid
before = len(os.listdir("/proc/self/fd"))
problems = bench_scale.record_problems(jobs, {jobid})
gc.collect()  # a future in a cycle goes at the next collection: not a leak
grown = len(os.listdir("/proc/self/fd")) - before
for what, ids in sorted(problems.items()):
    print(f"{len(ids)} x {what}")
print(f"fds grown: {grown}")
EOF2

cat >records.sh <<'EOF2'
set -e
id=$(flux submit --urgency=hold true)
flux job memo $id rabbit_workflow=fluxjob-$(flux job id --to=dec $id)
flux job urgency $id default
flux job wait-event -t 60 $id clean
flux python records.py "$1" $(flux job id --to=dec $id)
EOF2

test_expect_success 'the record check of 100 jobs with no record ends normally' '
	flux start -s1 sh records.sh "$top_srcdir/t/bench" >records.out 2>records.err ||
	{ cat records.out records.err; false; }
'

test_expect_success 'it reports every missing key, for every job' '
	cat records.out &&
	grep -x "100 x data.dws.workflow missing" records.out &&
	grep -x "100 x data.dws.teardown not complete" records.out &&
	grep -x "100 x data.dws.timing.setup missing" records.out
'

test_expect_success 'the reads left no file descriptor open' '
	grep -x "fds grown: 0" records.out
'

test_done
