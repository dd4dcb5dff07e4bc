//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// detach makes cmd the leader of a session of its own, without a
// terminal: a Ctrl-C or a hang-up meant for the shell that started it does
// not reach it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// inspectProcess says whether process pid has ended (a zombie has), runs an
// agenta fake, or runs another program. Where /proc does not say what a
// process runs, a live process counts as a fake.
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
	cmdline, err := os.ReadFile(proc + "/cmdline")
	if err != nil {
		return processFake, nil
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if strings.HasPrefix(filepath.Base(args[0]), "agenta") && slices.Contains(args[1:], "fake") {
		return processFake, nil
	}
	return processOther, nil
}

// terminate asks process pid to end.
func terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }

// kill ends process pid at once.
func kill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
