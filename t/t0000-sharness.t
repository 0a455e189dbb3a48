#!/bin/sh
test_description='the sharness harness and the installed flux-dws command'

. "$(dirname "$0")"/sharness.sh

test_expect_success 'flux-dws is on PATH and reports its version' '
	flux-dws version >version.out &&
	grep "^flux-dws [0-9]" version.out
'

test_expect_success 'flux-dws with no command prints usage and fails' '
	test_must_fail flux-dws 2>usage.err &&
	grep "usage: flux-dws" usage.err
'

test_expect_success 'FLUX prerequisite matches whether flux is on PATH' '
	if command -v flux >/dev/null 2>&1; then
		test_have_prereq FLUX
	else
		! test_have_prereq FLUX
	fi
'

test_done
