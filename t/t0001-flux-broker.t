#!/bin/sh
test_description='a flux broker can be started (needs flux-core)'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_flux

test_expect_success 'flux start runs a command in a test instance' '
	flux start -s1 flux getattr size >size.out &&
	test "$(cat size.out)" = 1
'

test_done
