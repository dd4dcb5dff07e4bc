package agenta

import (
	"net/url"
	"strconv"
	"strings"
)

// segment checks an identifier and escapes it as exactly one path segment,
// so that no id, whatever it contains, can reach another endpoint.
func segment(name, id string) (string, error) {
	if err := required(name, id); err != nil {
		return "", err
	}
	if id == "." || id == ".." {
		return "", invalid(name, "%q is not an identifier: it would change the path", id)
	}
	return url.PathEscape(id), nil
}

// required refuses an empty, blank or control-character value.
func required(name, value string) error {
	switch {
	case value == "":
		return invalid(name, "is required")
	case strings.TrimSpace(value) == "":
		return invalid(name, "is blank")
	case hasControl(value):
		return invalid(name, "contains a control character")
	}
	return nil
}

// requiredList refuses an empty list or one with an empty item.
func requiredList(name string, values []string) error {
	if len(values) == 0 {
		return invalid(name, "must list at least one id")
	}
	for i, v := range values {
		if err := required(name+"["+strconv.Itoa(i)+"]", v); err != nil {
			return err
		}
	}
	return nil
}
