package sqlite

import "github.com/promptcanvas/promptcanvas/store/sqlstore"

// Hot statements are prepared once per pool at Open, because parsing SQL
// costs as much as running these statements; Tx.exec, Tx.query and
// Tx.queryRow use the prepared form when a query's text is listed for the
// transaction's pool. Each list holds only what runs on every call of a
// hot path, since every Open pays for it.

// hotWrites are the statements of the group-committed writes: each one's
// savepoint (commit.go), a publish (sqlstore.HotCanvasQueries), the record
// of a completion run, its job, start and end (sqlstore/runs.go), a
// workflow step's state, written on every change (sqlstore/workflows.go),
// and the delivery log's rows and its record of each webhook attempt
// (sqlstore/deliveries.go), the queue's claim (sqlstore/claim.go), and
// the audit event every publish appends (sqlstore/audit.go).
func hotWrites() []string {
	canvases, _ := sqlstore.HotCanvasQueries()
	claims, _ := sqlstore.SQLite.ClaimQueries()
	return append(append(append(canvases, claims...), sqlstore.HotAuditQueries()...),
		`SAVEPOINT write`,
		`RELEASE write`,
		sqlstore.QInsertRun,
		sqlstore.QInsertJob,
		sqlstore.QGetRun,
		sqlstore.QStartRun,
		sqlstore.QRunTerminal,
		sqlstore.QFinishRun,
		sqlstore.QInsertDelivery,
		sqlstore.QWorkflowRunStatus,
		sqlstore.QUpsertWorkflowStep,
		sqlstore.QRecordDelivery,
		sqlstore.QInsertAttempt,
	)
}

// hotReads are the statements of a history page, a version read, an
// API-key check, the canvas and environment lookups every environment
// read starts with, the applications a publish's event could reach, the
// queue's idle poll (sqlstore/claim.go) and the backlog count of every request that
// adds model work (sqlstore/queuestats.go).
func hotReads() []string {
	_, canvases := sqlstore.HotCanvasQueries()
	_, anyDue := sqlstore.SQLite.ClaimQueries()
	return append(canvases,
		sqlstore.QAPIKeyByHash,
		sqlstore.QApplicationsOfCanvas,
		anyDue,
		sqlstore.SQLite.QCountQueued(),
	)
}
