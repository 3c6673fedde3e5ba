#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# setup.sh: shared set-up of scripts/demo.sh and scripts/test.sh (sourced, not run).
# Installs the Debian packages that are missing (one apt-get update, only when something
# is missing), then configures build/ once and builds it incrementally.
# Usage: source scripts/setup.sh; ecs_setup [extra meson options for a new build dir]

ECS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ECS_BUILD="${ECS_BUILD:-$ECS_ROOT/build}"

# Debian packages the build, the tests and the demo need, and why:
#   meson ninja-build pkg-config gcc g++  the build (g++: the SDK's C++ compile test)
#   libcjson-dev    scene and manifest JSON (DESIGN.md names cJSON)
#   libdragonbox-dev libfast-float-dev cmake  the scene writer's and parser's numbers:
#                   shortest round-trip text and exact parsing (host/scene/number.h); cmake
#                   only lets meson find dragonbox's package files
#   libcmocka-dev   the unit-test framework
#   python3         meson runs on it; test.sh reads meson's test log with it
#   assimp-testmodels  real glTF 2.0 files (.gltf, .glb) tests/test_gltf.c imports
#   libassimp-dev   tests/test_gltf.c checks the import's mesh bounds against libassimp's
#                   vertices on those files
#   libmicrohttpd-dev  the inspector's HTTP server (--inspect), run from the frame loop
#   libxxhash-dev   the snapshot files' checksum (XXH3: faster than copying the bytes)
ECS_PACKAGES=(meson ninja-build pkg-config gcc g++ libcjson-dev libcmocka-dev python3
    assimp-testmodels libassimp-dev libdragonbox-dev libfast-float-dev cmake
    libmicrohttpd-dev libxxhash-dev)
# and for the tests only (scripts/test.sh), not the demo:
#   chromium chromium-driver python3-selenium python3-pil  tests/browser/test_page.py: the
#                   inspector's page in a real headless browser, its screenshots read back
#   lld             tests/test_reload.c links a plugin with lld while the host watches it
#   mandoc groff-base  tests/check_man.py lints the manual pages with both formatters
#   bash-completion zsh  tests/check_completion.sh runs the completions in both shells
#                   (bash-completion.pc also says where the bash one is installed)
ECS_TEST_PACKAGES=(chromium chromium-driver python3-selenium python3-pil lld mandoc groff-base
    bash-completion zsh)
# and for the release scripts only (scripts/dist.sh, scripts/deb.sh):
#   git xz-utils    meson dist packs the committed tree (git archive) as .tar.xz
#   build-essential dpkg-dev debhelper lintian  the Debian packages built and checked
ECS_RELEASE_PACKAGES=(git xz-utils build-essential dpkg-dev debhelper lintian)

ecs_install_missing() {
    local missing=() p
    for p in "${ECS_PACKAGES[@]}" "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ -n "${ECS_NO_INSTALL:-}" ]; then # the tests: say what is missing, install nothing
        echo "setup: missing ${missing[*]} (ECS_NO_INSTALL is set: not installing)" >&2
        return 1
    fi
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "setup: installing ${missing[*]}" >&2
    $sudo apt-get update -qq >&2 &&
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
            "${missing[@]}" >&2
}

# Configure build/ if needed (release-like: -O2, NDEBUG, as bench/README.md reports), then
# build everything, or only the targets named in $ECS_TARGETS (demo.sh: the host and the
# plugins). Extra arguments (and $ECS_MESON_OPTS) go to `meson setup` of a new build dir.
ecs_build() {
    ecs_configure "$@" || return 1
    meson compile -C "$ECS_BUILD" ${ECS_TARGETS:-} >&2
}

# Configure $ECS_BUILD as ecs_build does, without building (scripts/dist.sh: meson dist
# builds its own copy).
ecs_configure() {
    [ -f "$ECS_BUILD/build.ninja" ] && return 0
    # an earlier setup of ours failed half-way: start that directory again
    [ -d "$ECS_BUILD/meson-private" ] && rm -rf "$ECS_BUILD"
    meson setup "$ECS_BUILD" "$ECS_ROOT" -Doptimization=2 -Ddebug=false \
        -Db_ndebug=true ${ECS_MESON_OPTS:-} "$@" >&2
}
