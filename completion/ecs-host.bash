# SPDX-License-Identifier: MIT
# ecs-host.bash: bash completion for ecs-host, installed as "ecs-host" where
# bash-completion.pc says (completion/meson.build); bash-completion loads it on first use.
# The options come from the program's own `--help`, so a new option completes without a
# change here; what follows an option depends on the name --help gives its argument:
# FILE completes files, DIR folders, WHEN (--color) its three values, anything else
# (a number, a port) nothing. Words that are not options are plugin folders.

# Print "OPTION ARG" (ARG empty for a flag) for each option of `$1 --help`.
_ecs_host_options()
{
    "$1" --help 2>/dev/null | sed -n 's/^  \(-[^ ].*\)$/\1/p' |
        sed 's/  .*//; s/,//g' |
        awk '{ arg = ""; for (i = 1; i <= NF; i++) if ($i !~ /^-/) arg = $i;
               for (i = 1; i <= NF; i++) if ($i ~ /^-/) print $i, arg }'
}

_ecs_host()
{
    local cur prev words cword split
    _init_completion -s || return

    local table arg
    table=$(_ecs_host_options "$1")
    if [[ $prev == -* ]]; then
        arg=$(awk -v o="$prev" '$1 == o { print $2 }' <<<"$table")
        case $arg in
        FILE) _filedir; return ;;
        DIR) _filedir -d; return ;;
        WHEN) COMPREPLY=($(compgen -W 'auto always never' -- "$cur")); return ;;
        ?*) return ;; # a number, a port: nothing to offer
        esac
    fi
    $split && return # --flag=value for a flag: nothing fits

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(awk '{ print $1 }' <<<"$table")" -- "$cur"))
        return
    fi
    _filedir -d # PLUGIN_DIR...
} &&
    complete -F _ecs_host ecs-host
