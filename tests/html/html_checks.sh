# Checks on a page written by `tscope-report html`, shared by the HTML
# tests (sourced; needs fail()).

# no_active_content PAGE: nothing in the page runs or fetches: no script
# element, no event handler attribute, no src/href, no URL but the SVG
# namespace.
no_active_content() {
    if grep -qi '<script' "$1"; then fail "$1: a <script> element"; fi
    if grep -qiE '<[a-z][^>]* on[a-z]+=' "$1"; then fail "$1: an event handler"; fi
    if grep -qiE '<[a-z][^>]* (src|href)=' "$1"; then fail "$1: a src or href attribute"; fi
    if grep -oiE '(https?|ftp)://[^" ]*' "$1" | grep -qv '^http://www.w3.org/2000/svg$'; then
        fail "$1: a URL other than the SVG namespace"
    fi
}

# has_charts PAGE: the charts every page has, by id.
has_charts() {
    for id in budget-waterfall heatmap-step heatmap-idle blamed-rank rank-timeline kernel-categories \
              collective-sizes memory-over-time findings verdict; do
        grep -q "id=\"$id\"" "$1" || fail "$1: no element with id $id"
    done
}

# waterfall_sums PAGE: the budget bars' exact nanoseconds (data-ns) add up
# to the wall bar's.
waterfall_sums() {
    sed -n '/id="budget-waterfall"/,/<\/svg>/p' "$1" | grep -o 'data-line="[a-z_]*" data-ns="[0-9]*"' |
        awk -F'"' '$2 == "wall" { wall = $4; n++ } $2 != "wall" { sum += $4; lines++ }
                   END { exit !(n == 1 && lines == 8 && sum == wall && wall > 0) }' ||
        fail "$1: the waterfall lines do not sum to wall"
}
