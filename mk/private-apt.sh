# A private apt state, so that the system's apt setup is untouched: sourced
# by the mk/ scripts that fetch from Debian's archive (debian-source.sh,
# qemu-prefix.sh, lcov2-prefix.sh), which define die().
#
#   papt_open DIR "KIND ARCHIVE SUITE"...
#
# keeps apt's lists, cache and sources.list in DIR, one source line per
# argument (KIND deb or deb-src, ARCHIVE debian or debian-security, SUITE
# e.g. trixie), runs apt-get update, and leaves in $papt the options that
# make apt-get and apt-cache use that state. DIR must be absolute (apt
# takes Dir:: paths relative to its root).
papt_open() {
	papt_dir=$1
	shift
	mkdir -p "$papt_dir/lists/partial" "$papt_dir/cache/archives/partial" "$papt_dir/etc" ||
		die "cannot create $papt_dir"
	: >"$papt_dir/status"
	papt_key=/usr/share/keyrings/debian-archive-keyring.gpg
	[ -f "$papt_key" ] || die "$papt_key missing (Debian package debian-archive-keyring)"
	: >"$papt_dir/etc/sources.list"
	for papt_line in "$@"; do
		# shellcheck disable=SC2086
		set -- $papt_line
		echo "$1 [signed-by=$papt_key] http://deb.debian.org/$2 $3 main" >>"$papt_dir/etc/sources.list"
	done
	papt="-o Dir::State=$papt_dir -o Dir::State::Lists=$papt_dir/lists"
	papt="$papt -o Dir::State::status=$papt_dir/status -o Dir::Cache=$papt_dir/cache"
	papt="$papt -o Dir::Etc::SourceList=$papt_dir/etc/sources.list"
	papt="$papt -o Dir::Etc::SourceParts=/nonexistent -o Debug::NoLocking=1 -q"
	# shellcheck disable=SC2086
	apt-get $papt update >"$papt_dir/update.log" 2>&1 ||
		die "apt-get update failed (network?): $(tail -n 3 "$papt_dir/update.log")"
}
