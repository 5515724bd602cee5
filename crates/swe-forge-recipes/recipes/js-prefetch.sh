# swe-forge: the prefetch's `js_prefetch`, put after `js-deps.sh` in the prefetch only, in place of
# the one there (which stays as it was: the environments' tags hash `js-deps.sh` with the setup).
# The dependencies of the manifests a patch changes are fetched with the network and with the
# patch's package.json in place, so no lifecycle script runs (`preinstall`, `postinstall`,
# `prepare`, of the project or of a package): they are the pull request's code, or code it names.
# Yarn 2 and later skip the builds (`--mode=skip-build`, Yarn 3 on); Yarn 2 has no such mode and
# runs the project's own scripts still (its `enableScripts` stops those of packages only). A
# package whose install script builds it is then fetched unbuilt: the runs show what it lacks.
js_prefetch() {
  local npm_config_ignore_scripts=true YARN_ENABLE_SCRIPTS=false mode=--mode=skip-build
  export npm_config_ignore_scripts YARN_ENABLE_SCRIPTS
  js_manager
  case "${SWE_FORGE_PM:-npm}" in
    yarn) yarn install --pure-lockfile --ignore-engines --ignore-scripts --non-interactive --network-timeout 600000; rm -rf /usr/local/share/.cache/yarn /root/.cache/yarn ;;
    yarn-berry)
      case "$(cd / && yarn --version 2>/dev/null | tail -1)" in 2.*) mode= ;; esac
      yarn install --no-immutable $mode; rm -rf /tmp/swe-forge-yarn ;;
    pnpm) pnpm install --no-frozen-lockfile --ignore-scripts --store-dir /tmp/swe-forge-pnpm; rm -rf /tmp/swe-forge-pnpm ;;
    *) npm_install --no-audit --no-fund --no-save --ignore-scripts ;;
  esac
}
