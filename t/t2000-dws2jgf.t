#!/bin/sh
test_description='flux-dws2jgf and flux-getrabbit on the kind test system'

. "$(dirname "$0")"/sharness.sh

data="$SHARNESS_TEST_SRCDIR/data/rabbitmapping"

test_expect_success 'dws2jgf builds R from a config and adds the graph' '
	flux-dws2jgf --cluster-name kind --from-config "$data/kind-resource.toml" \
		"$data/kind.json" >R.json &&
	python3 -c "import json,sys; d=json.load(open(\"R.json\")); \
		assert d[\"execution\"][\"nodelist\"] == [\"compute-[01-04]\"]; \
		n=d[\"scheduling\"][\"graph\"][\"nodes\"]; \
		assert sum(v[\"metadata\"][\"type\"]==\"ssd\" for v in n) == 72"
'

test_expect_success 'dws2jgf reads R on stdin and --only-sched writes the graph' '
	python3 -c "import json; d=json.load(open(\"R.json\")); d.pop(\"scheduling\"); \
		print(json.dumps(d))" >R-nosched.json &&
	flux-dws2jgf --only-sched --cluster-name kind "$data/kind.json" \
		<R-nosched.json >sched.json &&
	python3 -c "import json; a=json.load(open(\"sched.json\")); \
		b=json.load(open(\"R.json\"))[\"scheduling\"]; assert a == b"
'

test_expect_success 'dws2jgf output is deterministic' '
	flux-dws2jgf --cluster-name kind "$data/kind.json" <R-nosched.json >a.json &&
	flux-dws2jgf --cluster-name kind "$data/kind.json" <R-nosched.json >b.json &&
	cmp a.json b.json
'

test_expect_success 'dws2jgf fails with a message and no output on a bad mapping' '
	echo "{\"computes\": {}, \"rabbits\": {\"r\": {\"capacity\": 1, \"hostlist\": \"zz1\"}}}" \
		>bad.json &&
	test_must_fail flux-dws2jgf "bad.json" <R-nosched.json >out.json 2>err &&
	test_must_be_empty out.json &&
	grep "compute node .zz1. of rabbit .r. is not in R" err
'

test_expect_success 'dws2jgf rejects zero chunks' '
	test_must_fail flux-dws2jgf -c 0 "$data/kind.json" <R-nosched.json 2>err &&
	grep "chunks-per-nnf" err
'

test_expect_success 'getrabbit maps rabbits and computes' '
	test "$(flux-getrabbit -m "$data/kind.json")" = "kind-worker[2-3]" &&
	test "$(flux-getrabbit -m "$data/kind.json" kind-worker2)" = "compute-[01-03]" &&
	test "$(flux-getrabbit -m "$data/kind.json" -c compute-04)" = "kind-worker3"
'

test_expect_success 'getrabbit names an unknown compute' '
	test_must_fail flux-getrabbit -m "$data/kind.json" -c nosuch1 2>err &&
	grep "nosuch1" err
'

test_expect_success FLUX 'flux dws2jgf --from-config agrees with flux R parse-config' '
	flux R parse-config "$data/kind-resource.toml" >flux-R.json &&
	python3 -c "import json; a=json.load(open(\"flux-R.json\")); \
		b=json.load(open(\"R.json\")); b.pop(\"scheduling\"); assert a == b, (a, b)"
'

prereq_fluxion

test_expect_success FLUXION 'Fluxion loads the graph and schedules a rabbit job' '
	cat >fluxion.toml <<-EOT &&
	[resource]
	noverify = true
	path = "$(pwd)/R.json"
	[sched-fluxion-resource]
	match-format = "rv1"
	EOT
	cat >job.sh <<-"EOT" &&
	#!/bin/sh
	set -e
	for k in $(seq 0 35); do
		flux ion-resource set-status /kind/chassis0/ssd$k up
	done
	flux run --dry-run -N1 hostname >js.json
	python3 -c "import json; j=json.load(open(\"js.json\")); \
		node=j[\"resources\"][0]; \
		j[\"resources\"]=[{\"type\":\"slot\",\"count\":1,\"label\":\"rabbit\",\"with\":[ \
			dict(node,count=1),{\"type\":\"ssd\",\"count\":10,\"exclusive\":True}]}]; \
		json.dump(j, open(\"js2.json\",\"w\"))"
	id=$(flux job submit js2.json)
	flux job wait-event -t 30 $id alloc
	flux job info $id R | grep -q ssd
	EOT
	chmod +x job.sh &&
	flux start -s1 --config-path=fluxion.toml ./job.sh
'

test_done
