#!/bin/sh
# The transports reach the database only through the services: api, web,
# mcpserver, oauthhttp, authn, httpserve and every MCP toolset package (mcptools/…) must not import the
# store. Test files may, to set up fixtures, so only each package's own
# imports (go list's .Imports, without _test files) count; so may a test
# helper package through store/storetest.
# Run by `make lint`; prints each offending import and fails.
set -eu
GO=${GO:-go}
module=github.com/atrium-hq/atrium
$GO list -f '{{.ImportPath}} {{join .Imports " "}}' ./... | awk -v m="$module" '
	$1 ~ "^" m "/(api|web|mcpserver|mcptools|oauthhttp|authn|httpserve|webhooks)(/|$)" {
		for (i = 2; i <= NF; i++)
			if ($i == m "/store") {
				print $1 " imports " $i ": transports go through the services, which return their own types"
				bad = 1
			}
	}
	END { exit bad }'
