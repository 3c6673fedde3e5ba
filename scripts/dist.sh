#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dist.sh: the release tarball. `meson dist` packs the committed tree (git archive: it
# refuses a tree with uncommitted changes) into build-dist/meson-dist/ecs-host-VERSION.tar.xz,
# then unpacks it into a fresh folder, builds it there and runs the whole test suite on
# that build (meson's default), so a file missing from git fails here. build-dist is
# configured like build/ (plus $ECS_MESON_OPTS), without the benchmarks. The last line
# printed is the tarball's path. Its build folder: $ECS_DIST_BUILD (default build-dist).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
ecs_install_missing "${ECS_TEST_PACKAGES[@]}" "${ECS_RELEASE_PACKAGES[@]}"
ECS_BUILD="${ECS_DIST_BUILD:-$ECS_ROOT/build-dist}" # never $ECS_BUILD: the suite's own build
ecs_configure -Dbench=false
meson dist -C "$ECS_BUILD" --formats xztar >&2
version=$(meson introspect --projectinfo "$ECS_BUILD" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
echo "$ECS_BUILD/meson-dist/ecs-host-$version.tar.xz"
