# Shared by the VNN-COMP scripts: locate the tessera binary and unpack gzipped inputs.
TESSERA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TESSERA_BIN="${TESSERA_BIN:-$TESSERA_ROOT/build/tessera}"
if [ ! -x "$TESSERA_BIN" ]; then
  TESSERA_BIN="$(command -v tessera || true)"
fi
if [ -z "$TESSERA_BIN" ]; then
  echo "tessera binary not found (build it, or set TESSERA_BIN)" >&2
  exit 1
fi
export GLOG_minloglevel=2
# One `tessera serve` per user, started by prepare_instance.sh, runs the instances (LibTorch
# loaded once instead of ~1 s per instance); the launcher starts tessera-main itself when it
# does not answer. TESSERA_VNNCOMP_SERVER=0: no server.
TESSERA_SERVER_SOCKET="${TESSERA_SERVER_SOCKET:-${TMPDIR:-/tmp}/tessera-vnncomp-$(id -u).sock}"
if [ "${TESSERA_VNNCOMP_SERVER:-1}" = 1 ]; then export TESSERA_SERVER="$TESSERA_SERVER_SOCKET"; fi

# unpacked PATH: PATH itself, or a decompressed copy of PATH.gz in a temporary folder
unpacked() {
  case "$1" in
    *.gz)
      local dir="${TMPDIR:-/tmp}/tessera_vnncomp_$$"
      mkdir -p "$dir"
      local out="$dir/$(basename "${1%.gz}")"
      gzip -dc "$1" > "$out" && echo "$out"
      ;;
    *) echo "$1" ;;
  esac
}
