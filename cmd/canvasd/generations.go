package main

import (
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// generations builds the service that runs test cases, and registers the
// handler of its jobs in the queue worker's model lane: generations execute through
// the completion service, wake the worker when enqueued, commit the job
// that finishedJob returns with their outcome, and an abort cancels a model
// call running in this process at once (Worker.Cancel).
func generations(testCases *testcase.Service, db store.Store, runner *completion.Service, worker *queue.Worker,
	finishedJob func(*testcase.Generation) (*queue.Job, error)) *testcase.GenerationService {
	svc := testcase.NewGenerationService(testcase.GenerationOptions{TestCases: testCases, Store: db,
		Runner: runner, Notify: worker.Notify, Cancel: worker.Cancel, FinishedJob: finishedJob})
	worker.HandleIn(queue.LaneModel, testcase.JobKindGenerate, svc.HandleJob)
	return svc
}
