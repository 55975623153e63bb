package web

import (
	"io/fs"
	"net/http"
)

// Register mounts the routes on mux.
func (h *Handler) Register(mux *http.ServeMux) {
	h.closing = make(chan struct{})
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /static/", secure(http.StripPrefix("/static/", http.FileServerFS(static))))
	h.routes(func(pattern string, fn http.HandlerFunc, signedIn bool) {
		var handler http.Handler = fn
		if signedIn {
			handler = h.Auth.Browser(handler)
		}
		mux.Handle(pattern, secure(handler))
	})
}

// Routes lists the patterns of the pages and actions Register mounts (the
// static assets aside), so that test sweeps cover each without a list to keep.
func Routes() []string {
	var out []string
	(&Handler{}).routes(func(pattern string, _ http.HandlerFunc, _ bool) { out = append(out, pattern) })
	return out
}

// routes is the route table: every page and action of the browser, one
// route each, the action in the pattern (before a page's path, which runs
// to the end) and never in a suffix a handler parses. signedIn routes learn
// who is asking from the session (or a bearer token); the others handle
// signing in.
func (h *Handler) routes(route func(pattern string, fn http.HandlerFunc, signedIn bool)) {
	route("GET /login", h.loginPage, false)
	route("POST /login", h.login, false)
	route("GET /logout", h.logoutPage, false)
	route("POST /logout", h.logout, false)
	// A remote MCP client's sign-in: the consent page finds the person's
	// session itself, whatever workspace they are in.
	route("GET /oauth/authorize", h.authorizePage, false)
	route("POST /oauth/authorize", h.authorize, false)

	route("GET /{$}", h.index, true)
	route("GET /events", h.events, true)
	route("GET /search", h.search, true)
	route("GET /tree", h.tree, true)
	route("GET /activity", h.activityPage, true)

	// Pages. Posting to a page saves it.
	route("GET /pages/{path...}", h.page, true)
	route("POST /pages/{path...}", h.save, true)
	route("GET /new", h.newPage, true)
	route("GET /edit/{path...}", h.edit, true)
	route("POST /preview/{path...}", h.preview, true)
	route("GET /history/{path...}", h.history, true)
	route("POST /restore/{path...}", h.restore, true)
	route("POST /move/{path...}", h.move, true)
	route("POST /delete/{path...}", h.remove, true)
	route("GET /trash", h.trash, true)
	route("POST /trash/{id}/restore", h.restoreFromTrash, true)

	// Review threads beside a page.
	route("POST /threads", h.comment, true)
	route("POST /threads/{id}/resolve", h.resolveThread, true)
	route("POST /threads/{id}/reopen", h.reopenThread, true)
	route("POST /threads/{id}/edit", h.editComment, true)
	route("GET /threads/{id}/delete", h.confirmDelete, true)
	route("POST /threads/{id}/delete", h.deleteThread, true)
	route("POST /reviews", h.submitReview, true)

	// Tasks: the board, a task's thread and its forms, the inbox. Every
	// rule is the tasks service's; these only read forms and show answers.
	route("GET /tasks", h.board, true)
	route("POST /tasks", h.newTask, true)
	route("GET /tasks/{n}", h.task, true)
	route("POST /tasks/{n}/claim", h.claimTask, true)
	route("POST /tasks/{n}/edit", h.editTask, true)
	route("POST /tasks/{n}/comment", h.commentTask, true)
	route("POST /tasks/{n}/ask", h.askTask, true)
	route("POST /tasks/{n}/answer", h.answerTask, true)
	route("POST /tasks/{n}/blocked", h.blockedTask, true)
	route("POST /tasks/{n}/complete", h.completeTask, true)
	route("POST /tasks/{n}/status", h.statusTask, true)
	route("GET /inbox", h.inbox, true)
	route("POST /inbox/ack", h.ackInbox, true)

	// Desks.
	route("GET /desk", h.myDesk, true)
	route("GET /desk/{handle}", h.desk, true)
	route("POST /desk/todos", h.deskAddTodo, true)
	route("POST /desk/todos/{id}", h.deskUpdateTodo, true)
	route("POST /desk/progress", h.deskAddProgress, true)
	route("POST /desk/progress/archive", h.deskArchiveProgress, true)

	// Agents and their sessions' terminals.
	route("GET /agents", h.agentsPage, true)
	route("POST /agents/start", h.startAgent, true)
	route("GET /sessions/{id}", h.sessionPage, true)
	route("POST /sessions/{id}/stop", h.stopSession, true)
	route("POST /sessions/{id}/merge", h.mergeSession, true)
	route("POST /sessions/{id}/remove-worktree", h.removeWorktree, true)
	route("GET /sessions/{id}/transcript", h.sessionTranscript, true)
	route("GET /sessions/{id}/terminal", h.sessionTerminal, true)

	route("GET /admin/agents", h.adminAgents, true)
	route("POST /admin/agents", h.setAgent, true)
	route("POST /admin/agents/{handle}/remove", h.removeAgent, true)
	route("POST /admin/agents/{handle}/pause", h.pauseAgent, true)
	route("POST /admin/agents/{handle}/resume", h.resumeAgent, true)
	route("GET /agents/deliveries", h.deliveriesPage, true)
	route("GET /agents/deliveries/{id}", h.deliveryPage, true)
	route("POST /agents/deliveries/{id}/retry", h.retryDelivery, true)
	route("POST /agents/deliveries/{id}/cancel", h.cancelDelivery, true)

	route("GET /connections", h.connections, true)
	route("POST /connections/{id}/revoke", h.revokeConnection, true)

	route("GET /admin", h.admin, true)
	route("POST /admin/tokens", h.adminCreateToken, true)
	route("POST /admin/tokens/{id}/revoke", h.adminRevokeToken, true)
	route("POST /admin/sessions/{id}/revoke", h.adminRevokeSession, true)
	route("POST /admin/members/{handle}/role", h.adminSetRole, true)
	route("POST /admin/members/{handle}/remove", h.adminRemoveMember, true)
	route("GET /admin/tracker", h.adminTracker, true)
	route("POST /admin/tracker/link", h.linkTracker, true)
	route("POST /admin/tracker/sync", h.syncTrackerNow, true)
	route("POST /admin/tracker/retry", h.retryTracker, true)
	route("POST /admin/tracker/dead/{id}/retry", h.retryDeadLetter, true)
	route("POST /admin/tracker/conflicts/{id}/dismiss", h.dismissConflict, true)

	route("GET /gateway", h.gatewayPage, true)
	route("POST /gateway/health", h.gatewayHealth, true)
	route("POST /gateway/{name}/login", h.gatewayLogin, true)
	route("GET /gateway/oauth/callback", h.gatewayCallback, true)
}
