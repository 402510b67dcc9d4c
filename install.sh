#!/bin/sh
# install.sh — download a clawhost release for this machine, check it against the
# release's SHA256SUMS and put clawhost and its plugins on PATH.
#
#   sh install.sh                      # the version below, into ~/.local
#   CLAWHOST_VERSION=0.1.0 CLAWHOST_PREFIX=/usr/local sudo -E sh install.sh
#   make dist && CLAWHOST_DIST=dist sh install.sh   # your own build
#
# Settings (environment):
#   CLAWHOST_VERSION      the release to install (default below; with CLAWHOST_DIST, the one
#                         version its SHA256SUMS lists for this machine)
#   CLAWHOST_RELEASE_URL  where its archives and SHA256SUMS are (default: the project's
#                         release page for that version; a directory served by any web
#                         server holding `make dist`'s output works too)
#   CLAWHOST_DIST         a local directory holding `make dist`'s output (archives and
#                         SHA256SUMS), instead of downloading: checked the same way
#   CLAWHOST_PREFIX       installs into PREFIX/lib/clawhost-VERSION, points the link
#                         PREFIX/lib/clawhost at it and links PREFIX/bin/clawhost
#                         through it (default ~/.local)
#
# An upgrade moves PREFIX/lib/clawhost to the new release: clawhost init names that link
# as plugin_dir and clawhost service install in the unit's start command, so both follow.
# A config.hcl written before (plugin_dir = "PREFIX/lib/clawhost-OLD") is pointed at the
# link; a service unit that names an old release is reported.
#
# Nothing is installed unless the archive's checksum matches SHA256SUMS.
set -eu

prefix=${CLAWHOST_PREFIX:-$HOME/.local}
dist=${CLAWHOST_DIST:-}

fail() { echo "install.sh: $*" >&2; exit 1; }

case $(uname -s) in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) fail "no release for $(uname -s): build from source (README, \"From source\")" ;;
esac
case $(uname -m) in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) fail "no release for $(uname -m): build from source (README, \"From source\")" ;;
esac

if [ -n "$dist" ]; then
  [ -f "$dist/SHA256SUMS" ] || fail "$dist holds no SHA256SUMS: give the directory make dist wrote (make dist; CLAWHOST_DIST=dist)"
  base=$dist
  fetch() { cp "$1" "$2"; }
  if [ -z "${CLAWHOST_VERSION:-}" ]; then
    # The one version the build's SHA256SUMS lists for this machine.
    versions=$(awk -v s="_${os}_${arch}.tar.gz" '{ f = $2; sub(/^\*/, "", f)
      if (substr(f, 1, 9) == "clawhost_" && length(f) > 9 + length(s) && substr(f, length(f) - length(s) + 1) == s)
        print substr(f, 10, length(f) - 9 - length(s)) }' "$dist/SHA256SUMS")
    [ -n "$versions" ] || fail "$dist/SHA256SUMS lists no archive for ${os}/${arch}: make dist DIST_ARGS='-platforms ${os}/${arch}'"
    [ "$(echo "$versions" | wc -l | tr -d ' ')" = 1 ] || fail "$dist/SHA256SUMS lists several versions ($(echo $versions)): say which with CLAWHOST_VERSION"
    CLAWHOST_VERSION=$versions
  fi
  version=$CLAWHOST_VERSION
else
  version=${CLAWHOST_VERSION:-0.1.0}
  base=${CLAWHOST_RELEASE_URL:-https://github.com/clawhost/clawhost/releases/download/v$version}
  if command -v curl >/dev/null 2>&1; then
    fetch() { curl -fsSL -o "$2" "$1"; }
  elif command -v wget >/dev/null 2>&1; then
    fetch() { wget -q -O "$2" "$1"; }
  else
    fail "needs curl or wget"
  fi
fi
archive="clawhost_${version}_${os}_${arch}.tar.gz"
if command -v sha256sum >/dev/null 2>&1; then
  sum() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null 2>&1; then
  sum() { shasum -a 256 "$1" | cut -d' ' -f1; }
else
  fail "needs sha256sum or shasum"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
echo "getting $archive from $base"
fetch "$base/SHA256SUMS" "$tmp/SHA256SUMS" || fail "cannot get $base/SHA256SUMS"
fetch "$base/$archive" "$tmp/$archive" || fail "cannot get $base/$archive"
want=$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1 }' "$tmp/SHA256SUMS")
[ -n "$want" ] || fail "SHA256SUMS lists no $archive"
got=$(sum "$tmp/$archive")
[ "$got" = "$want" ] || fail "checksum mismatch for $archive (got $got, SHA256SUMS says $want): not installed"

mkdir -p "$tmp/x"
tar -xzf "$tmp/$archive" -C "$tmp/x"
src="$tmp/x/clawhost_${version}_${os}_${arch}"
[ -x "$src/clawhost" ] || fail "$archive holds no clawhost_${version}_${os}_${arch}/clawhost"
dest="$prefix/lib/clawhost-$version"
current="$prefix/lib/clawhost"
if [ -e "$current" ] && [ ! -L "$current" ]; then
  fail "$current is not a link (install.sh keeps one there to the release installed last): move it away"
fi
mkdir -p "$prefix/lib" "$prefix/bin"
rm -rf "$dest"
mv "$src" "$dest"
ln -sfn "clawhost-$version" "$current"
# clawhost finds its plugins beside its real file: the links are followed.
ln -sfn "$current/clawhost" "$prefix/bin/clawhost"
"$prefix/bin/clawhost" version
echo "installed clawhost $version in $dest, linked from $current and $prefix/bin/clawhost"

# The configuration clawhost init wrote names a release's directory as plugin_dir when it
# was written by a release before the link: it would keep loading that release's plugins.
confdir=${XDG_CONFIG_HOME:-$HOME/.config}
config="$confdir/clawhost/config.hcl"
if [ -f "$config" ]; then
  if awk -v old="plugin_dir = \"$prefix/lib/clawhost-" -v new="plugin_dir = \"$current\"" '
    index($0, old) == 1 && $0 ~ /"$/ && index(substr($0, length(old) + 1), "/") == 0 { print new; changed = 1; next }
    { print }
    END { exit !changed }' "$config" >"$tmp/config.hcl"; then
    cat "$tmp/config.hcl" >"$config"
    echo "$config: plugin_dir is now $current (the plugins of clawhost $version)"
  fi
fi
for unit in "$confdir/systemd/user/clawhost.service" /etc/systemd/system/clawhost.service; do
  if [ -f "$unit" ] && grep -q "^ExecStart=.*/lib/clawhost-[^/]*/clawhost" "$unit"; then
    echo "$unit starts an older release: run clawhost service install -force (with the same -config)"
  fi
done
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "add $prefix/bin to PATH (e.g. in ~/.profile: export PATH=\"$prefix/bin:\$PATH\")" ;;
esac
echo "next: clawhost init   (docs/init.md)"
