// Package experiment owns experiments: runs of a canvas's test cases
// against several of its versions, scored by evaluators (rules, a model as
// judge, a team's webhook, people's annotations), totalled per version and
// compared side by side; and the evaluators a canvas saves for reuse.
//
// An experiment is one durable job (JobKindRun) that fans out a bounded
// number of case runs at once through the completion path, so that every
// candidate answer is a recorded run that follows the canvas's
// allowedCredentials and costs. Each result (a test case on a version at
// one repetition) is written once; a job that is claimed again after a
// crash skips the results already written, so a crash loses no result and
// repeats no finished case.
package experiment
