#!/bin/sh
test_description='flux-dws installed by meson install into a fresh flux-core prefix, run as a site runs it

The Install and Configure sections of doc/guide/admin.rst are run as they
are written (their code blocks, read from the guide, with the example
directory /etc/flux/system and flux-core'"'"'s libexec directory put where this
test keeps them): meson setup/compile/install into flux-core'"'"'s prefix,
flux-dws'"'"' Python packages for flux-core'"'"'s Python, the rabbit mapping and
Fluxion graph, the instance configuration.  Then a 4-broker instance with
nothing else (no PYTHONPATH, no path into the source tree, no module or
plugin path: only what flux-core finds in its own directories) runs a
rabbit job on the emulator end to end.

flux-core'"'"'s paths are compiled into it, so the fresh prefix must be at the
same place: the script runs in a private mount namespace where a copy of
flux-core'"'"'s prefix is mounted over it (and a copy of the site-packages
directory of flux-core'"'"'s Python over that one, for the packages the guide
installs).  Nothing outside the namespace sees either: the machine'"'"'s own
prefix is never written.'

# Run again in a private mount namespace (root only); without one the
# script cannot run (see below).
if test -z "$FLUX_DWS_T3400_NS"; then
	if test "$(id -u)" = 0 && unshare --mount --propagation private true 2>/dev/null; then
		FLUX_DWS_T3400_NS=1 exec unshare --mount --propagation private /bin/sh "$0" "$@"
	fi
	FLUX_DWS_T3400_NS=none
fi

. "$(dirname "$0")"/sharness.sh

skip_all_unless_flux
test "$FLUX_DWS_T3400_NS" = 1 ||
	skip_all_because "a private mount namespace (root and unshare --mount) to lay a fresh prefix over flux-core's"
for tool in meson ninja sphinx-build pkg-config jq kubectl man; do
	command -v $tool >/dev/null 2>&1 ||
		skip_all_because "$tool (scripts/setup.sh installs it; meson, ninja and sphinx-build are in its venv)"
done
skip_all_unless_fluxion "rabbit jobs need its ssd scheduling"

FLUX_PREFIX=$(cd "$(dirname "$(command -v flux)")/.." && pwd)
export PKG_CONFIG_PATH="$FLUX_PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
test "$(pkg-config --variable=prefix flux-core)" = "$FLUX_PREFIX" ||
	skip_all_because "pkg-config's flux-core is not the flux on PATH ($FLUX_PREFIX)"
test "$FLUX_PREFIX" != /usr && test "$FLUX_PREFIX" != /usr/local ||
	skip_all_because "flux-core in its own prefix (this one, $FLUX_PREFIX, is too large to copy)"
FLUXLIBEXECDIR=$(pkg-config --variable=fluxlibexecdir flux-core)
SITEDIR=$(flux python -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
test -d "$SITEDIR" ||
	skip_all_because "flux-core's Python's site-packages directory $SITEDIR (to lay a copy over)"

# everything of this test in one directory without blanks (the trash
# directory has one, and the guide's commands do not quote paths)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/flux-dws-t3400.XXXXXX")
SITE=$WORK/etc    # the guide's /etc/flux/system
BUILD=$WORK/build
MARK=.flux-dws-t3400-$$
mkdir -p "$SITE/conf.d" "$WORK/bin"
echo "# work directory: $WORK"

# site CMD...: run CMD in the environment of a site's shell: flux-core's
# bin and the system's, nothing of this test's (no venv, no PYTHONPATH).
# SITE_EXEC=1 site CMD... &: the background process is CMD itself (its
# pid is $!), with none of sharness' descriptors (which hold its output).
site() {
	${SITE_EXEC:+exec} env -i HOME="$HOME" LANG=C.UTF-8 PATH="$FLUX_PREFIX/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
		${FLUX_URI:+FLUX_URI="$FLUX_URI"} ${KUBECONFIG:+KUBECONFIG="$KUBECONFIG"} \
		${SITE_ENV:-} "$@"
}

# guide_blocks SECTION LANG PREFIX: write the LANG code blocks of the
# admin guide's SECTION to PREFIX.1, PREFIX.2, ... with the guide's example
# paths made this test's
guide_blocks() {
	python3 - "$top_srcdir/doc/guide/admin.rst" "$@" <<-'EOF'
	import sys
	from docutils import nodes
	from docutils.core import publish_doctree
	path, title, lang, prefix = sys.argv[1:]
	tree = publish_doctree(open(path, encoding="utf-8").read(),
	                       settings_overrides={"report_level": 5})
	n = 0
	for sec in tree.findall(nodes.section):
	    if sec.next_node(nodes.title).astext() != title:
	        continue
	    for block in sec.findall(nodes.literal_block):
	        if lang in block["classes"]:
	            n += 1
	            with open(f"{prefix}.{n}", "w", encoding="utf-8") as f:
	                f.write(block.astext() + "\n")
	if n == 0:
	    sys.exit(f"{path}: no {lang} block in section {title}")
	EOF
}
site_paths() {
	sed -e "s|/etc/flux/system/|$SITE/|g" -e "s|/usr/libexec/flux/|$FLUXLIBEXECDIR/|g" "$@"
}

test_expect_success 'a fresh copy of flux-core prefix over it, in this namespace only' '
	cp -a "$FLUX_PREFIX" "$WORK/prefix" &&
	touch "$WORK/prefix/$MARK" &&
	mount --bind "$WORK/prefix" "$FLUX_PREFIX" &&
	test -e "$FLUX_PREFIX/$MARK" &&
	mkdir "$WORK/site-packages" &&
	cp -a "$SITEDIR/." "$WORK/site-packages/" &&
	touch "$WORK/site-packages/$MARK" &&
	mount --bind "$WORK/site-packages" "$SITEDIR" &&
	test -e "$SITEDIR/$MARK"
'

test_expect_success 'the guide: meson setup, compile, install into flux-core prefix' '
	guide_blocks Install sh install &&
	grep -q "^meson setup" install.1 &&
	sed -e "s| build\$| $BUILD|" -e "s|-C build\$|-C $BUILD|" install.1 >install.sh &&
	test "$(grep -c "$BUILD" install.sh)" = 3 &&
	cat install.sh &&
	test -e "$FLUX_PREFIX/$MARK" &&
	(cd "$top_srcdir" && env -u PYTHONPATH sh -e "$OLDPWD/install.sh") >install.log 2>&1 ||
	{ cat install.log; false; }
'

test_expect_success 'meson install wrote into flux-core prefix only, nothing naming the source tree' '
	grep -v "^#" "$BUILD/meson-logs/install-log.txt" | sort >installed.list &&
	echo "$(wc -l <installed.list) files installed" &&
	test_must_fail grep -v "^$FLUX_PREFIX/" installed.list &&
	grep "/job-manager/plugins/dws-jobtap.so\$" installed.list &&
	grep "/share/man/man5/flux-config-rabbit.5\$" installed.list &&
	test_must_fail grep -rIl -e "$top_srcdir" -e "$BUILD" "$FLUX_PREFIX"
'

# flux-dws' dependencies (pyproject.toml), which the guide must install
python3 -c 'import sys, tomllib
print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]))' \
	"$top_srcdir/pyproject.toml" >deps.list

test_expect_success 'the guide: the Python packages flux-dws uses, for flux-core Python' '
	grep -q "^flux python -m pip install" install.2 &&
	test -s deps.list &&
	while read dep; do
		grep -F -- "$dep" install.2 || { echo "the guide does not install $dep"; return 1; }
	done <deps.list &&
	(cd "$top_srcdir" && site sh -e "$OLDPWD/install.2") >pip.log 2>&1 ||
	{ cat pip.log; false; }
'

test_expect_success 'flux finds the commands and flux_dws where it was installed' '
	site flux dws version &&
	site flux python -c "import flux_dws, os; print(os.path.realpath(flux_dws.__file__))" >where &&
	grep "^$FLUX_PREFIX/.*/flux_dws/__init__.py\$" where &&
	for cmd in dws2jgf rabbitmapping getrabbit; do
		site flux $cmd --help >help.$cmd && grep "^usage: flux-$cmd" help.$cmd || return 1
	done
'

test_expect_success 'man finds every page where it looks' '
	python3 "$top_srcdir/doc/manpages.py" >pages &&
	test $(wc -l <pages) -ge 15 &&
	while read section name; do
		site man -w $name >man.where &&
		test "$(cat man.where)" = "$FLUX_PREFIX/share/man/man$section/$name.$section" || return 1
	done <pages &&
	for page in flux-config-rabbit flux-dws-service flux-jobtap-dws; do
		site env MANWIDTH=80 man -P cat $page >$page.txt 2>$page.err &&
		test_must_be_empty $page.err &&
		grep "^NAME" $page.txt || return 1
	done &&
	grep "flux-config-rabbit - the \[rabbit\] table" flux-config-rabbit.txt
'

test_expect_success 'the emulator, run by the installed flux dws' '
	SITE_EXEC=1 site flux dws emulator --kubeconfig "$SITE/kubeconfig" --system kind \
		--latency zero >emulator.log 2>&1 </dev/null 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
	EMULATOR_PID=$! &&
	KUBECONFIG=$SITE/kubeconfig &&
	wait_for_file "$SITE/kubeconfig" $EMULATOR_PID emulator.log
'

test_expect_success 'the guide: [rabbit], the mapping and the graph, [resource], the plugins' '
	cat >"$SITE/conf.d/resource-config.toml" <<-EOT &&
	[[resource.config]]
	hosts = "compute-[01-04]"
	cores = "0-3"
	EOT
	guide_blocks Configure sh configure &&
	guide_blocks Configure toml conf &&
	test -e conf.3 &&
	site_paths configure.1 >configure.sh &&
	cat configure.sh &&
	site sh -e configure.sh &&
	jq -e ".rabbits | keys == [\"kind-worker2\", \"kind-worker3\"]" "$SITE/rabbitmapping" &&
	jq -e ".scheduling.graph.nodes | length > 10" "$SITE/R" &&
	rm "$SITE/conf.d/resource-config.toml" &&
	for f in conf.*; do site_paths $f || return 1; done >"$SITE/conf.d/site.toml" &&
	cat "$SITE/conf.d/site.toml" &&
	cat >"$SITE/conf.d/test-instance.toml" <<-EOT &&
	# this test only: the 4 brokers are not the hosts R names
	[resource]
	noverify = true
	EOT
	site flux dws config-check "$SITE/conf.d"
'

# NNF_CLIENTMOUNT_CTL: what the clientmount scripts run instead of
# systemctl (there is no nnf-clientmount here); it records its calls
cat >"$WORK/bin/ctl" <<EOF
#!/bin/sh
echo "\$* \$FLUX_JOB_ID" >>"$WORK/ctl.log"
EOF
chmod +x "$WORK/bin/ctl"

test_expect_success 'an instance on that configuration alone' '
	rm -f "$WORK/uri" "$WORK/hold" && mkfifo "$WORK/hold" &&
	SITE_EXEC=1 SITE_ENV="NNF_CLIENTMOUNT_CTL=$WORK/bin/ctl" \
	site flux start -s4 --test-hosts="compute-[01-04]" --config-path="$SITE/conf.d" \
		sh -c "echo \$FLUX_URI >$WORK/uri.new && mv $WORK/uri.new $WORK/uri && read x <$WORK/hold" \
		>instance.log 2>&1 </dev/null 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
	INSTANCE_PID=$! &&
	wait_for_file "$WORK/uri" $INSTANCE_PID instance.log 30 &&
	FLUX_URI=$(cat "$WORK/uri") &&
	i=0 &&
	while ! site flux dws rabbits --json >rabbits.json 2>/dev/null ||
		! jq -e ".ready and ([.rabbits[].fluxion] | all(. == \"up\"))" rabbits.json >/dev/null; do
		i=$((i + 1)) && test $i -le 300 || { cat rabbits.json; false; } || return 1
		sleep 0.1
	done
'

test_expect_success 'modprobe loaded the service, the jobtap plugin loaded by name' '
	site flux module list >modules.out &&
	grep "^dws " modules.out &&
	grep "^sched-fluxion-resource " modules.out &&
	site flux jobtap list >jobtap.out &&
	grep "^dws-jobtap.so\$" jobtap.out &&
	site flux dmesg >dmesg.out &&
	grep "dws: epilog timeout = 300.000s" dmesg.out &&
	site flux config get job-manager.plugins | grep perilog.so
'

test_expect_success 'a rabbit job: its file system, prolog and epilog on each node, nothing left' '
	rm -f "$WORK/ctl.log" &&
	site flux run -N2 -S dw="#DW jobdw type=xfs capacity=10GiB name=scratch" \
		printenv DW_JOB_scratch >job.out &&
	id=$(site flux job last) &&
	test $(sort -u job.out | wc -l) = 1 &&
	grep "^/mnt/nnf/" job.out &&
	site flux job eventlog $id >job.events &&
	grep "dws_environment variables=.*DW_JOB_scratch" job.events &&
	grep "prolog-finish description=\"dws-setup\" status=0" job.events &&
	grep "prolog-finish description=\"job-manager.prolog\" status=0" job.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" job.events &&
	grep "epilog-finish description=\"job-manager.epilog\" status=0" job.events &&
	f58=$(site flux job id --to=f58 $id) &&
	printf "start nnf-clientmount $f58\n%.0s" 1 2 3 4 >ctl.expected &&
	printf "stop nnf-clientmount $f58\n%.0s" 1 2 >>ctl.expected &&
	sort "$WORK/ctl.log" >ctl.got &&
	sort ctl.expected | test_cmp - ctl.got &&
	site kubectl wait --for=delete "workflow/fluxjob-$(site flux job id --to=dec $id)" --timeout=60s
'

test_expect_success 'flux dws rabbits, flux dws status and flux getrabbit answer' '
	site flux dws rabbits >rabbits.out &&
	grep "^kind-worker2 *Ready *up" rabbits.out &&
	grep "^kind-worker3 *Ready *up" rabbits.out &&
	site flux dws rabbits -o long >long.out &&
	grep "^kind-worker3 *Ready *Enabled *up" long.out &&
	site flux dws status >status.out &&
	test "$(site flux getrabbit -c compute-04)" = kind-worker3 &&
	test "$(site flux getrabbit kind-worker2)" = "compute-[01-03]"
'

test_expect_success 'the installed CLI plugin and rabbit validator, enabled as admin-plugins.rst says' '
	test_must_fail site flux run --coral2-chassis=3 -N4 hostname 2>chassis.err &&
	grep "the node count 4 is not a multiple of 3" chassis.err &&
	site flux module reload job-ingest validator-plugins=jobspec,rabbit &&
	test_must_fail site flux submit -S dw="#DW jobdw type=zfs capacity=1GiB name=s" \
		hostname 2>validator.err &&
	grep "argument .type. invalid string .zfs." validator.err
'

test_expect_success 'stop the instance and the emulator' '
	test_when_finished "rm -rf \"$WORK\"" &&
	test -n "$INSTANCE_PID" &&
	timeout 30 sh -c "echo done >$WORK/hold" &&
	wait $INSTANCE_PID &&
	kill $EMULATOR_PID &&
	{ wait $EMULATOR_PID; true; }
'

test_done
