#!/bin/sh
test_description='flux-dws check validates #DW directives as a job would'

. "$(dirname "$0")"/sharness.sh

examples="$SHARNESS_TEST_SRCDIR/../etc/examples"

test_expect_success 'a valid directive is accepted' '
	flux-dws check "#DW jobdw type=xfs capacity=10GiB name=scratch" >out &&
	test "$(cat out)" = "OK: 1 directive"
'

test_expect_success 'several directives in one string are split' '
	flux-dws check -v "#DW jobdw type=lustre capacity=1TiB name=lus #DW copy_in source=/a destination=\$DW_JOB_lus/" >out &&
	grep "OK: 2 directives" out &&
	grep "^  #DW copy_in" out
'

test_expect_success 'an invalid type is refused with the DWS text' '
	test_must_fail flux-dws check "#DW jobdw type=zfs capacity=10GiB name=scratch" >out &&
	test "$(cat out)" = "DWS workflow interactions failed: admission webhook \"vworkflow.kb.io\" denied the request: argument '"'"'type'"'"' invalid string '"'"'zfs'"'"'"
'

test_expect_success 'the sample job scripts get the expected verdicts' '
	for s in "$examples"/*.sh; do
		case $(basename $s) in
		invalid-*) test_must_fail flux-dws check -s "$s" || return 1 ;;
		*) flux-dws check -s "$s" || return 1 ;;
		esac
	done
'

test_expect_success 'presets and maximums come from a rabbit config' '
	cat >rabbit.toml <<-EOF &&
	[rabbit.presets]
	small = "#DW jobdw type=xfs capacity=10GiB name=small"
	[rabbit.policy.maximums]
	xfs = 5
	EOF
	flux-dws check -c rabbit.toml small &&
	test_must_fail flux-dws check -c rabbit.toml -N 2 small >out &&
	grep "Requested a total of 10 GiB of xfs storage per node but max is 5 GiB per node" out
'

test_expect_success 'directives can come from a file or stdin' '
	echo "#DW jobdw type=raw capacity=1TiB name=rr" >dw.txt &&
	flux-dws check -f dw.txt &&
	flux-dws check -f - <dw.txt
'

test_expect_success 'usage errors exit 2 with a message' '
	test_expect_code 2 flux-dws check 2>err &&
	grep "no directives given" err &&
	test_expect_code 2 flux-dws check -f /nonexistent 2>err &&
	grep "/nonexistent" err
'

test_done
