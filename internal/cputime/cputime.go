// Package cputime reads the CPU time the process has used, for benchmarks
// on a shared machine: wall time per op says as much about the neighbours
// as about the code, CPU time per op about the code.
package cputime

import (
	"syscall"
	"time"
)

// Used is the CPU time the process has used so far, user and system, every
// thread counted; 0 where the system cannot say.
func Used() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
