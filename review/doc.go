// Package review owns the review queue of live runs: the runs of the API
// surface that a canvas's inferencesPercentage samples (completion.Sample
// draws them, and the completion store writes their items with the run
// records), and runs added by hand, for example one an end user gave
// feedback on. Reviewers mark an item good or bad with a score and a
// comment, read the counts per version, and turn an item's run into a
// test case of its canvas.
//
// An item follows its canvas's access: viewers of the canvas read its
// queue, editors annotate, add and make test cases. An item goes with its
// run when the run is purged.
package review
