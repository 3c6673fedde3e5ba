#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# demo.sh: install what is missing, build, and run ecs-host on the built plugins with the
# demo scene (examples/demo.json): 120 frames at 60 fps, then the scene is saved back.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
ecs_install_missing
ECS_TARGETS="ecs-host transform debug_name mesh spin" ecs_build # what the demo runs, no more
saved="$ECS_BUILD/demo-saved.json"
echo "== ecs-host on $ECS_BUILD/plugins with $ECS_ROOT/examples/demo.json"
"$ECS_BUILD/host/ecs-host" --fps 60 --frames 120 --stats --scene "$ECS_ROOT/examples/demo.json" \
    --save "$saved" "$ECS_BUILD/plugins"
echo "== the world after 120 frames, saved to $saved"
cat <<EOT

Hot reload: run the host with --watch, edit a plugin, rebuild, and the running world picks
up the new code with every component kept (README, "Hot reload"):
  $ECS_BUILD/host/ecs-host --watch --inspect 0 --scene $ECS_ROOT/examples/demo.json $ECS_BUILD/plugins
  meson compile -C $ECS_BUILD        # in another terminal, after editing plugins/*/*.c
and open the URL it prints (--inspect) to watch the world live (docs/inspector.md).
EOT
