//go:build !unix

package main

import (
	"os"
	"os/exec"
)

// detach leaves cmd as it is: sessions are a Unix notion.
func detach(*exec.Cmd) {}

// inspectProcess says whether process pid has ended, or is an agenta fake
// (it marked itself: see markFake), or is another program.
func inspectProcess(pid int) (processState, error) {
	p, err := os.FindProcess(pid)
	if err != nil {
		return processGone, nil
	}
	p.Release()
	if markedFake(pid) {
		return processFake, nil
	}
	return processOther, nil
}

// terminate ends process pid: this system has no SIGTERM.
func terminate(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	defer p.Release()
	return p.Kill()
}

// kill ends process pid at once.
func kill(pid int) error { return terminate(pid) }
