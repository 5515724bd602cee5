# swe-forge: a JavaScript project's dependencies, installed with its package manager from its
# lockfile as committed (`pkgmanager.rs` chose the manager: $SWE_FORGE_PM is npm, yarn,
# yarn-berry or pnpm, $SWE_FORGE_PM_PACKAGE the npm registry package that installs it, empty for
# the toolchain's npm). `js_deps` installs them (a recipe's setup), `js_prefetch` those of the
# manifests a patch changes (a recipe's prefetch). Every fallback taken is one line of the setup
# notes (the provenance's `setup_notes`). Without a committed lockfile, npm resolves as of the
# commit's time (--before), then, when that fails, as of today.
js_note() { mkdir -p /swe-forge && echo "$*" | tee -a /swe-forge/setup-notes; }
if [ -n "$(git ls-files -- package-lock.json npm-shrinkwrap.json yarn.lock pnpm-lock.yaml)" ]; then before=; else before="--before=$SWE_FORGE_COMMIT_TIME"; fi
# npm "$@"; when it stops at ERESOLVE (a peer range it cannot settle), again with
# --legacy-peer-deps, npm's own advice.
js_npm() {
  local log rc=0
  log=$(mktemp)
  npm "$@" >"$log" 2>&1 || rc=$?
  cat "$log"
  if [ "$rc" -ne 0 ] && grep -q ERESOLVE "$log"; then
    js_note "npm $1 stopped at ERESOLVE (a peer range); retried with --legacy-peer-deps, npm's own advice"
    rc=0
    npm "$@" --legacy-peer-deps >"$log" 2>&1 || rc=$?
    cat "$log"
    set -- "$@" --legacy-peer-deps
  fi
  # A dependency's install script that fails (a binary fetched from a host out of reach:
  # PhantomJS's, a browser's; or one written for a newer Node than the project's): again with
  # lifecycle scripts off, which leaves that package (and any native addon) unbuilt.
  local failed
  failed=$(sed -n -e 's/^npm ERR! Failed at the \([^ ]*\) [a-z]* script.*/\1/p' -e 's/^npm \(ERR!\|error\) path .*\/node_modules\/\([^ ]*\)$/\2/p' "$log" | head -1)
  if [ "$rc" -ne 0 ] && [ -n "$failed" ] && [ "$1" != rebuild ]; then
    js_note "npm $1: the install script of $failed failed; installed again with lifecycle scripts off (--ignore-scripts)"
    rc=0
    npm "$@" --ignore-scripts || rc=$?
  fi
  rm -f "$log"
  return "$rc"
}
npm_install() {
  js_npm install "$@" $before || { [ -n "$before" ] && js_note "npm install $before failed; resolved as of today" && js_npm install "$@"; }
}
# The manager itself, once, from the npm registry (global, so that the runs and the project's own
# scripts find it on PATH). A version spec `8` is met by any 8.x.
js_manager() {
  [ -n "${SWE_FORGE_PM_PACKAGE:-}" ] || return 0
  local want=${SWE_FORGE_PM_PACKAGE##*@} bin=${SWE_FORGE_PM%-berry} have
  have=$(cd / && COREPACK_ENABLE_STRICT=0 "$bin" --version 2>/dev/null | tail -1) || have=
  case "$have" in "$want" | "$want".*) return 0 ;; esac
  npm install -g --force --no-audit --no-fund "$SWE_FORGE_PM_PACKAGE"
}
# Yarn 2 and later: into node_modules (the runs' commands call node_modules/.bin), its cache
# outside the repository and removed afterwards.
export YARN_NODE_LINKER=node-modules YARN_ENABLE_GLOBAL_CACHE=true YARN_GLOBAL_FOLDER=/tmp/swe-forge-yarn YARN_ENABLE_TELEMETRY=0
# Browser and application binaries that packages fetch in their install scripts, from hosts a
# setup may not reach (Cypress's download server, Electron's and chromedriver's release pages,
# Playwright's and Puppeteer's browser stores): not fetched. A 2019 library whose devDependencies
# held Cypress failed its whole install on `download.cypress.io`; a unit suite needs none of them,
# and a suite that drives a browser fails in its runs, visibly (karma's recipe uses Debian's
# Chromium instead).
export CYPRESS_INSTALL_BINARY=0 ELECTRON_SKIP_BINARY_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
  PUPPETEER_SKIP_DOWNLOAD=true PUPPETEER_SKIP_CHROMIUM_DOWNLOAD=true CHROMEDRIVER_SKIP_DOWNLOAD=true \
  GECKODRIVER_SKIP_DOWNLOAD=true
js_lockfile_back() { git checkout -q -- "$@" 2>/dev/null || true; }
js_deps() {
  js_manager
  local rc=0
  case "${SWE_FORGE_PM:-npm}" in
    yarn)
      if [ -z "$(git ls-files -- yarn.lock)" ]; then
        npm_install --no-audit --no-fund --no-save "$@"
      # --ignore-engines: an `engines` field only warns, as under npm (a dev tool of the lockfile
      # that asks for a newer Node than the project's own runs on it).
      elif ! yarn install --frozen-lockfile --ignore-engines --non-interactive --network-timeout 600000 "$@"; then
        js_note "yarn install --frozen-lockfile failed (yarn.lock does not match package.json); installed with --pure-lockfile, the lockfile left as committed"
        yarn install --pure-lockfile --ignore-engines --non-interactive --network-timeout 600000 "$@" || rc=$?
      fi
      rm -rf /usr/local/share/.cache/yarn /root/.cache/yarn
      return "$rc" ;;
    yarn-berry)
      if ! yarn install --immutable "$@"; then
        js_note "yarn install --immutable failed (yarn.lock does not match package.json); installed without it, the lockfile put back as committed"
        yarn install --no-immutable "$@" || rc=$?
        js_lockfile_back yarn.lock
      fi
      rm -rf /tmp/swe-forge-yarn
      return "$rc" ;;
    pnpm)
      if ! pnpm install --frozen-lockfile --store-dir /tmp/swe-forge-pnpm "$@"; then
        js_note "pnpm install --frozen-lockfile failed (pnpm-lock.yaml does not match package.json); installed without it, the lockfile put back as committed"
        pnpm install --no-frozen-lockfile --store-dir /tmp/swe-forge-pnpm "$@" || rc=$?
        js_lockfile_back pnpm-lock.yaml
      fi
      rm -rf /tmp/swe-forge-pnpm
      return "$rc" ;;
    *)
      # On top of a repository environment node_modules exists: install what the base commit adds
      # or changes (--no-save: the lockfile is left as committed).
      if [ -d node_modules ]; then npm_install --no-audit --no-fund --no-save "$@"
      elif [ -f package-lock.json ] || [ -f npm-shrinkwrap.json ]; then js_npm ci "$@"
      else npm_install "$@"
      fi ;;
  esac
}
# The dependencies of manifests a patch changes (a fix that adds a package): the patched
# manifests are in place and are put back afterwards by the caller, lockfiles included.
js_prefetch() {
  js_manager
  case "${SWE_FORGE_PM:-npm}" in
    yarn) yarn install --pure-lockfile --ignore-engines --non-interactive --network-timeout 600000; rm -rf /usr/local/share/.cache/yarn /root/.cache/yarn ;;
    yarn-berry) yarn install --no-immutable; rm -rf /tmp/swe-forge-yarn ;;
    pnpm) pnpm install --no-frozen-lockfile --store-dir /tmp/swe-forge-pnpm; rm -rf /tmp/swe-forge-pnpm ;;
    *) npm_install --no-audit --no-fund --no-save ;;
  esac
}
