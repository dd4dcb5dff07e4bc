package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A fake marks itself with a file of its own, named for its process id and
// holding that id and its start time, written once it serves and removed
// when it ends. agenta fake stop stops only a process so marked: a command
// line is no proof (agenta eval run --app fake … has "fake" in its), and a
// start time that still matches tells the fake from a later process that
// got its id.

// markerDir is where the fakes of this user keep their markers.
func markerDir() string {
	return filepath.Join(os.TempDir(), "agenta-fake-"+strconv.Itoa(os.Getuid()))
}

func markerPath(pid int) string { return filepath.Join(markerDir(), strconv.Itoa(pid)) }

// markerOf is what the marker of process pid holds: its id and its start
// time, where the system says it ("" otherwise).
func markerOf(pid int) []byte {
	return []byte(strconv.Itoa(pid) + " " + processStart(pid) + "\n")
}

// markFake writes this process's marker; the function returned removes it.
// A marker that cannot be written leaves a fake that fake stop refuses,
// which it then says, naming the directory.
func markFake() (remove func(), err error) {
	if err := os.MkdirAll(markerDir(), 0o700); err != nil {
		return func() {}, err
	}
	path := markerPath(os.Getpid())
	if err := os.WriteFile(path, markerOf(os.Getpid()), 0o600); err != nil {
		return func() {}, err
	}
	return func() { _ = os.Remove(path) }, nil
}

// markedFake reports whether process pid is a fake that marked itself and
// is still the process that did.
func markedFake(pid int) bool {
	got, err := os.ReadFile(markerPath(pid))
	return err == nil && bytes.Equal(got, markerOf(pid))
}

// processStart returns the start time of process pid in clock ticks since
// boot (field 22 of /proc/PID/stat), or "" where there is no /proc.
func processStart(pid int) string {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The fields after the ")" that ends the program's name, from field 3.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return ""
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 20 {
		return ""
	}
	return fields[19]
}
