# Sourced by jobs/build.sh, jobs/test.sh and jobs/quickstart.sh: the --libtorch flag they share.
#   parse_libtorch_line "$@"  sets NMT_LIBTORCH_LINE (debian, the default, or current) and
#                             NMT_REST_ARGS (every other argument, in order)
#   libtorch_build_dir LINE   the build folder of a line, relative to the checkout

parse_libtorch_line() {
  NMT_LIBTORCH_LINE=debian
  NMT_REST_ARGS=()
  while (($# > 0)); do
    case "$1" in
      --libtorch=*) NMT_LIBTORCH_LINE=${1#--libtorch=} ;;
      --libtorch)
        (($# >= 2)) || { echo "--libtorch needs a value: debian or current" >&2; exit 2; }
        NMT_LIBTORCH_LINE=$2
        shift
        ;;
      *) NMT_REST_ARGS+=("$1") ;;
    esac
    shift
  done
  case "$NMT_LIBTORCH_LINE" in
    debian | current) ;;
    *) echo "--libtorch: unknown line '$NMT_LIBTORCH_LINE' (expected debian or current)" >&2; exit 2 ;;
  esac
}

libtorch_build_dir() {
  if [[ "$1" == current ]]; then echo build-current; else echo build; fi
}
