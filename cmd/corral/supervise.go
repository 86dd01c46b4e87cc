package main

// The corral binary doubles as the supervisor of the tasks that
// `corral server` runs: the server re-executes it with a variable set, and
// the executor package's init then supervises one task instead of running
// main. Importing the package is all it takes.
import _ "github.com/corral-sched/corral/internal/executor"
