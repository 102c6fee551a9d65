#!/usr/bin/env bash
# rtn(1), docs/rtn.1, against the binary: every option each verb's --help prints is in that
# verb's section of the page (the store verbs' shared ones in "Store options"), every RTN_*
# variable rtn reads is under ENVIRONMENT, the page's version is `rtn --version`'s, every
# verb has a section, and groff renders the page without a warning.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

. "$T_ROOT/tests/cli_lib.sh"
MAN=$CLI_MAN

# The page's roff source with escapes that hide an option's text taken out: \- to -,
# font changes and zero-width marks dropped (as sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g'
# -e 's/\\&//g' would), read once for the suite into MAN_TEXT and, a line each, MAN_LINES:
# the cases ask for a section per verb, and each sed, awk or grep is a fork and an exec.
MAN_TEXT=
MAN_LINES=()
if [ -f "$MAN" ]; then
        MAN_TEXT=$(<"$MAN")
        MAN_TEXT=${MAN_TEXT//\\-/-}
        MAN_TEXT=${MAN_TEXT//\\f[BIRP]/}
        MAN_TEXT=${MAN_TEXT//\\&/}
        mapfile -t MAN_LINES <<<"$MAN_TEXT"
fi

# The text of every subsection (.SS) whose title starts with TITLE (then ends or goes on
# after a space), up to the next heading, into SECTION, without trailing newlines.
man_section() {
        local line on=0 h=".SS $1"
        SECTION=
        for line in "${MAN_LINES[@]}"; do
                if [[ $line == .S[SH]' '* ]]; then
                        on=0
                        [[ $line == "$h" || $line == "$h "* ]] && on=1
                        continue
                fi
                [ "$on" = 1 ] && SECTION+=$line$'\n'
        done
        while [[ $SECTION == *$'\n' ]]; do SECTION=${SECTION%$'\n'}; done
}

# The text of the section (.SH) whose heading starts with NAME, into SECTION, likewise.
man_sh_section() {
        local line on=0
        SECTION=
        for line in "${MAN_LINES[@]}"; do
                if [[ $line == .SH' '* ]]; then
                        on=0
                        [[ $line == ".SH $1"* ]] && on=1
                        continue
                fi
                [ "$on" = 1 ] && SECTION+=$line$'\n'
        done
        while [[ $SECTION == *$'\n' ]]; do SECTION=${SECTION%$'\n'}; done
}

every_help_option_is_in_the_page() {
        [ -f "$MAN" ] || t_fail "no $MAN"
        local verb sect opt opts store_sect missing=''
        man_section "Store options"
        store_sect=$SECTION
        [ -n "$store_sect" ] || t_fail "no 'Store options' section"
        for verb in $(cli_verbs); do
                man_section "rtn $verb"
                sect=$SECTION
                [ -n "$sect" ] || { missing+=" [no section for $verb]"; continue; }
                # The store verbs' own title says they take the shared options.
                if [[ $'\n'$MAN_TEXT == *$'\n'".SS rtn $verb [store-options]"* ]]; then
                        sect+=$'\n'$store_sect
                fi
                opts=$(cli_help_options "$verb")
                [ -n "$opts" ] || missing+=" [rtn $verb --help names no option]"
                for opt in $opts; do
                        cli_has_word "$sect" "$opt" || missing+=" $verb:$opt"
                done
        done
        [ -z "$missing" ] || t_fail "options in --help but not in the verb's section of rtn.1:$missing"
}
t_run every_help_option_is_in_the_page every_help_option_is_in_the_page

every_rtn_variable_is_under_environment() {
        local env vars v missing=''
        man_sh_section ENVIRONMENT
        env=$SECTION
        [ -n "$env" ] || t_fail "no ENVIRONMENT section"
        vars=$({
                "$RTN" help
                for v in $(cli_verbs); do "$RTN" "$v" --help 2>&1; done
                # The sources, where this runs in the tree (not in a copy of the tests).
                [ -d "$T_ROOT/runtime" ] &&
                        grep -rhoE 'getenv\("RTN_[A-Z_]+"' "$T_ROOT"/common "$T_ROOT"/runtime \
                                "$T_ROOT"/store "$T_ROOT"/mcp "$T_ROOT"/netns "$T_ROOT"/init
        } | grep -oE 'RTN_[A-Z_]+' | sort -u)
        [ -n "$vars" ] || t_fail "found no RTN_ variable at all"
        for v in $vars; do
                cli_has_word "$env" "$v" || missing+=" $v"
        done
        [ -z "$missing" ] || t_fail "not under ENVIRONMENT in rtn.1:$missing"
}
t_run every_rtn_variable_is_under_environment every_rtn_variable_is_under_environment

# SYNOPSIS names every verb and every sub-verb its usage lines name (rootfs rm, env list).
synopsis_names_every_verb() {
        local syn='' line v sub subs missing='' re
        # The lines of SYNOPSIS without their macro and quotes, | and newlines as spaces.
        man_sh_section SYNOPSIS
        if [ -n "$SECTION" ]; then
                while IFS= read -r line; do
                        [[ $line =~ ^\.[A-Z]+' '(.*)$ ]] && line=${BASH_REMATCH[1]}
                        line=${line//\"/}
                        syn+="${line//|/ } "
                done <<<"$SECTION"
        fi
        [ -n "$syn" ] || t_fail "no SYNOPSIS section"
        for v in $(cli_verbs); do
                cli_has_word "$syn" "$v" || missing+=" $v"
                # The sub-verbs after "rtn VERB" on its usage lines, rootfs's a|b|c each.
                re="^(usage:| +)[[:space:]]*rtn $v ([a-z][a-z0-9|-]*)([[:space:]].*)?\$"
                subs=''
                while IFS= read -r line; do
                        [[ $line =~ $re ]] && subs+=" ${BASH_REMATCH[2]//|/ }"
                done < <("$RTN" "$v" --help 2>/dev/null)
                for sub in $subs; do
                        cli_has_word "$syn" "$sub" || missing+=" $v:$sub"
                done
        done
        [ -z "$missing" ] || t_fail "not in rtn.1's SYNOPSIS:$missing"
}
t_run synopsis_names_every_verb synopsis_names_every_verb

page_version_is_the_binary_s() {
        local th
        th=$(grep '^\.TH ' "$MAN")
        t_cmd "$RTN" --version
        t_exit_is 0
        [[ $th == *"\"$(cat "$T_OUT_FILE")\""* ]] ||
                t_fail "rtn.1's .TH ($th) does not name '$(cat "$T_OUT_FILE")'"
}
t_run page_version_is_the_binary_s page_version_is_the_binary_s

page_has_the_sections() {
        local s
        for s in NAME SYNOPSIS DESCRIPTION COMMANDS '"EXIT STATUS"\|EXIT STATUS' ENVIRONMENT FILES; do
                grep -q "^\.SH \($s\)\$" "$MAN" || t_fail "rtn.1 has no section $s"
        done
        man_section "rtn store [store-options] verify"
        [[ $SECTION == *[^$'\n']* ]] || t_fail "rtn.1 has no section for store verify"
}
t_run page_has_the_sections page_has_the_sections

groff_renders_without_warnings() {
        command -v groff >/dev/null || t_skip "groff is not installed"
        t_cmd groff -man -Tutf8 -ww -z "$MAN"
        t_exit_is 0
        [ ! -s "$T_ERR_FILE" ] || t_fail "groff warns: $(head -n 5 "$T_ERR_FILE")"
}
t_run groff_renders_without_warnings groff_renders_without_warnings

man_renders_the_page() {
        command -v man >/dev/null || t_skip "man (man-db) is not installed"
        t_cmd env MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$MAN"
        t_exit_is 0
        [ ! -s "$T_ERR_FILE" ] || t_fail "man -l warns: $(head -n 5 "$T_ERR_FILE")"
        t_stdout_has "EXIT STATUS"
        t_stdout_has "RTN_DATA_DIR"
        # No line wider than the page: an unbreakable run of text shows as a warning above,
        # and a wide one here.
        [ "$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$T_OUT_FILE")" -le 80 ] ||
                t_fail "a rendered line is wider than 80 columns"
}
t_run man_renders_the_page man_renders_the_page

t_done
