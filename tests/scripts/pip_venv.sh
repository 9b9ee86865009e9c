# Sourced by the tests that check against a Python package from PyPI (TensorBoard, CTranslate2):
# the package installed once into a virtual environment of the build folder, under a lock (tests
# run in parallel). Exits 77 (skipped) when pip cannot reach the package index; fails otherwise.
# Uses the caller's `work` (a scratch folder) and `fail`.
# pip_venv_install PYTHON VENV NAME IMPORTS PACKAGE...  (IMPORTS: what `python -c "import ..."` checks)
pip_venv_install() {
  local python=$1 venv=$2 name=$3 imports=$4
  shift 4
  mkdir -p "$(dirname "$venv")"
  exec 9> "$venv.lock"
  flock 9
  if [[ ! -f "$venv/.nmt-$name-ready" ]]; then
    if [[ ! -x "$venv/bin/python" ]]; then
      "$python" -m venv "$venv" > "$work/venv.log" 2>&1 ||
        fail "$python -m venv failed (Debian: apt-get install python3-venv; jobs/setup.sh has it): $(cat "$work/venv.log")"
    fi
    if ! PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install --quiet --timeout 30 --retries 2 \
      "$@" > "$work/pip.log" 2>&1; then
      if grep -Eq 'NewConnectionError|Max retries exceeded|Temporary failure in name resolution|Network is unreachable|No matching distribution found' "$work/pip.log"; then
        echo "SKIPPED: pip cannot reach the package index to install $name: $(tail -3 "$work/pip.log")"
        exit 77
      fi
      fail "pip install $*: $(cat "$work/pip.log")"
    fi
    "$venv/bin/python" -c "import $imports" || fail "$name installed in $venv but does not import"
    touch "$venv/.nmt-$name-ready"
  fi
  flock -u 9
}
