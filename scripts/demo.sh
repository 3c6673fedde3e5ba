#!/usr/bin/env bash
# demo.sh: install what is missing, build, and run ecs-host on the built plugins.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
ecs_install_missing
ecs_build
echo "== ecs-host on $ECS_BUILD/plugins"
"$ECS_BUILD/host/ecs-host" --frames 120 --stats "$ECS_BUILD/plugins"
