# bash completion for tscope and tscope-report (installed under
# share/bash-completion/completions; bash-completion loads it on first use).
_tscope_report_commands="report info dump trace diff batch hang html"

_tscope_report() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    case $prev in
    -o|--output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$_tscope_report_commands --help --version" -- "$cur")
                   $(compgen -d -- "$cur"))
    elif [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--help --json --html --color -o --output --run-id" -- "$cur"))
    else
        COMPREPLY=($(compgen -d -- "$cur"))
    fi
}

_tscope() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} i
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "run report --help --version" -- "$cur"))
        return
    fi
    case ${COMP_WORDS[1]} in
    report)
        # Complete as tscope-report with the words after "report".
        local words=("tscope-report" "${COMP_WORDS[@]:2}")
        COMP_WORDS=("${words[@]}")
        COMP_CWORD=$((COMP_CWORD - 1))
        _tscope_report
        return ;;
    run)
        # After "--" the job's own command line: complete commands, then files.
        for ((i = 2; i < COMP_CWORD; i++)); do
            if [ "${COMP_WORDS[i]}" = "--" ]; then
                if [ "$i" -eq $((COMP_CWORD - 1)) ]; then
                    COMPREPLY=($(compgen -c -- "$cur"))
                else
                    COMPREPLY=($(compgen -f -- "$cur"))
                fi
                return
            fi
        done
        case $prev in
        -o|--out) COMPREPLY=($(compgen -d -- "$cur")); return ;;
        -m|--mode) COMPREPLY=($(compgen -W "full light" -- "$cur")); return ;;
        esac
        COMPREPLY=($(compgen -W "--out --mode --no-report --help --" -- "$cur")) ;;
    esac
}

complete -F _tscope tscope
complete -F _tscope_report tscope-report tscope-report-mpi
