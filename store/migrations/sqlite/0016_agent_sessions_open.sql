-- One open session per agent and task (or none) in a workspace: two starts
-- at the same moment, on any replicas, cannot both run.
CREATE UNIQUE INDEX agent_sessions_open ON agent_sessions (workspace_id, principal_id, COALESCE(task_id, 0)) WHERE ended_at IS NULL;
