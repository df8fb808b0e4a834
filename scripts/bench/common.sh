# Shared by scripts/bench.sh and scripts/bench/instructions.sh (sourced, not run):
# messages, the Debian packages they need, and memplan's release build.
# The caller sets bench_name (the prefix of its messages) before sourcing this, and
# uses the variables set here.
# shellcheck shell=bash disable=SC2034,SC2154

die() {
	echo "$bench_name: $*" >&2
	exit 1
}
say() {
	echo "$bench_name: $*" >&2
}

# ensure_packages PKG... installs the Debian packages that are missing, unless
# BENCH_NO_INSTALL=1, in which case a missing one is an error.
ensure_packages() {
	local -a missing=()
	local pkg
	for pkg in "$@"; do
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$pkg")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "${BENCH_NO_INSTALL:-0}" = 1 ]; then
		die "missing packages: ${missing[*]} (BENCH_NO_INSTALL=1 forbids installing them)"
	fi
	local sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	say "installing ${missing[*]}"
	$sudo apt-get update -q >&2 || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}" >&2 ||
		die "apt-get install ${missing[*]} failed"
}

# package_lib PKG REGEX prints the one shared object of a package that matches.
package_lib() {
	local lib
	lib=$(dpkg -L "$1" | grep -E "$2" | head -n 1)
	if [ -z "$lib" ] || [ ! -f "$lib" ]; then
		die "package $1 has no file matching $2"
	fi
	echo "$lib"
}

# The preloads of the allocators compared with memplan, from their Debian packages.
allocator_packages=(libjemalloc2 libmimalloc2.0 libtcmalloc-minimal4)
find_allocators() {
	jemalloc_so=$(package_lib libjemalloc2 '/libjemalloc\.so\.2$')
	mimalloc_so=$(package_lib libmimalloc2.0 '/libmimalloc\.so\.2$')
	tcmalloc_so=$(package_lib libtcmalloc-minimal4 '/libtcmalloc_minimal\.so\.4$')
}

# export_rev REV DIR exports the committed revision REV of the tree at $root into
# DIR, to be built apart from the work tree and its uncommitted changes, and sets
# rev_text to its short hash.
export_rev() {
	local rev
	rev=$(git -C "$root" rev-parse --verify "$1^{commit}") || die "$1 is not a commit"
	mkdir -p "$2"
	git -C "$root" archive --format=tar "$rev" | tar -x -C "$2" || die "cannot export $rev"
	rev_text=$(git -C "$root" rev-parse --short "$rev")
}

# build_release SRC BUILD [TARGET...] configures BUILD (release, with the tests,
# which include the benchmark programs) if it is not yet, and builds the targets
# (by default everything).
build_release() {
	if [ ! -f "$2/build.ninja" ]; then
		say "configuring $2 (release)"
		meson setup "$2" "$1" --buildtype=release -Dtests=true >&2 ||
			die "meson setup failed (are the build dependencies installed?)"
	fi
	ninja -C "$2" "${@:3}" >&2 || die "the build failed"
}
