package desktools

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/mcpserver"
)

// 001's agents name the desk's resources by SUMM Console's URIs. They resolve
// to Atrium's: resources/read reads the atrium:// resource; a subscription
// keeps the URI it was made with, and hears of changes by it (summUpdates).
// They are not listed (resources/list shows the atrium:// names only).
var summURIs = map[string]string{
	"summ://todos/list":    TodosURI,
	"summ://draft":         DraftURI,
	"summ://plan":          PlanURI,
	"summ://progress":      ProgressURI,
	"summ://sessions/list": SessionsURI,
}

// summTodoPrefix begins 001's URI of one todo, summ://todos/{id}.
const summTodoPrefix = "summ://todos/"

// fromSumm is the atrium:// URI of a summ:// one.
func fromSumm(uri string) (string, bool) {
	if u, ok := summURIs[uri]; ok {
		return u, true
	}
	if id, ok := strings.CutPrefix(uri, summTodoPrefix); ok && id != "" {
		return TodoURIPrefix + id, true
	}
	return "", false
}

// toSumm is the summ:// URI of an atrium:// one, if 001 had it.
func toSumm(uri string) (string, bool) {
	for s, u := range summURIs {
		if u == uri {
			return s, true
		}
	}
	if id, ok := strings.CutPrefix(uri, TodoURIPrefix); ok && id != "" && !strings.Contains(id, "/") {
		return summTodoPrefix + id, true
	}
	return "", false
}

// summReads resolves resources/read of a summ:// URI.
func summReads(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if rr, ok := req.(*mcp.ReadResourceRequest); ok && rr.Params != nil {
			if uri, ok := fromSumm(rr.Params.URI); ok {
				rr.Params.URI = uri
			}
		}
		return next(ctx, method, req)
	}
}

// summUpdates adds, to each update of a resource 001 named, the same update
// by its summ:// URI: the SDK tells only the sessions subscribed to a URI,
// so each subscriber hears once, by the name it used.
func summUpdates(us []mcpserver.ResourceUpdate) []mcpserver.ResourceUpdate {
	for _, u := range us {
		if s, ok := toSumm(u.URI); ok {
			us = append(us, mcpserver.ResourceUpdate{URI: s, Meta: u.Meta})
		}
	}
	return us
}
