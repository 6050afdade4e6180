#!/bin/sh
# The layering rule: core < dist < {sla, lirpa} < apps. A file may include headers of its own
# layer and of the layers below it, never of a layer above it, and sla and lirpa never include
# each other. Fails (exit 1) listing every include that breaks the rule.
#
# Layer of a file: include/tessera/<layer>/..., src/<layer>/..., tests/<layer>/...;
# apps/, examples/, bench/ and python/ are the apps layer. Layer of an included header:
# "tessera/<layer>/..." (public), "<layer>/..." (private, under src/), or a path relative to
# the including file ("x.h" is the file's own layer, "../<layer>/x.h" is resolved).
# A directory under src/ that is not a known layer fails the test, so a new layer is added
# here on purpose.
# Usage: tests/layering.sh [source root]   (default: the directory above this script)
root=${1:-$(dirname "$0")/..}
cd "$root" || { echo "layering: cannot enter '$root'" >&2; exit 2; }

files=$(find include src tests apps examples bench python -type f \
          \( -name '*.h' -o -name '*.hpp' -o -name '*.cpp' -o -name '*.cc' \) 2>/dev/null | sort)
[ -n "$files" ] || { echo "layering: no sources found under '$root'" >&2; exit 2; }

# grep prints file:line:text for every include; awk checks each against the rule
# shellcheck disable=SC2086
grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<][^">]+[">]' $files /dev/null | awk '
function rank(l) {
  if (l == "core") return 0; if (l == "dist") return 1
  if (l == "sla" || l == "lirpa") return 2; if (l == "apps") return 3
  return -1
}
function layer_of(p,   a) {
  if (p ~ /^include\/tessera\/[^\/]+\//) { split(p, a, "/"); return a[3] }
  if (p ~ /^(src|tests)\/[^\/]+\//) { split(p, a, "/"); return a[2] }
  if (p ~ /^(apps|examples|bench|python)\//) return "apps"
  return ""
}
# normalise a/b/../c -> a/c
function normalise(p,   n, a, out, i, k, s) {
  n = split(p, a, "/"); k = 0
  for (i = 1; i <= n; i++) {
    if (a[i] == "." || a[i] == "") continue
    if (a[i] == ".." && k > 0) { k--; continue }
    out[++k] = a[i]
  }
  s = out[1]; for (i = 2; i <= k; i++) s = s "/" out[i]
  return s
}
function layer_of_include(file, h,   dir) {
  if (h ~ /^tessera\//) return layer_of("include/" h)
  if (h ~ /^(core|dist|sla|lirpa)\//) return layer_of("src/" h)
  if (h ~ /\.\.\//) { dir = file; sub(/\/[^\/]*$/, "", dir); return layer_of(normalise(dir "/" h)) }
  return ""   # a header next to the file, or a system or third-party header
}
{
  file = $0; sub(/:.*/, "", file)
  rest = substr($0, length(file) + 2); line = rest; sub(/:.*/, "", line)
  h = rest; sub(/^[^"<]*["<]/, "", h); sub(/[">].*/, "", h)
  from = layer_of(file)
  if (from == "") next
  if (rank(from) < 0) {
    if (!(file in unknown)) { unknown[file] = 1; print file ": unknown layer \x27" from "\x27 (add it to tests/layering.sh and to the layering rule)"; bad++ }
    next
  }
  seen[file] = 1
  to = layer_of_include(file, h)
  if (to == "" || rank(to) < 0 || to == from) next
  if (rank(to) >= rank(from)) {
    print file ":" line ": layer \x27" from "\x27 includes \x27" h "\x27 of layer \x27" to "\x27"
    bad++
  }
}
END {
  n = 0; for (f in seen) n++
  if (bad > 0) { print "layering: " bad " problem(s); the rule is core < dist < {sla, lirpa} < apps"; exit 1 }
  print "layering: PASS (" n " files with includes, core < dist < {sla, lirpa} < apps)"
}'
