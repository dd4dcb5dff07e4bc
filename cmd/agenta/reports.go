package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/agenta-go/agenta/evals"
	"github.com/agenta-go/agenta/internal/text"
)

// reportTarget is a report eval run was asked for, its path checked
// before any evaluation is created.
type reportTarget struct {
	flag string // --junit, --csv, --json or --markdown: "--" and the format's name
	path string // as given, for messages
	// file is the file written and compared: path, or the file a link at
	// path leads to, so that the link's target is replaced, never the
	// link (which would leave an earlier run's report behind it).
	file string
	// stdout says the path is "-": the report goes to standard output,
	// and the tables to standard error.
	stdout bool
	// inPlace says the path is a device or a pipe (/dev/null,
	// /dev/stdout), written as it is: a temporary file cannot be renamed
	// over it.
	inPlace bool
	// format is the report's format: whether it holds the rows, how its
	// text is escaped, and its writer.
	format evals.ReportFormat
}

// reportTargets returns eval run's reports that were asked for.
func (o *EvalRunOptions) reportTargets() []reportTarget {
	var out []reportTarget
	for _, format := range evals.ReportFormats() {
		if path := o.Reports[format.Name]; path != "" {
			out = append(out, reportTarget{flag: "--" + format.Name, path: path, format: format})
		}
	}
	return out
}

// checkReports checks the report paths before any evaluation is created,
// so that a run of half an hour never ends on a path that could not be
// written: each names a file (or "-" for standard output, once) in a
// directory that exists and can be written, none is a directory, and no
// two are the same file. (An empty path, as an unset CI variable gives,
// is refused with the other empty flag values: see emptyFlagValues.) It
// returns the targets that can be written, for the reports of a usage
// error too, and the first problem.
func (o *EvalRunOptions) checkReports() ([]reportTarget, error) {
	var problems []error
	var ok []reportTarget
	for _, t := range o.reportTargets() {
		if err := t.check(); err != nil {
			problems = append(problems, err)
			continue
		}
		ok = append(ok, t)
	}
	// No two reports on one file: the second would replace the first.
	clash := map[int]bool{}
	for i := range ok {
		for j := range i {
			if same, err := ok[j].sameFile(ok[i]); same || err != nil {
				clash[i], clash[j] = true, true
				if err == nil {
					err = usageErrorf("%s %s: the same file as %s %s: give each report its own", ok[i].flag, text.Clip(ok[i].path, 200), ok[j].flag, text.Clip(ok[j].path, 200))
				}
				problems = append(problems, err)
			}
		}
	}
	var distinct []reportTarget
	for i, t := range ok {
		if !clash[i] {
			distinct = append(distinct, t)
		}
	}
	if len(problems) > 0 {
		return distinct, problems[0]
	}
	return distinct, nil
}

// check refuses a path that cannot take the report.
func (t *reportTarget) check() error {
	if t.path == "-" {
		t.stdout = true
		return nil
	}
	path := text.Clip(t.path, 200)
	if strings.HasPrefix(t.path, "-") {
		// "--junit --csv out.csv" gives --junit the value "--csv".
		return usageErrorf("%s %s: looks like a flag, not a file name (write ./%s for a file of that name)", t.flag, path, path)
	}
	file, err := followLinks(t.path)
	if err != nil {
		return usageErrorf("%s %s: %v", t.flag, path, errorReason(err))
	}
	t.file = file
	info, err := os.Stat(file)
	switch {
	case err == nil && info.IsDir():
		return usageErrorf("%s %s: is a directory; give a file name", t.flag, path)
	case err == nil && isDevNull(info):
		t.inPlace = true // a temporary file cannot be renamed over it
		return nil
	case err == nil && !info.Mode().IsRegular():
		// Opening a pipe that nothing reads blocks for ever, and no
		// deadline or signal reaches a blocked open.
		return usageErrorf("%s %s: is %s, which the report could block on; give a file, or - for standard output", t.flag, path, fileKind(info.Mode()))
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return usageErrorf("%s %s: %v", t.flag, path, errorReason(err))
	}
	dir := filepath.Dir(file)
	info, err = os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usageErrorf("%s %s: the directory %s does not exist", t.flag, path, text.Clip(dir, 200))
	case err != nil:
		return usageErrorf("%s %s: %v", t.flag, path, errorReason(err))
	case !info.IsDir():
		return usageErrorf("%s %s: %s is not a directory", t.flag, path, text.Clip(dir, 200))
	}
	// The report is written to a temporary file beside it: try one now.
	probe, err := os.CreateTemp(dir, "."+filepath.Base(file)+".*.tmp")
	if err != nil {
		return usageErrorf("%s %s: cannot write in %s: %v", t.flag, path, text.Clip(dir, 200), errorReason(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// sameFile reports whether two targets are the same file: the same path,
// or two names of one existing file (a link, a relative and an absolute
// path).
func (t reportTarget) sameFile(u reportTarget) (bool, error) {
	if t.stdout || u.stdout {
		if t.stdout && u.stdout {
			return false, usageErrorf("%s - and %s -: only one report can go to standard output", u.flag, t.flag)
		}
		return false, nil
	}
	a, errA := filepath.Abs(t.file)
	b, errB := filepath.Abs(u.file)
	if errA == nil && errB == nil && a == b {
		return true, nil
	}
	x, errX := os.Stat(t.file)
	y, errY := os.Stat(u.file)
	return errX == nil && errY == nil && os.SameFile(x, y), nil
}

// toStdout reports whether one of the targets is standard output.
func toStdout(targets []reportTarget) bool {
	for _, t := range targets {
		if t.stdout {
			return true
		}
	}
	return false
}

// fileDescription names a target in a message.
func (t reportTarget) fileDescription() string {
	if t.stdout {
		return "standard output"
	}
	return text.Clip(t.path, 200)
}

// writeTo writes a report file at path through write: atomically for a
// regular file (see writeFile), as it is for a device or a pipe.
func (t reportTarget) writeTo(write func(io.Writer) error) error {
	if !t.inPlace {
		return writeFile(t.file, write)
	}
	f, err := os.OpenFile(t.file, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// reportError is a report that could not be written: a local error
// (exit 5) naming the file.
func reportError(t reportTarget, err error) error {
	return localError(fmt.Errorf("cannot write %s: %w", t.fileDescription(), errorReason(err)))
}

// escaped writes what write writes through an escaping writer, such as
// text.NewDocumentWriter's (control characters and bidirectional
// overrides escaped) or text.NewJSONWriter's.
func escaped(through func(io.Writer) *text.EscapeWriter, write func(io.Writer) error) func(io.Writer) error {
	return func(w io.Writer) error {
		e := through(w)
		if err := write(e); err != nil {
			return err
		}
		return e.Flush()
	}
}

// followLinks returns the file a path names once its symbolic links are
// followed, the last one even when its target does not exist yet (a link
// to a report a first run has still to write). A loop of links is an
// error.
func followLinks(path string) (string, error) {
	for range 40 { // as Linux's own limit on links in a path
		info, err := os.Lstat(path)
		if err != nil || info.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return "", errors.New("too many levels of symbolic links")
}

// isDevNull reports whether info is the null device, the one device a
// report is written to as it is: a write there never blocks.
func isDevNull(info fs.FileInfo) bool {
	null, err := os.Stat(os.DevNull)
	return err == nil && os.SameFile(info, null)
}

// fileKind names what a path that is no regular file is, for messages.
func fileKind(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// reportFlags are eval run's report flags, without their dashes: the
// names of the report formats.
func reportFlags() []string {
	var names []string
	for _, format := range evals.ReportFormats() {
		names = append(names, format.Name)
	}
	return names
}

// reportPath is a report flag's value: one path. A second one is refused,
// where pflag would keep the last and drop the first silently, leaving an
// earlier run's report there.
type reportPath struct {
	paths map[string]string // EvalRunOptions.Reports
	name  string            // the format's
	set   bool
}

func (p *reportPath) Set(v string) error {
	if p.set {
		return fmt.Errorf("given twice (%s and %s): each report flag takes one file", text.Clip(p.paths[p.name], 200), text.Clip(v, 200))
	}
	p.paths[p.name], p.set = v, true
	return nil
}

func (p *reportPath) String() string { return p.paths[p.name] }

func (p *reportPath) Type() string { return "string" }

// reportPaths reads the report flags' paths from a command line whose
// parse failed, every value of each flag, and the single-dash spelling
// (-junit r.xml) too, which pflag reads as shorthand letters. ok is false
// when even that fails.
func reportPaths(args []string) (paths reportPathList, ok bool) {
	paths = reportPathList{}
	fs := pflag.NewFlagSet("reports", pflag.ContinueOnError)
	fs.ParseErrorsWhitelist.UnknownFlags = true
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	values := map[string]*[]string{}
	for _, name := range reportFlags() {
		values[name] = new([]string)
		fs.StringArrayVar(values[name], name, nil, "")
	}
	normal := make([]string, len(args))
	for i, arg := range args {
		normal[i] = arg
		for _, name := range reportFlags() {
			if arg == "-"+name || strings.HasPrefix(arg, "-"+name+"=") {
				normal[i] = "-" + arg
			}
		}
		if arg == "--" {
			copy(normal[i:], args[i:])
			break
		}
	}
	if fs.Parse(normal) != nil {
		return nil, false
	}
	for name, v := range values {
		paths[name] = *v
	}
	return paths, true
}

// reportPathList holds the paths given to each report flag.
type reportPathList map[string][]string

// first returns the first path given to the flag name, or "".
func (l reportPathList) first(name string) string {
	if len(l[name]) == 0 {
		return ""
	}
	return l[name][0]
}

// removeStale removes a regular file at path (through a link), so that a
// command line that was refused leaves no earlier run's report there.
func removeStale(path string) {
	if path == "-" || path == "" {
		return
	}
	file, err := followLinks(path)
	if err != nil {
		return
	}
	if info, err := os.Stat(file); err == nil && info.Mode().IsRegular() {
		_ = os.Remove(file)
	}
}
