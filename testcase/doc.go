// Package testcase owns test cases, test case tags, and generations: runs of
// a test case against a version, executed as background jobs through the
// same path as completions and graded against the expected output.
package testcase
