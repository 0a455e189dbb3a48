#!/bin/sh
test_description='flux-dws.spec: rpmbuild -bb from the release tarball, its files are what meson install puts

The spec is taken from the tarball (FLUX_DWS_DIST_TARBALL, the one meson
dist made, or else one made here of the tracked files), built with
rpmbuild --nodeps against the installed flux-core (no flux-core RPM here),
and the package'"'"'s files compared with meson install'"'"'s log of the same
build: a file the spec lists that meson does not install, or one meson
installs that the spec does not list, fails rpmbuild or this comparison.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_flux
for tool in rpmbuild rpm meson ninja sphinx-build pkg-config xz; do
	command -v $tool >/dev/null 2>&1 ||
		skip_all_because "$tool (scripts/setup.sh installs it)"
done
FLUX_PREFIX=$(cd "$(dirname "$(command -v flux)")/.." && pwd)
export PKG_CONFIG_PATH="$FLUX_PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
pkg-config --exists flux-core ||
	skip_all_because "pkg-config finds no flux-core (the RPM is built against it)"

VERSION=$(sed -n "s/^  version: '\([^']*\)',\$/\1/p" "$top_srcdir/meson.build")
NAME=flux-dws-$VERSION
WORK=$(mktemp -d "${TMPDIR:-/tmp}/flux-dws-t3402.XXXXXX")
TOP=$WORK/rpmbuild
echo "# work directory: $WORK"
# flux-dws' Python dependencies (pyproject.toml, those for every Python),
# which the package must require as python3-NAME
python3 -c 'import re, sys, tomllib
deps = tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]
print("\n".join(re.match(r"[A-Za-z0-9_.-]+", d).group(0).lower() for d in deps if ";" not in d))' \
	"$top_srcdir/pyproject.toml" >deps.list

test_expect_success 'the release tarball' '
	test -n "$VERSION" &&
	mkdir -p "$TOP/SOURCES" &&
	if test -n "$FLUX_DWS_DIST_TARBALL"; then
		test "$(basename "$FLUX_DWS_DIST_TARBALL")" = $NAME.tar.xz &&
		cp "$FLUX_DWS_DIST_TARBALL" "$TOP/SOURCES/"
	elif git -C "$top_srcdir" rev-parse --git-dir >/dev/null 2>&1; then
		# what meson dist packs: the tracked files (here as they are now)
		(cd "$top_srcdir" && git ls-files -z |
		 tar --null -T - --transform "s|^|$NAME/|" -cJf "$TOP/SOURCES/$NAME.tar.xz")
	else
		# an unpacked tarball: itself, without what its tests made
		tar -C "$top_srcdir/.." --exclude="$NAME/build*" --exclude="$NAME/.venv" \
			--exclude="$NAME/t/trash directory.*" -cJf "$TOP/SOURCES/$NAME.tar.xz" $NAME
	fi &&
	ls -l "$TOP/SOURCES/$NAME.tar.xz" &&
	tar -xJOf "$TOP/SOURCES/$NAME.tar.xz" $NAME/flux-dws.spec >flux-dws.spec &&
	grep "^Version: *$VERSION\$" flux-dws.spec
'

test_expect_success 'rpmbuild -bb --nodeps (flux-core is no RPM here)' '
	start=$(date +%s) &&
	{ env -u PYTHONPATH rpmbuild -bb --nodeps --noclean --define "_topdir $TOP" \
		flux-dws.spec >rpmbuild.log 2>&1 || { tail -60 rpmbuild.log; false; }; } &&
	echo "rpmbuild: $(( $(date +%s) - start )) s" &&
	ls "$TOP"/RPMS/*/$NAME-*.rpm >rpm.name &&
	test $(wc -l <rpm.name) = 1 &&
	ls -l $(cat rpm.name) &&
	grep "^Ok: *[1-9]" rpmbuild.log &&
	grep "^Fail: *0" rpmbuild.log
'

test_expect_success 'the package holds exactly what meson install installed' '
	find "$TOP" -path "*/meson-logs/install-log.txt" >log.name &&
	test $(wc -l <log.name) = 1 &&
	# the log names the build root (meson install --destdir) and its
	# directories: its files, as installed
	root=$(ls -d "$TOP"/BUILDROOT/$NAME-*) &&
	grep -v "^#" "$(cat log.name)" | while read f; do
		test -d "$f" && ! test -L "$f" || echo "${f#$root}"
	done | sort >meson.files &&
	grep "^/.*/dws-jobtap.so\$" meson.files &&
	rpm -qp --nosignature --qf "[%{FILEMODES:perms} %{FILENAMES}\n]" $(cat rpm.name) |
		grep -v "^d" | cut -d" " -f2- >rpm.all &&
	# besides the files meson installed: %license, %doc, the build-id links
	grep -v -e "/licenses/$NAME/" -e "/doc/$NAME/README.md\$" -e "/doc/flux-dws/README.md\$" \
		-e "^/usr/lib/\.build-id/" rpm.all | sed "s/\.gz\$//" |
	# and the byte code of the Python files meson installed
	awk "NR == FNR { meson[\$0] = 1; next }
	     { py = \$0; sub(\"/__pycache__/\", \"/\", py)
	       sub(/\\.cpython-[0-9]+(\\.opt-[12])?\\.pyc\$/, \".py\", py) }
	     py == \$0 || !(py in meson)" meson.files - | sort >rpm.files &&
	echo "$(wc -l <rpm.files) files, $(grep -c "" rpm.all) with license, doc and build-ids" &&
	test_cmp meson.files rpm.files
'

test_expect_success 'the package: man pages, Flux parts, Python dependencies' '
	for f in man5/flux-config-rabbit.5 man8/flux-dws-service.8 man1/flux-jobtap-dws.1 \
		job-manager/plugins/dws-jobtap.so modprobe.d/dws.toml cmd/flux-dws.py; do
		grep "/$f\(\.gz\)\{0,1\}\$" rpm.files || return 1
	done &&
	rpm -qpR --nosignature $(cat rpm.name) >requires &&
	grep "^flux-core >= 0.84" requires &&
	test $(wc -l <deps.list) -ge 4 &&
	while read dep; do
		grep "^python3-$dep >= " requires || return 1
	done <deps.list
'

test_expect_success 'clean up' '
	rm -rf "$WORK"
'

test_done
