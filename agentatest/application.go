package agentatest

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Application is the code behind a base, run on every test-set row during
// an evaluation in place of the real deployed application. It gets the
// variant's parameters and the row's inputs (the columns the variant reads)
// and returns the answer; an error becomes an error output for the row, as
// a failing application does on the service. It must be deterministic for
// tests to be, and safe for concurrent use.
type Application func(parameters map[string]any, inputs map[string]string) (string, error)

// templateKeys are the parameters TemplateApplication reads its template
// from, in order of preference.
var templateKeys = []string{"prompt_user", "prompt_template", "prompt", "template"}

var placeholder = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// TemplateApplication is the Application of a base that has none: it
// answers with the variant's prompt template (the parameter prompt_user,
// prompt_template, prompt or template) with each {input} replaced by the
// row's value, so that a variant whose template is "{country}" echoes its
// input and two templates give two different answers. Without a template
// it answers the input values joined by spaces, in name order.
func TemplateApplication(parameters map[string]any, inputs map[string]string) (string, error) {
	if tmpl, ok := promptTemplate(parameters); ok {
		return renderTemplate(tmpl, inputs), nil
	}
	names := slices.Sorted(maps.Keys(inputs))
	values := make([]string, len(names))
	for i, name := range names {
		values[i] = inputs[name]
	}
	return strings.Join(values, " "), nil
}

func promptTemplate(parameters map[string]any) (string, bool) {
	for _, key := range templateKeys {
		if s, ok := parameters[key].(string); ok {
			return s, true
		}
	}
	return "", false
}

func renderTemplate(tmpl string, inputs map[string]string) string {
	return placeholder.ReplaceAllStringFunc(tmpl, func(m string) string {
		if v, ok := inputs[m[1:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// inputNames returns the inputs a variant reads: parameters["inputs"] as the
// service's templates declare them ([{"name": "country"}, ...]), or else the
// placeholders of its prompts, or else every column but the columns the
// evaluators read as correct answers.
func inputNames(parameters map[string]any, rows []map[string]string, answerKeys []string) []string {
	var names []string
	seen := map[string]bool{}
	addName := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	if list, ok := parameters["inputs"].([]any); ok {
		for _, item := range list {
			switch t := item.(type) {
			case map[string]any:
				if n, ok := t["name"].(string); ok {
					addName(n)
				}
			case string:
				addName(t)
			}
		}
		return names
	}
	for _, key := range append([]string{"prompt_system"}, templateKeys...) {
		if s, ok := parameters[key].(string); ok {
			for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
				addName(m[1])
			}
		}
	}
	if len(names) > 0 || len(rows) == 0 {
		return names
	}
	for col := range rows[0] {
		if !slices.Contains(answerKeys, col) {
			names = append(names, col)
		}
	}
	sort.Strings(names)
	return names
}

// callApplication runs an Application, turning a panic into an error.
func callApplication(app Application, parameters map[string]any, inputs map[string]string) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("application panicked: %v", p)
		}
	}()
	params, _ := copyParameters(parameters)
	return app(params, inputs)
}
