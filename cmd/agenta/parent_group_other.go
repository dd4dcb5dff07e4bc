//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package main

// leadsGroup reports false where the process group is not read (Windows,
// where the watch has no parent to lose, and Solaris and AIX, whose
// syscall package has no Getpgrp).
func leadsGroup() bool { return false }
