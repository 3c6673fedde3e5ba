#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check_completion.sh: the shell completions of ecs-host, run on partial command lines
# (TAP). Bash: completion/ecs-host.bash loaded into bash-completion as bash would, its
# function called with COMP_WORDS set as readline sets them, COMPREPLY compared with what
# it must hold. Zsh: completion/_ecs-host run with _arguments replaced by a recorder, so
# the specs it makes from --help (every option, the action for each argument) are checked
# without a terminal.
# usage: check_completion.sh ECS_HOST SOURCE_ROOT
set -uo pipefail
ecs_host=$(realpath "$1")
root=$(realpath "$2")
bash_completion=/usr/share/bash-completion/bash_completion
n=0 failed=0

# ok NAME: the last check passed; not_ok NAME WHY...: it failed
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
    n=$((n + 1)) failed=$((failed + 1))
    echo "not ok $n - $1"
    shift
    printf '# %s\n' "$@"
}

# complete_line LINE: COMPREPLY, sorted, one per line, for `ecs-host LINE` with the cursor
# at its end. COMP_WORDS as readline makes them: split at blanks, and at the '=' of
# --option=value, which is a word of its own (COMP_WORDBREAKS); a LINE ending in a blank
# has an empty last word.
complete_line() {
    COMP_LINE="$ecs_host $1"
    COMP_POINT=${#COMP_LINE}
    local word
    COMP_WORDS=()
    for word in $COMP_LINE; do
        if [[ $word == *=* ]]; then COMP_WORDS+=("${word%%=*}" "=" "${word#*=}"); else
            COMP_WORDS+=("$word"); fi
    done
    [[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _ecs_host "$ecs_host" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
    printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | LC_ALL=C sort
}

# expect NAME EXPECTED LINE: complete_line LINE must give EXPECTED (lines, sorted)
expect() {
    local got
    got=$(complete_line "$3")
    if [ "$got" = "$2" ]; then ok "$1"; else
        not_ok "$1" "line: ecs-host $3" "expected: ${2//$'\n'/ }" "got: ${got//$'\n'/ }"
    fi
}

echo "1..12"
if [ ! -f "$bash_completion" ]; then
    echo "Bail out! $bash_completion is missing: install bash-completion (scripts/setup.sh does)"
    exit 1
fi
# bash-completion as an interactive bash loads it, then the file as it would on demand
source "$bash_completion"
source "$root/completion/ecs-host.bash"

# the options of --help: what `ecs-host --<TAB>` and `-<TAB>` must offer, nothing else
all_long=$("$ecs_host" --help | grep -o -- '--[a-z][a-z-]*' | LC_ALL=C sort -u)
all=$( (echo "$all_long"; "$ecs_host" --help | sed -n 's/^  \(-[a-z]\),.*/\1/p') | LC_ALL=C sort -u)
expect "--<TAB> offers every long option of --help" "$all_long" "--"
expect "-<TAB> offers the short options too" "$all" "-"
expect "--sc<TAB> completes --scene" "--scene" "--sc"
expect "--inspect<TAB> offers the inspector's options" $'--inspect\n--inspect-host\n--inspect-read-only\n--inspect-save-dir' "--inspect"
expect "--color <TAB> offers auto, always, never" $'always\nauto\nnever' "--color "
expect "--color=n<TAB> completes never" "never" "-q --color=n"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/plugins" "$scratch/scenes"
touch "$scratch/plugins/a.so" "$scratch/scene.json" "$scratch/scenes/big.json"
cd "$scratch" || exit 1
expect "--scene <TAB> offers files and folders" $'plugins\nscene.json\nscenes' "--scene "
expect "--save sc<TAB> offers the files and folders it starts" $'scene.json\nscenes' "--watch --save sc"
expect "--trace=<TAB> offers files" $'plugins\nscene.json\nscenes' "-v --trace="
expect "a plugin folder <TAB> offers folders only" $'plugins\nscenes' "--watch "
expect "--frames <TAB> offers nothing (a number)" "" "--frames "

# zsh: _ecs-host with _arguments recorded; every option of --help gets a spec
if ! command -v zsh >/dev/null; then
    not_ok "zsh: a spec for every option" "zsh is not installed (scripts/setup.sh installs it)"
else
    specs=$(ECS_HOST="$ecs_host" zsh -f -c '
        _call_program() { shift; eval "$@"; }
        _arguments() { print -rl -- "$@"; }
        words=("$ECS_HOST" --)
        source "$1"' zsh "$root/completion/_ecs-host" 2>&1)
    problems=()
    for opt in $all; do # "(-q --quiet)-q[log errors only]", "(--scene)--scene=[...]:FILE:_files"
        grep -qE -- "^\([^)]*\)${opt}=?\[" <<<"$specs" || problems+=("no spec for $opt")
    done
    for want in '(--scene)--scene=[*]:FILE:_files' '(--trace)--trace=[*]:FILE:_files' \
        '(--color)--color=[*]:WHEN:(auto always never)' '(--frames)--frames=[*]:N: ' \
        '(--inspect)--inspect=[*]:[ADDR\:]PORT: ' '(-q --quiet)--quiet[*]' \
        '*:plugin folder:_files -/'; do
        found= # [*] stands for the description: the spec starts as before it, ends as after
        while IFS= read -r spec; do
            head=${want%%"[*]"*} tail=${want#*"[*]"}
            [ "$head" = "$want" ] && tail=
            [[ $spec == "$head"* && $spec == *"$tail" ]] && found=1
        done <<<"$specs"
        [ -n "$found" ] || problems+=("no spec like $want")
    done
    name="zsh: a spec for every option, files for FILE, the values of WHEN, nothing for N"
    if [ ${#problems[@]} -eq 0 ]; then ok "$name"; else
        not_ok "$name" "${problems[@]}" "specs:" "${specs//$'\n'/ | }"
    fi
fi
[ $failed -eq 0 ]
