//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package main

import "syscall"

// leadsGroup reports whether the command leads its own process group: it
// was started under setsid (a session leader leads its group), or as a job
// of a shell with job control. A non-interactive shell, such as a CI
// step's, runs its commands in its own group.
func leadsGroup() bool { return syscall.Getpgrp() == syscall.Getpid() }
