#!/bin/sh
test_description='the deployment scripts under a real broker: clientmount prolog/epilog, rc1 drain

The prolog and epilog are run as the prolog runner would, with a stand-in
for systemctl that records its calls; the rc1 script runs in a batch
job whose parent job has a dws-node-failure exception.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

PROLOG="$top_srcdir/etc/prolog.d/zstop_nnf_clientmount.sh"
EPILOG="$top_srcdir/etc/epilog.d/start_nnf_clientmount.sh"
RC1="$top_srcdir/etc/rc1.d/01-rabbit"
XFS="#DW jobdw type=xfs capacity=10GiB name=scratch"

# a stand-in for systemctl, on PATH (the trash directory has a space)
mkdir -p cmd
cat >cmd/fake-ctl <<EOF
#!/bin/sh
echo "\$*" >>"$(pwd)/ctl.log"
EOF
chmod +x cmd/fake-ctl
PATH="$(pwd)/cmd:$PATH"
export NNF_CLIENTMOUNT_CTL=fake-ctl

# `flux getrabbit` as a system install has it: run by Flux's own Python
cat >cmd/flux-getrabbit <<EOF
#!/bin/sh
exec flux python -c "import sys; from flux_dws.cli.getrabbit import main; sys.exit(main())" "\$@"
EOF
chmod +x cmd/flux-getrabbit
export FLUX_EXEC_PATH_PREPEND="$(pwd)/cmd"

test_expect_success 'start the emulator and a rabbit instance' '
	start_emulator --system kind --latency zero &&
	rabbit_instance_config "$(pwd)" &&
	start_rabbit_instance "$(pwd)"
'

test_expect_success 'prolog: a rabbit job: clientmount runs until dws_environment' '
	rm -f ctl.log &&
	id=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 30 $id dws_environment &&
	FLUX_JOB_ID=$id "$PROLOG" &&
	printf "start nnf-clientmount\nstop nnf-clientmount\n" >ctl.expected &&
	test_cmp ctl.expected ctl.log &&
	flux job wait-event -t 30 $id clean
'

test_expect_success 'prolog: a job without dw: nothing' '
	rm -f ctl.log &&
	id=$(flux submit -N1 true) &&
	FLUX_JOB_ID=$id "$PROLOG" &&
	test_must_fail test -e ctl.log
'

test_expect_success 'prolog: no dws_environment within rabbit.prolog_timeout: prolog-timeout' '
	rm -f ctl.log &&
	flux-dws fault stall --state PreRun &&
	id=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 30 $id prolog-start &&
	sed -i "s/^\[rabbit\]$/[rabbit]\nprolog_timeout = \"1s\"/" conf/instance.toml &&
	flux config reload &&
	test "$(flux config get rabbit.prolog_timeout)" = 1s &&
	test_must_fail env FLUX_JOB_ID=$id "$PROLOG" &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id | grep "exception type=\"prolog-timeout\".*dws_environment timeout" &&
	echo "start nnf-clientmount" >ctl.expected &&
	test_cmp ctl.expected ctl.log &&
	flux-dws fault clear
'

test_expect_success 'epilog: starts clientmount for the unmounts' '
	rm -f ctl.log &&
	"$EPILOG" &&
	echo "start nnf-clientmount" >ctl.expected &&
	test_cmp ctl.expected ctl.log
'

test_expect_success 'rc1: a batch job drains the nodes its rabbit setup gave up' '
	cat >batch.sh <<-EOT &&
	#!/bin/sh
	"$RC1"
	flux resource drain -no "{nodelist} {reason}"
	EOT
	flux-dws fault stall --state PreRun &&
	id=$(flux batch -N2 --setattr=system.dw="$XFS" --output=batch.out batch.sh) &&
	flux job wait-event -t 30 $id prolog-start &&
	flux job raise --severity=1 --type=dws-node-failure $id -- \
		"$(flux jobs -no {nodelist} $id | flux hostlist -n 1 -)" &&
	flux-dws fault clear &&
	kubectl annotate --overwrite "workflow/fluxjob-$(flux job id --to=dec $id)" \
		flux-dws-test/kick=1 &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id | grep "^[0-9.]* start" &&
	grep "^compute-[0-9]* missing rabbit file systems\$" batch.out
'

test_expect_success 'stop the instance and the emulator' '
	stop_rabbit_instance &&
	stop_emulator
'

test_done
