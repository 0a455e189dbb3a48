# Load Debian's sharness (package `sharness`), with flux-dws extensions from
# t/sharness.d/*.sh (prerequisites such as FLUX).
: "${SHARNESS_LIB:=/usr/share/sharness/sharness.sh}"
if ! test -r "$SHARNESS_LIB"; then
    echo "1..0 # SKIP sharness is not installed ($SHARNESS_LIB)"
    exit 0
fi
# shellcheck disable=SC1090
. "$SHARNESS_LIB"
