package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agenta-go/agenta/internal/text"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Usage errors that teach: each names what was wrong, every missing flag at
// once, and the closest name that exists when a command, a flag or a value
// is mistyped.

// checksOwnFlags marks a command that checks its flags' values itself (eval
// run, which writes its reports whatever the outcome); the root's check
// leaves it alone.
const checksOwnFlags = "agenta/checks-own-flags"

// unknownCommand is the usage error for a subcommand of cmd that does not
// exist, with the closest that does.
func unknownCommand(cmd *cobra.Command, name string) error {
	return usageErrorf("unknown command %q for %q%s", text.Clip(name, 100), cmd.CommandPath(), didYouMean(closestCommands(cmd, name)))
}

// closestCommands returns the subcommands of cmd whose names (or aliases)
// are closest to name.
func closestCommands(cmd *cobra.Command, name string) []string {
	var names []string
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
			names = append(names, sub.Aliases...)
		}
	}
	// An alias close to name stands for its command.
	var out []string
	for _, found := range closest(name, names) {
		if sub, _, err := cmd.Find([]string{found}); err == nil && !slices.Contains(out, sub.Name()) {
			out = append(out, sub.Name())
		}
	}
	return out
}

// didYouMean turns suggestions into the end of a message.
func didYouMean(suggestions []string) string {
	if len(suggestions) == 0 {
		return ""
	}
	quoted := make([]string, len(suggestions))
	for i, s := range suggestions {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	return "; did you mean " + orList(quoted) + "?"
}

// flagError turns an error of parsing cmd's flags into a usage error that
// teaches: an unknown flag gets the closest flag that exists, and an unknown
// command before it is reported as such.
func flagError(cmd *cobra.Command, err error) error {
	var notExist *pflag.NotExistError
	if errors.As(err, &notExist) {
		// "agenta evl run --app x": the command is the mistake, not --app.
		if args := cmd.Flags().Args(); len(args) > 0 && cmd.HasAvailableSubCommands() {
			return unknownCommand(cmd, args[0])
		}
		if notExist.GetSpecifiedShortnames() == "" {
			name := notExist.GetSpecifiedName()
			return usageErrorf("unknown flag --%s for %q%s", text.Clip(name, 100), cmd.CommandPath(), didYouMean(closestFlags(cmd, name)))
		}
		// "-junit r.xml" reads as the letters j, u, n, i, t.
		if long := notExist.GetSpecifiedShortnames(); len(long) > 1 && cmd.Flags().Lookup(long) != nil {
			return usageErrorf("-%s: a long flag takes two dashes: --%s", long, long)
		}
	}
	return withKind(err, kindUsage)
}

// closestFlags returns the flags of cmd whose names are closest to name,
// with their dashes.
func closestFlags(cmd *cobra.Command, name string) []string {
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	best := closest(name, names)
	for i := range best {
		best[i] = "--" + best[i]
	}
	return best
}

// closest returns the candidates nearest to word: within an edit distance
// of a third of its length (at least 1, at most 3), or of which word is a
// prefix, nearest first.
func closest(word string, candidates []string) []string {
	word = strings.ToLower(word)
	limit := min(max(len(word)/3, 1), 3)
	type scored struct {
		name     string
		distance int
	}
	var found []scored
	for _, c := range candidates {
		d := editDistance(word, strings.ToLower(c))
		if d <= limit || (len(word) >= 2 && strings.HasPrefix(strings.ToLower(c), word)) {
			found = append(found, scored{c, d})
		}
	}
	slices.SortStableFunc(found, func(a, b scored) int { return a.distance - b.distance })
	out := make([]string, 0, len(found))
	for _, f := range found {
		out = append(out, f.name)
	}
	return out
}

// editDistance is the number of edits between a and b, in runes: each
// insertion, deletion, substitution, or swap of two neighbours (the
// commonest typo, "jsnol") counts one (the optimal string alignment
// distance).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// checkChoice refuses a flag value that is not one of choices, naming them
// and the closest.
func checkChoice(flag, value string, choices ...string) error {
	if slices.Contains(choices, value) {
		return nil
	}
	return usageErrorf("--%s %q: want %s%s", flag, text.Clip(value, 50), orList(choices), didYouMean(closest(value, choices)))
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// required is a flag a command needs, and whether it was given.
type required struct {
	flag string
	set  bool
}

// missingFlags names, in one usage error, every required flag not given.
func missingFlags(flags ...required) error {
	var missing []string
	for _, f := range flags {
		if !f.set {
			missing = append(missing, f.flag)
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return usageErrorf("%s is required", missing[0])
	}
	return usageErrorf("%s are required", strings.Replace(orList(missing), " or ", " and ", 1))
}

// emptyFlagValues refuses a flag given an empty value, such as --variant ""
// from a script whose earlier step failed: dropping it would run something
// other than what was asked. It names every such flag but those in skip
// (checked by the command itself) in one usage error.
func emptyFlagValues(fs *pflag.FlagSet, skip ...string) error {
	var errs []error
	fs.Visit(func(f *pflag.Flag) {
		if slices.Contains(skip, f.Name) {
			return
		}
		what := "the value"
		var values []string
		if slice, ok := f.Value.(pflag.SliceValue); ok {
			values = slice.GetSlice()
			if len(values) == 0 {
				values = []string{""}
			}
			what = "a value"
		} else if f.Value.Type() == "string" {
			values = []string{f.Value.String()}
		}
		for _, v := range values {
			if strings.TrimSpace(v) == "" {
				errs = append(errs, usageErrorf("--%s: %s is empty", f.Name, what))
				return
			}
		}
	})
	return joinUsageErrors(errs...)
}

// joinUsageErrors makes one usage error of several, their messages joined
// by "; ", skipping nils; nil when there are none.
func joinUsageErrors(errs ...error) error {
	var messages []string
	for _, err := range errs {
		if err != nil {
			messages = append(messages, err.Error())
		}
	}
	if len(messages) == 0 {
		return nil
	}
	return usageErrorf("%s", strings.Join(messages, "; "))
}

// idList is the value of a flag that takes ids, repeated or
// comma-separated. Unlike pflag's string slices, it keeps an empty id, so
// that --variant "" is refused rather than dropped.
type idList struct{ ids *[]string }

func (l idList) Set(value string) error {
	*l.ids = append(*l.ids, strings.Split(value, ",")...)
	return nil
}

func (l idList) String() string { return "[" + strings.Join(*l.ids, ",") + "]" }

// Type names the value in --help, as pflag's string slices do.
func (l idList) Type() string { return "strings" }

// GetSlice, Append and Replace make it a pflag.SliceValue, for completion.
func (l idList) GetSlice() []string { return *l.ids }

func (l idList) Append(value string) error {
	*l.ids = append(*l.ids, value)
	return nil
}

func (l idList) Replace(values []string) error {
	*l.ids = values
	return nil
}
