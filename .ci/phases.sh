# Phase timing for .ci/setup and .ci/serve (sourced, not run). `phase NAME` ends the
# phase before and starts NAME; `phases_report` ends the last one and prints how long
# each took. Phases are appended to the file $LUNA_PHASES, which a script passes on to
# the scripts it runs, so ./.ci/serve prints set-up's phases and its own in one table.
if [ -z "${LUNA_PHASES:-}" ]; then
  LUNA_PHASES=$(mktemp "${TMPDIR:-/tmp}/luna-phases.XXXXXX")
  export LUNA_PHASES
  _phases_owner=1 # this script made the file: it prints the report and removes it
fi
_phase_name=""
_phase_start=0

_phase_end() {
  if [ -n "$_phase_name" ]; then
    printf '%s\t%s\n' "$(($(date +%s) - _phase_start))" "$_phase_name" >>"$LUNA_PHASES"
    _phase_name=""
  fi
}

phase() { # $1 = script tag, $2 = what happens now
  _phase_end
  _phase_name=$2
  _phase_start=$(date +%s)
  printf '\n[%s %s] %s\n' "$1" "$(date +%H:%M:%S)" "$2"
}

# Prints the table when this script owns the file (else the caller will).
phases_report() {
  _phase_end
  [ -n "${_phases_owner:-}" ] || return 0
  printf '\nTime per phase:\n'
  awk -F'\t' '
    function mmss(s) { return sprintf("%3dm%02ds", int(s / 60), s % 60) }
    { total += $1; printf "  %s  %s\n", mmss($1), $2 }
    END { printf "  %s  total\n", mmss(total) }' "$LUNA_PHASES"
  rm -f "$LUNA_PHASES"
}
