#!/bin/sh
# Starts rlm from this copy of the repository (the Claude Code plugin's copy, or a clone): the plugin's
# MCP server and hooks run `sh .../plugin/launch.sh ARGS...`, meaning `rlm ARGS...`.
#
# It needs no `rlm` on PATH and no particular default `node`: it looks for a Node.js 24 or newer
# ($RLM_NODE, `node` on PATH, this copy's .node/ from .ci/node-env.sh, then nvm, fnm, volta, asdf, mise,
# n and Homebrew installs) and runs plugin/start.ts with it, which installs rlm's dependencies on first
# start and then runs bin/rlm.js.
#
# When no such Node exists, it says so in one line with the fix, where the user will see it: a hook
# appends the line to rlm-hook.log (and exits 0, printing nothing); the MCP server logs it there too and
# answers the host's requests up to its initialize with it, which Claude Code shows in its server status
# (`claude mcp list`, /mcp).
# POSIX sh only: this runs before anything else can be relied on.

need=24
# A Claude Code that rlm itself runs as a model (claude-code:MODEL) runs the user's hooks too: rlm's own
# stand aside there.
[ -n "${RLM_MODEL_CALL:-}" ] && case " $* " in *" --hook "*) exit 0 ;; esac

# Claude Code gives SessionEnd hooks 1.5 s when it exits, then cancels them: the import hook hands
# everything (finding Node, starting rlm) to a background copy of itself and returns at once. The copy
# reads the hook's input from the original stdin (fd 3: a background job's own stdin is /dev/null), in
# its own session when setsid exists, so that nothing sent to the hook's process group reaches it.
if [ "${RLM_HOOK_BACKGROUND:-}" != 1 ] && [ "${1:-}" = claude ] && [ "${2:-}" = ingest ]; then
  case " $* " in
    *" --hook "*)
      exec 3<&0
      if command -v setsid >/dev/null 2>&1; then
        RLM_HOOK_BACKGROUND=1 setsid sh "$0" "$@" <&3 >/dev/null 2>&1 &
      else
        RLM_HOOK_BACKGROUND=1 sh "$0" "$@" <&3 >/dev/null 2>&1 &
      fi
      exit 0
      ;;
  esac
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
config=${CLAUDE_CONFIG_DIR:-${HOME:-}/.claude}
log="$config/rlm-hook.log"

# Prints the major version of Node binary $1, or nothing when it does not run.
major() {
  "$1" -e 'process.stdout.write(process.versions.node)' 2>/dev/null | sed -n 's/^\([0-9][0-9]*\)\..*/\1/p'
}

found=''
seen=''
consider() {
  [ -n "$found" ] && return 0
  [ -n "$1" ] && [ -x "$1" ] && [ ! -d "$1" ] || return 0
  m=$(major "$1")
  if [ -n "$m" ] && [ "$m" -ge "$need" ]; then
    found=$1
  elif [ -z "$seen" ]; then
    v=$("$1" --version 2>/dev/null)
    seen="Node.js ${v:-of unknown version} ($1)"
  fi
}

if [ -n "${RLM_NODE:-}" ]; then
  consider "$RLM_NODE"
  [ -n "$seen" ] && seen="$seen, named by RLM_NODE"
  [ -n "$found$seen" ] || seen="no Node.js at RLM_NODE=$RLM_NODE"
else
  consider "$(command -v node 2>/dev/null)"
  for c in "$root"/.node/*/node_modules/node-*/bin/node "$root"/.node/node_modules/node-*/bin/node \
    "${NVM_DIR:-${HOME:-}/.nvm}"/versions/node/v*/bin/node \
    "${FNM_DIR:-${HOME:-}/.local/share/fnm}"/node-versions/v*/installation/bin/node \
    "${HOME:-}/Library/Application Support/fnm/node-versions"/v*/installation/bin/node \
    "${VOLTA_HOME:-${HOME:-}/.volta}"/tools/image/node/*/bin/node \
    "${ASDF_DATA_DIR:-${HOME:-}/.asdf}"/installs/nodejs/*/bin/node \
    "${HOME:-}"/.local/share/mise/installs/node/*/bin/node \
    "${N_PREFIX:-/usr/local}"/n/versions/node/*/bin/node \
    /opt/homebrew/opt/node@*/bin/node /opt/homebrew/bin/node \
    /usr/local/opt/node@*/bin/node /usr/local/bin/node /usr/bin/node; do
    consider "$c"
  done
fi

if [ -n "$found" ]; then
  exec "$found" "$root/plugin/start.ts" "$@"
fi

message="rlm needs Node.js $need or newer and found ${seen:-no node at all}. Fix: install Node $need (e.g. nvm install $need) or set RLM_NODE to a Node $need binary, then restart Claude Code."

hook=''
for a in "$@"; do [ "$a" = --hook ] && hook=1; done
if [ -n "$hook" ]; then
  mkdir -p "$config" 2>/dev/null
  printf '%s error: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$message" >>"$log" 2>/dev/null
  exit 0
fi

printf '%s\n' "$message" >&2
mkdir -p "$config" 2>/dev/null
printf '%s error: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$message" >>"$log" 2>/dev/null
transport=stdio
prev=''
for a in "$@"; do
  [ "$prev" = --transport ] && transport=$a
  case $a in --transport=*) transport=${a#--transport=} ;; esac
  prev=$a
done
if [ "${1:-}" = serve ] && [ "$transport" = stdio ] && [ ! -t 0 ]; then
  # Answer the JSON-RPC requests up to the host's initialize with the message as their error: Claude Code
  # sends a server/discover probe first and takes an error there for "no such method".
  text=$(printf '%s' "$message" | sed 's/\\/\\\\/g; s/"/\\"/g')
  replies=0
  while [ "$replies" -lt 10 ] && IFS= read -r line; do
    id=$(printf '%s\n' "$line" | sed -n 's/.*"id"[[:space:]]*:[[:space:]]*\([0-9][0-9]*\).*/\1/p')
    [ -n "$id" ] || id=$(printf '%s\n' "$line" | sed -n 's/.*"id"[[:space:]]*:[[:space:]]*\("[^"]*"\).*/\1/p')
    if [ -n "$id" ]; then
      printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"%s"}}\n' "$id" "$text"
      replies=$((replies + 1))
      method=$(printf '%s\n' "$line" | sed -n 's/.*"method"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')
      [ "$method" = initialize ] && break
    fi
  done
fi
exit 1
