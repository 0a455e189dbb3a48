#!/bin/sh
test_description='flux-dws check validates #DW directives as a job would'

. "$(dirname "$0")"/sharness.sh

examples="$SHARNESS_TEST_SRCDIR/../etc/examples"
dw="#DW jobdw type=xfs capacity=10GiB name=scratch"

# note_is FILE TEXT: FILE is the one line TEXT, followed by " -- " and the
# plain sentence libdws' explain table gives it (the note a job gets)
note_is() {
	test "$(wc -l <"$1")" -eq 1 &&
	line=$(cat "$1") &&
	test "${line#"$2 -- "}" != "$line" || {
		echo "expected \"$2 -- <sentence>\", got \"$line\""
		false
	}
}

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
	note_is out "DWS workflow interactions failed: admission webhook \"vworkflow.kb.io\" denied the request: argument '"'"'type'"'"' invalid string '"'"'zfs'"'"'" &&
	grep -F " -- '"'"'zfs'"'"' is not a rabbit file system type." out
'

test_expect_success 'the sample job scripts get the expected verdicts' '
	for s in "$examples"/*.sh; do
		case $(basename $s) in
		invalid-*) ;;
		*) flux-dws check -s "$s" || return 1 ;;
		esac
	done
'

denied="DWS workflow interactions failed: admission webhook \"vworkflow.kb.io\" denied the request:"
check_invalid() {
	test_must_fail flux-dws check -s "$examples/$1" >out &&
	note_is out "$denied $2"
}

test_expect_success 'each invalid example is refused with its own message' '
	check_invalid invalid-duplicate-name.sh \
		"value '"'"'scratch'"'"' must be unique within '"'"'jobdw_name'"'"'" &&
	check_invalid invalid-missing-name.sh \
		"missing required argument '"'"'^name\$'"'"'" &&
	check_invalid invalid-type.sh "argument '"'"'type'"'"' invalid string '"'"'zfs'"'"'"
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

test_expect_success 'a bad rabbit config is refused even without -N' '
	printf "[rabbit]\npolicy = 5\n" >policy.toml &&
	test_expect_code 2 flux-dws check -c policy.toml -N 2 "$dw" 2>err &&
	grep "policy.toml: rabbit.policy: must be a table" err &&
	printf "[rabbit.policy.maximums]\nxfs = \"lots\"\n" >max.toml &&
	test_expect_code 2 flux-dws check -c max.toml "$dw" 2>err &&
	grep "max.toml: rabbit.policy.maximums.xfs must be a non-negative integer" err
'

test_expect_success 'bad inputs are named in one line, never a traceback' '
	printf "\377\376" >binary &&
	test_expect_code 2 flux-dws check -f binary 2>err &&
	test $(wc -l <err) -eq 1 && grep -a "^flux-dws check: binary:1: not UTF-8 text (byte 0xff)" err &&
	echo "{" >rules.json &&
	test_expect_code 2 flux-dws check --rules rules.json "$dw" 2>err &&
	grep "rules.json:2: not valid JSON" err &&
	test_expect_code 2 flux-dws check "$(printf "#DW jobdw name=\377")" 2>err &&
	grep -a "directive 1: not UTF-8 text (byte 0xff" err &&
	test_expect_code 2 flux-dws check -N 0 "$dw" 2>err &&
	grep "must be at least 1" err &&
	test_expect_code 2 flux-dws check -N -3 "$dw" 2>err &&
	! grep Traceback err
'

test_expect_success 'flux-dws config-check names every problem of a config before a switch' '
	cat >site.toml <<-EOF &&
	[rabbit]
	setup_timeout = "ten"
	restrict_persistant = true
	drain_queues = ["pbatch"]
	[queues.pbatch]
	requires = ["batch"]
	[[resource.config]]
	hosts = "node[1-4]"
	cores = "0-3"
	properties = ["batch"]
	[job-manager]
	plugins = [ { load = "dws-jobtap.so", conf = { epilog-timeout = "soon" } } ]
	EOF
	test_expect_code 1 flux-dws config-check site.toml >cc.out &&
	cat cc.out &&
	test $(wc -l <cc.out) = 4 &&
	grep "^site.toml: rabbit.setup_timeout: must be a number of seconds" cc.out &&
	grep "^site.toml: rabbit.restrict_persistant: unknown key (did you mean restrict_persistent_creation?)" cc.out &&
	grep "^site.toml: rabbit.drain_queues: no node has the property \"pbatch\": drain queues name node properties (the nodes'"'"' properties: batch)" cc.out &&
	grep "^site.toml: job-manager.plugins\[0\] (dws-jobtap.so): conf:" cc.out &&
	mkdir -p site.d &&
	printf "[rabbit]\nsetup_timeout = 600\ndrain_queues = [\"pbatch\"]\n" >site.d/rabbit.toml &&
	printf "[[resource.config]]\nhosts = \"node[1-4]\"\ncores = \"0-3\"\nproperties = [\"pbatch\"]\n" >site.d/resource.toml &&
	flux-dws config-check site.d >ok.out &&
	test "$(cat ok.out)" = "site.d: OK ([rabbit] OK)" &&
	test_expect_code 2 flux-dws config-check nosuch.toml 2>missing.err &&
	grep "nosuch.toml" missing.err
'

test_done
