#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# deb.sh: the Debian packages ecs-host and libecs-host-dev, built, checked, installed and
# used as a plugin author would, on this machine.
#
#   scripts/deb.sh [ecs-host-VERSION.tar.xz]
#
# The source is the tarball scripts/dist.sh made (so the packages are built from what a
# release ships), or else the repository's files (tracked and new, not ignored). It is
# unpacked in a scratch folder, where `dpkg-buildpackage -b -us -uc` builds both packages
# (their files land there, never in the repository); the build dependencies it lacks are
# installed first. lintian must report no error. Then apt installs both packages and
# debian/tests/installed-sdk (the autopkgtest) builds the installed plugin template against
# the installed headers and runs the installed ecs-host from PATH on it. The packages are
# removed again at the end unless ECS_DEB_KEEP=1. DEB_BUILD_OPTIONS=nocheck (which .ci/run
# sets: the suite has run twice by then) skips the test suite inside the package build.
# The packages' folder is printed last.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"

ecs_install_missing "${ECS_RELEASE_PACKAGES[@]}"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/ecs-deb-XXXXXX")
installed=""
cleanup() {
    if [ -n "$installed" ] && [ "${ECS_DEB_KEEP:-0}" != 1 ]; then
        echo "deb: removing the packages again (ECS_DEB_KEEP=1 keeps them)" >&2
        DEBIAN_FRONTEND=noninteractive $sudo apt-get purge -y -qq ecs-host libecs-host-dev >&2 ||
            true
    fi
}
trap cleanup EXIT

version=$(sed -n '1s/^ecs-host (\([^-)]*\).*/\1/p' "$ECS_ROOT/debian/changelog")
src="$scratch/ecs-host-$version"
if [ $# -ge 1 ]; then
    tar -xf "$1" -C "$scratch"
    cp "$1" "$scratch/ecs-host_$version.orig.tar.${1##*.tar.}"
else
    mkdir "$src"
    git -C "$ECS_ROOT" ls-files -z --cached --others --exclude-standard |
        (cd "$ECS_ROOT" && tar --null -T - -cf -) | tar -xf - -C "$src"
fi
[ -f "$src/debian/control" ] || { echo "deb: no $src/debian/control" >&2; exit 1; }

# the build dependencies dpkg-checkbuilddeps finds missing (test ones only without nocheck)
profiles=()
[[ " ${DEB_BUILD_OPTIONS:-} " == *" nocheck "* ]] && profiles=(-Pnocheck)
missing=$(cd "$src" && dpkg-checkbuilddeps "${profiles[@]}" 2>&1 |
    sed -n 's/.*Unmet build dependencies: //p' | sed 's/([^)]*)//g; s/:any//g; s/|[^ ]*//g')
if [ -n "$missing" ]; then
    # shellcheck disable=SC2086 # one package a word
    ecs_install_missing $missing
fi

echo "deb: dpkg-buildpackage -b -us -uc ${profiles[*]} in $src" >&2
(cd "$src" && dpkg-buildpackage -b -us -uc "${profiles[@]}" >&2)
rm -rf "$src" # the unpacked tree and its build; the packages stay beside it
changes=$(ls "$scratch"/ecs-host_*.changes)
echo "deb: lintian $(basename "$changes")" >&2
lintian --fail-on error --display-level '>=warning' "$changes" >&2

DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "$scratch"/ecs-host_*.deb "$scratch"/libecs-host-dev_*.deb >&2
installed=1
AUTOPKGTEST_TMP="$scratch" "$ECS_ROOT/debian/tests/installed-sdk"
echo "$scratch"
