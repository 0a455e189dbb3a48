#!/bin/sh
test_description='flux-dws plugins for flux-core: --coral2-chassis (CLI), rabbit frobnicator, rabbit validator

The CLI plugin is found through FLUX_CLI_PLUGINPATH, the job-ingest plugins
through [ingest.*] plugins = [<path of the plugin file>], as a venv install
enables them (doc/guide/admin-plugins.rst).'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_flux

# the broker's Python finds flux_dws in the source tree and the venv's packages
PYTHONPATH="$top_srcdir/src/python:$top_srcdir/build/src/python:$(python3 -c 'import site; print(site.getsitepackages()[0])')"
export PYTHONPATH
FLUX_CLI_PLUGINPATH="$top_srcdir/etc/cli/plugins"
export FLUX_CLI_PLUGINPATH
PLUGINS="$top_srcdir/src/python/flux_dws/flux_plugins"
DW_GOOD="#DW jobdw type=xfs capacity=1GiB name=scratch"
export DW_GOOD

test_expect_success 'an R with a Fluxion graph (flux-dws2jgf, kind system)' '
	flux-dws2jgf --cluster-name kind \
		--from-config "$top_srcdir/t/data/rabbitmapping/kind-resource.toml" \
		"$top_srcdir/t/data/rabbitmapping/kind.json" >R.json &&
	jq -e .scheduling.graph R.json >/dev/null &&
	mkdir -p conf &&
	printf "[resource]\npath = \"%s/R.json\"\nnoverify = true\n" "$(pwd)" \
		>conf/resource.toml
'

test_expect_success 'the options are listed by flux run --list-plugins and --help' '
	flux run --list-plugins >list.out &&
	grep -e "--coral2-chassis" list.out &&
	grep -e "--coral2-rabbit-cores" list.out &&
	flux submit --help >help.out &&
	grep -e "--coral2-chassis" help.out
'

cat >chassis.sh <<'EOF2'
flux run --dry-run --coral2-chassis=2 -N4 hostname >run.json || exit 1
flux submit --dry-run --coral2-chassis=4 -N4 hostname >submit.json || exit 1
flux batch --dry-run --coral2-chassis=1 -N2 --wrap hostname >batch.json || exit 1
flux alloc --dry-run --coral2-chassis=2 -N2 hostname >alloc.json || exit 1
flux run --dry-run --coral2-chassis=2 --coral2-rabbit-cores=4 -N4 hostname >cores.json || exit 1
flux run --dry-run -N4 hostname >plain.json || exit 1
flux run --dry-run --coral2-chassis=3 -N4 hostname 2>divide.err && exit 1
flux run --dry-run --coral2-chassis=2 hostname 2>nodes.err && exit 1
flux run --dry-run --coral2-chassis=0 -N4 hostname 2>zero.err && exit 1
flux run --dry-run --coral2-chassis=1 -N2-4 hostname 2>range.err && exit 1
flux run --dry-run --coral2-rabbit-cores=4 -N4 hostname 2>cores-alone.err && exit 1
# a job of the root instance (a sub-instance) sees the root's graph
flux run -N1 flux start \
	flux run --dry-run --coral2-chassis=1 -N1 hostname >sub.json || exit 1
exit 0
EOF2

test_expect_success 'under a Fluxion graph, the options rewrite the jobspec or say why not' '
	flux start --config-path="$(pwd)/conf" sh chassis.sh
'

test_expect_success '--coral2-chassis=2 -N4: chassis(2){node(2){slot}}' '
	jq -c .resources run.json >run.res &&
	jq -c ".resources[0].with[0]" plain.json >plain-node.res &&
	test "$(jq -c ".resources[0] | {type, count}" run.json)" = "{\"type\":\"chassis\",\"count\":2}" &&
	test "$(jq ".resources | length" run.json)" = 1 &&
	test "$(jq ".resources[0].with | length" run.json)" = 1 &&
	test "$(jq -c ".resources[0].with[0] | {type, count, exclusive}" run.json)" = \
		"{\"type\":\"node\",\"count\":2,\"exclusive\":true}" &&
	test "$(jq -c ".resources[0].with[0].with[0]" run.json)" = "$(cat plain-node.res)" &&
	test "$(jq -c .tasks run.json)" = "$(jq -c .tasks plain.json)" &&
	test "$(jq .attributes.system.allow_rabbits run.json)" = null
'

test_expect_success 'flux submit, batch and alloc take the options too' '
	test "$(jq -c ".resources[0] | [.type, .count, .with[0].count]" submit.json)" = "[\"chassis\",4,1]" &&
	test "$(jq -c ".resources[0] | [.type, .count, .with[0].count]" batch.json)" = "[\"chassis\",1,2]" &&
	test "$(jq -c ".resources[0] | [.type, .count, .with[0].count]" alloc.json)" = "[\"chassis\",2,1]"
'

test_expect_success '--coral2-rabbit-cores=4: a storage_node with 4 exclusive cores, allow_rabbits' '
	test "$(jq -c ".resources[0].with[1]" cores.json)" = \
		"{\"type\":\"storage_node\",\"count\":1,\"with\":[{\"type\":\"core\",\"count\":4,\"exclusive\":true}]}" &&
	test "$(jq .attributes.system.allow_rabbits cores.json)" = true
'

test_expect_success 'bad uses get one clear error line each' '
	for f in divide nodes zero range cores-alone; do
		test "$(wc -l <$f.err)" -eq 1 || return 1
	done &&
	grep "flux-run: ERROR: --coral2-chassis=3: the node count 4 is not a multiple of 3" divide.err &&
	grep "flux-run: ERROR: --coral2-chassis requires -N, --nodes" nodes.err &&
	grep "flux-run: ERROR: --coral2-chassis must be a positive integer, not 0" zero.err &&
	grep "flux-run: ERROR: --coral2-chassis requires a fixed node count, not -N 2-4" range.err &&
	grep "flux-run: ERROR: --coral2-rabbit-cores requires --coral2-chassis" cores-alone.err
'

test_expect_success 'a sub-instance asks the root instance for the graph' '
	test "$(jq -c ".resources[0] | [.type, .count]" sub.json)" = "[\"chassis\",1]"
'

test_expect_success 'without a Fluxion graph --coral2-chassis is refused' '
	test_must_fail flux start \
		flux run --dry-run --coral2-chassis=2 -N4 hostname 2>nograph.err &&
	grep "flux-run: ERROR: --coral2-chassis: the root instance has no Fluxion resource graph" \
		nograph.err
'

test_expect_success 'configure the rabbit frobnicator and validator plugins in job-ingest' '
	mkdir -p ingest &&
	cp conf/resource.toml ingest/ &&
	cat >ingest/ingest.toml <<-EOF3 &&
	[ingest.validator]
	plugins = ["jobspec", "$PLUGINS/validator/rabbit.py"]
	[ingest.frobnicator]
	plugins = ["defaults", "constraints", "$PLUGINS/frobnicator/rabbit.py"]
	[rabbit.presets]
	scratch = "$DW_GOOD"
	EOF3
	cat ingest/ingest.toml
'

cat >ingest.sh <<'EOF4'
set -x
id=$(flux submit --urgency=hold --requires=pbatch -S allow_rabbits=true \
	-S dw="$DW_GOOD" hostname) || exit 1
flux job info $id jobspec >widened.json || exit 1
id=$(flux submit --urgency=hold --requires=pbatch -S dw="$DW_GOOD" hostname) || exit 1
flux job info $id jobspec >kept.json || exit 1
id=$(flux submit --urgency=hold -S dw=scratch hostname) || exit 1
flux submit --urgency=hold -S dw="#DW jobdw type=zfs capacity=1GiB name=scratch" \
	hostname 2>baddw.err && exit 1
flux submit --urgency=hold -S dw=5 hostname 2>notstring.err && exit 1
flux submit --urgency=hold -S dw="$DW_GOOD" -S dw_failure_tolerance=-1 \
	hostname 2>tolerance.err && exit 1
flux submit --urgency=hold -S allow_rabbits=true -S dw="$DW_GOOD" \
	hostname 2>noconstraints.err && exit 1
flux submit --urgency=hold hostname >/dev/null || exit 1
flux cancel --all
exit 0
EOF4

test_expect_success 'job-ingest runs the plugins on every submission' '
	flux start --config-path="$(pwd)/ingest" sh ingest.sh
'

test_expect_success 'frobnicator: dw + allow_rabbits ORs the rabbit property into the constraints' '
	test "$(jq -c .attributes.system.constraints widened.json)" = \
		"{\"or\":[{\"properties\":[\"pbatch\"]},{\"properties\":[\"rabbit\"]}]}" &&
	test "$(jq -c .attributes.system.constraints kept.json)" = "{\"properties\":[\"pbatch\"]}"
'

test_expect_success 'frobnicator: allow_rabbits without constraints is refused' '
	grep "Is the constraints frobnicator plugin loaded?" noconstraints.err
'

test_expect_success 'validator: refusals carry flux dws check'"'"'s words' '
	flux-dws check "#DW jobdw type=zfs capacity=1GiB name=scratch" >check.out;
	sed "s/^DWS workflow interactions failed: //" check.out >check.msg &&
	grep -F "$(cat check.msg)" baddw.err &&
	grep "dw must be a string or a list of strings" notstring.err &&
	grep "dw_failure_tolerance must be" tolerance.err &&
	for f in baddw notstring tolerance; do
		test "$(wc -l <$f.err)" -eq 1 || return 1
	done
'

test_done
