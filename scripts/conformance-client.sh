#!/bin/sh
# The client side of the conformance suite's authorization scenarios runs
# this with the scenario's MCP URL as its last argument: `atrium call`
# against it, signing in with OAuth as a person would, the browser being
# curl (the suite's authorization server approves at once and redirects to
# the loopback listener). A client registered beforehand comes in
# MCP_CONFORMANCE_CONTEXT; the client's metadata document is the suite's
# fixture URL, used where the server takes one.
#
# ATRIUM_CONFORMANCE_VIA=gateway runs the same through the gateway instead:
# `atrium gateway login` signs the gateway in to the server (the URL as the
# gateway file's one server), then a gateway started on the same data
# folder calls the server's tool with the tokens it kept.
set -eu
url=$1
ctx=${MCP_CONFORMANCE_CONTEXT:-'{}'}
ATRIUM_OAUTH_CLIENT_ID=$(printf '%s' "$ctx" | jq -r '.client_id // empty')
ATRIUM_OAUTH_CLIENT_SECRET=$(printf '%s' "$ctx" | jq -r '.client_secret // empty')
ATRIUM_OAUTH_CLIENT_METADATA_URL=https://conformance-test.local/client-metadata.json
BROWSER='curl -s -L -o /dev/null --max-redirs 3'
export ATRIUM_OAUTH_CLIENT_ID ATRIUM_OAUTH_CLIENT_SECRET ATRIUM_OAUTH_CLIENT_METADATA_URL BROWSER
unset ATRIUM_TOKEN
atrium=${ATRIUM_BIN:-atrium}
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
if [ "${ATRIUM_CONFORMANCE_VIA:-call}" = gateway ]; then
	# A client registered beforehand goes in the gateway file, its secret
	# from the environment, as an operator would write it.
	jq -n --arg url "$url" --arg id "$ATRIUM_OAUTH_CLIENT_ID" '{mcpServers: {up: ({url: $url} +
		(if $id == "" then {} else {oauth: {clientId: $id, clientSecret: "${ATRIUM_OAUTH_CLIENT_SECRET}"}} end))}}' >"$data/gateway.json"
	"$atrium" --data-dir "$data" gateway login up --gateway "$data/gateway.json"
	exec "$atrium" --data-dir "$data" call --stdio "'$atrium' --data-dir '$data' mcp --gateway '$data/gateway.json'" up_test-tool
fi
exec "$atrium" --data-dir "$data" call test-tool --url "$url"
