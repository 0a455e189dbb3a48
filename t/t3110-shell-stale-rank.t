#!/bin/sh
test_description='dws_environment.so never waits for good on its own rank'"'"'s KVS

A job shell reads the job eventlog through its own broker, whose KVS copy
can stop a commit behind rank 0'"'"'s (flux-core #5657; it hung a CI run: the
shell on rank 1 sat in its eventlog watch for ever).  Here the job-info
service of ranks 1-3 is replaced by t/modules/stale_job_info.py, which
forwards everything to rank 0 but lets a job eventlog watch stall just
before the dws_environment event (or fail at once): each of those shells
must read the eventlog from rank 0, say so once, and run its task.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

STALE=$top_srcdir/t/modules/stale_job_info.py
DW="#DW jobdw type=xfs capacity=10GiB name=scratch"

# stale_job_info MODE: ranks 1-3 get the stale job-info in MODE
stale_job_info() {
	flux exec -r 1-3 sh -c "flux module remove job-info &&
		flux module load --name=job-info $STALE $1"
}

# run_4node NAME [SHELL-OPTS...]: a 4-node rabbit job printing its path;
# NAME.out and NAME.err keep its output, its end bounded (60 s)
run_4node() {
	name=$1; shift
	id=$(flux submit -N4 "$@" --setattr=system.dw="$DW" printenv DW_JOB_scratch) &&
	echo $id >$name.id &&
	flux job wait-event -t 60 $id clean || {
		flux job eventlog $id >&2; flux job cancel $id; return 1
	}
	flux job attach $id >$name.out 2>$name.err
}

test_expect_success 'start the emulator and a rabbit instance' '
	start_emulator --system kind --latency zero &&
	rabbit_instance_config "$(pwd)" &&
	start_rabbit_instance "$(pwd)"
'

# A loaded machine can keep a rank's KVS a few seconds behind rank 0's:
# the no-warning cases give the shells 30 s, not the default 5 s, so what
# they check is which broker is read, not how fast it is.
test_expect_success 'with current ranks every shell reads its own broker: no warning' '
	run_4node plain -o dws-env-fallback=30 &&
	test $(grep -c "^/mnt/nnf/" plain.out) = 4 &&
	test_must_fail grep "reading it from rank 0" plain.err || {
		cat plain.out plain.err >&2; return 1
	}
'

test_expect_success 'ranks 1-3: job eventlog watches stall before dws_environment' '
	stale_job_info stall &&
	flux exec -r 1 flux module list | grep "^job-info "
'

test_expect_success 'stalled ranks: each shell reads rank 0 after 1s, warns once, runs' '
	run_4node stall -o dws-env-fallback=1 &&
	test $(grep -c "^/mnt/nnf/" stall.out) = 4 &&
	grep "no verdict from the job eventlog read through this broker (rank [123]) within 1s; reading it from rank 0" stall.err >stall.warn &&
	test $(wc -l <stall.warn) = 3 &&
	test $(sort -u stall.warn | wc -l) = 3 &&
	test_must_fail grep "rank 0)" stall.err &&
	flux job status $(cat stall.id)
'

test_expect_success 'the default fallback (5 s) ends the stall too' '
	run_4node default &&
	test $(grep -c "^/mnt/nnf/" default.out) = 4 &&
	test $(grep -c "within 5s; reading it from rank 0" default.err) = 3
'

test_expect_success 'ranks 1-3: job eventlog watches fail at once' '
	flux exec -r 1-3 flux module remove job-info &&
	flux exec -r 1-3 flux module load --name=job-info $STALE error
'

test_expect_success 'failing watches: each shell reads rank 0 at once, says why' '
	run_4node error &&
	test $(grep -c "^/mnt/nnf/" error.out) = 4 &&
	test $(grep -c "failed: stale_job_info: no eventlog on this rank; reading it from rank 0" error.err) = 3
'

test_expect_success 'a bad -o dws-env-fallback fails the job, naming the option' '
	for bad in -1 soon; do
		test_must_fail flux run -N1 -o dws-env-fallback=$bad \
			--setattr=system.dw="$DW" true 2>bad.err &&
		grep "dws-env-fallback must be a number of seconds >= 0" bad.err || return 1
	done
'

test_expect_success 'ranks 1-3 get their job-info back' '
	flux exec -r 1-3 flux module remove job-info &&
	flux exec -r 1-3 flux module load job-info &&
	run_4node after -o dws-env-fallback=30 &&
	test $(grep -c "^/mnt/nnf/" after.out) = 4 &&
	test_must_fail grep "reading it from rank 0" after.err
'

test_expect_success 'stop the instance and the emulator' '
	stop_rabbit_instance &&
	stop_emulator
'

test_done
