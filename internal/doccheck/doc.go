// Package doccheck reads the commands that README.md and docs/*.md show a
// user: every line of a fenced sh block, split into the commands a shell
// would run one after another (;, &&), comments dropped, continued lines
// joined; and the "$ command" lines of a quoted transcript with the output
// quoted under them. Its test (docs_test.go) builds corral once and runs
// each command as a user would, so that a documented command that breaks
// fails the tests; how a doc author adds a command is in CONTRIBUTING.md.
//
// It imports nothing of corral and does no I/O beyond what its caller
// passes in.
package doccheck
