#!/bin/bash
# Add deb-src entries mirroring the existing deb entries (URIs, suites, keyring) so that
# `apt-get source` works. Idempotent. Needs root.
set -euo pipefail
out=/etc/apt/sources.list.d/explsched-src.sources
[ -f "$out" ] && exit 0
tmp=$(mktemp)
# deb822 .sources files: copy each stanza whose Types include deb, with Types: deb-src.
for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] || continue
    [ "$f" = "$out" ] && continue
    awk 'BEGIN{RS=""; ORS="\n\n"} /(^|\n)Types:[^\n]*deb([ \n]|$)/ && /debian/ {
            sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f" >>"$tmp"
done
# one-line format
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -e "$f" ] || continue
    grep -E '^deb[[:space:]]' "$f" | grep debian | sed -E 's/^deb([[:space:]])/deb-src\1/' \
        | while read -r line; do printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: %s\n\n' \
            "$(echo "$line" | awk '{print $2}')" "$(echo "$line" | awk '{print $3}')" \
            "$(echo "$line" | cut -d' ' -f4-)"; done >>"$tmp" || true
done
[ -s "$tmp" ] || { rm -f "$tmp"; echo "apt-deb-src: no Debian deb entries found" >&2; exit 1; }
install -m 0644 "$tmp" "$out"
rm -f "$tmp"
