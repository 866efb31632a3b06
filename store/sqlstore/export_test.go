package sqlstore

// PurgeIndexes maps the SQLite purge statements that select a batch of
// ended rows to the partial index each must use.
func PurgeIndexes() map[string]string {
	q := purgeOf[0]
	return map[string]string{
		q.jobs:              "jobs_ended",
		q.deliveries:        "webhook_deliveries_ended",
		q.runs:              "runs_ended",
		q.endedWorkflowRuns: "workflow_runs_ended",
	}
}
