//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// detach makes cmd the leader of a session of its own, without a
// terminal: a Ctrl-C or a hang-up meant for the shell that started it does
// not reach it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// inspectProcess says whether process pid has ended (a zombie has), is an
// agenta fake (it marked itself: see markFake), or is another program.
func inspectProcess(pid int) (processState, error) {
	switch err := syscall.Kill(pid, 0); {
	case errors.Is(err, syscall.ESRCH):
		return processGone, nil
	case errors.Is(err, syscall.EPERM):
		return processOther, nil // another user's
	case err != nil:
		return processGone, err
	}
	proc := "/proc/" + strconv.Itoa(pid)
	if stat, err := os.ReadFile(proc + "/stat"); err == nil {
		// The state follows the ")" that ends the program's name.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return processGone, nil
		}
	}
	if markedFake(pid) {
		return processFake, nil
	}
	return processOther, nil
}

// terminate asks process pid to end.
func terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }

// kill ends process pid at once.
func kill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
