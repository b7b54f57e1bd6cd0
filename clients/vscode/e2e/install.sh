#!/usr/bin/env bash
# Installs what the end-to-end run needs, from the package registries only:
#   Debian: chromium (the browser), ripgrep (VS Code's search binary), a C++ toolchain and
#   libkrb5-dev (VS Code's native modules are compiled here against the installed Node's headers);
#   npm: code-server (VS Code in a browser) and puppeteer-core (drives chromium; never downloads one),
#   pinned by e2e/package-lock.json, into a cache outside git;
#   and the default index, built into the cache with the shipped vectors.
# code-server's own install step (postinstall.sh) cannot run here: @vscode/ripgrep's postinstall and
# prebuild-install download binaries from outside the registries. So npm installs with
# --ignore-scripts and this script does by hand what postinstall.sh does: install VS Code's
# dependencies, compile its native modules with node-gyp, link Debian's rg where @vscode/ripgrep
# keeps its binary, and make postinstall.sh's symlinks.
#
# Exit status 3 with one line "cannot install: ..." when a package cannot be installed here (the
# test then skips with that line); any other failure is a bug (status 1).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
CACHE="${PEERLINT_E2E_CACHE:-$HOME/.cache/peerlint-e2e}"
NODE_GYP="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
STAMP="$CACHE/.installed"
mkdir -p "$CACHE"

unavailable() { echo "cannot install: $*" >&2; exit 3; }
say() { echo "e2e install: $*"; }

command -v node >/dev/null && command -v npm >/dev/null || unavailable "node and npm are not installed (Node.js 20 is needed)"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" = 20 ] || unavailable "code-server 4.100.3 needs Node.js 20, this is $(node --version)"

missing=()
[ -x "${PEERLINT_E2E_CHROMIUM:-/usr/bin/chromium}" ] || missing+=(chromium)
command -v rg >/dev/null || missing+=(ripgrep)
command -v g++ >/dev/null && command -v make >/dev/null || missing+=(g++ make)
[ -f /usr/include/krb5.h ] || [ -f /usr/include/krb5/krb5.h ] || missing+=(libkrb5-dev)
fc-list 2>/dev/null | grep -qi dejavu || missing+=(fonts-dejavu-core)
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || unavailable "${missing[*]} missing and no apt-get here"
  [ "$(id -u)" = 0 ] || unavailable "${missing[*]} missing and apt-get needs root"
  say "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null 2>&1 || unavailable "apt-get update failed (no package mirror reachable)"
  apt-get install -y -qq "${missing[@]}" >"$CACHE.apt.log" 2>&1 \
    || unavailable "apt-get install ${missing[*]} failed: $(tail -1 "$CACHE.apt.log")"
fi
[ -f /usr/include/node/node.h ] || unavailable "the Node.js headers (/usr/include/node) are missing: install the nodejs package that ships them"
[ -f "$NODE_GYP" ] || unavailable "node-gyp (shipped with npm) not found at $NODE_GYP"

want="$(cat "$HERE/package-lock.json" "$0" | sha256sum | cut -c1-16)"
if [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
  say "code-server and puppeteer-core into $CACHE"
  rm -rf "$CACHE/node_modules"
  mkdir -p "$CACHE"
  cp "$HERE/package.json" "$HERE/package-lock.json" "$CACHE/"
  (cd "$CACHE" && npm ci --ignore-scripts --omit=dev --no-audit --no-fund >"$CACHE/npm.log" 2>&1) \
    || unavailable "npm ci of code-server failed: $(grep -m1 -i err "$CACHE/npm.log" || tail -1 "$CACHE/npm.log")"
  VSCODE="$CACHE/node_modules/code-server/lib/vscode"
  # npm install, not ci: code-server's npm-shrinkwrap.json of VS Code is not in sync with its package.json.
  (cd "$VSCODE" && npm install --no-save --ignore-scripts --omit=dev --no-audit --no-fund >>"$CACHE/npm.log" 2>&1) \
    || unavailable "npm install of VS Code's dependencies failed: $(tail -1 "$CACHE/npm.log")"
  (cd "$VSCODE/extensions" && npm install --no-save --ignore-scripts --omit=dev --no-audit --no-fund >>"$CACHE/npm.log" 2>&1) \
    || unavailable "npm install of VS Code's extension dependencies failed: $(tail -1 "$CACHE/npm.log")"
  say "compiling VS Code's native modules"
  for mod in @vscode/deviceid @vscode/spdlog kerberos native-watchdog node-pty; do
    (cd "$VSCODE/node_modules/$mod" && nice node "$NODE_GYP" rebuild --nodedir=/usr -j 2 >"$CACHE/gyp.log" 2>&1) \
      || { tail -20 "$CACHE/gyp.log"; echo "node-gyp rebuild of $mod failed" >&2; exit 1; }
  done
  (cd "$CACHE/node_modules/argon2" && npm_config_nodedir=/usr nice "$CACHE/node_modules/.bin/node-pre-gyp" rebuild \
    --build-from-source >"$CACHE/gyp.log" 2>&1) || { tail -20 "$CACHE/gyp.log"; echo "building argon2 failed" >&2; exit 1; }
  mkdir -p "$VSCODE/node_modules/@vscode/ripgrep/bin"
  ln -sf "$(command -v rg)" "$VSCODE/node_modules/@vscode/ripgrep/bin/rg"
  (cd "$VSCODE" && rm -rf node_modules.asar && ln -s node_modules node_modules.asar)
  (cd "$VSCODE/bin/remote-cli" && ln -sf code-linux.sh code-server)
  (cd "$VSCODE/bin/helpers" && ln -sf browser-linux.sh browser.sh)
  "$CACHE/node_modules/.bin/code-server" --config "$CACHE/config.yaml" --version >/dev/null
  echo "$want" >"$STAMP"
fi

if [ ! -e "$CACHE/index/CURRENT" ]; then
  say "building the default index into $CACHE/index"
  nice "$REPO/.venv/bin/peerlint" index build --index "$CACHE/index" >"$CACHE/index.log" 2>&1 \
    || { tail -5 "$CACHE/index.log"; echo "peerlint index build failed" >&2; exit 1; }
fi
say "ready: $("$CACHE/node_modules/.bin/code-server" --config "$CACHE/config.yaml" --version | head -1), $("${PEERLINT_E2E_CHROMIUM:-/usr/bin/chromium}" --version 2>/dev/null)"
