package agenta

import (
	"net/url"
	"strconv"
	"strings"
)

// segment checks an identifier and escapes it as exactly one path segment,
// so that no id, whatever it contains, can reach another endpoint. name is
// the Go argument, field the service's name for it.
func segment(name, field, id string) (string, error) {
	if err := required(name, field, id); err != nil {
		return "", err
	}
	if id == "." || id == ".." {
		return "", invalidField(name, field, "%q is not an identifier: it would change the path", id)
	}
	return url.PathEscape(id), nil
}

// required refuses an empty, blank or control-character value.
func required(name, field, value string) error {
	switch {
	case value == "":
		return invalidField(name, field, "is required")
	case strings.TrimSpace(value) == "":
		return invalidField(name, field, "is blank")
	case hasControl(value):
		return invalidField(name, field, "contains a control character")
	}
	return nil
}

// hasControl reports a control character other than tab, which no header
// value or identifier may hold.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}

// requiredList refuses an empty list or one with an empty item.
func requiredList(name, field string, values []string) error {
	if len(values) == 0 {
		return invalidField(name, field, "must list at least one id")
	}
	for i, v := range values {
		index := "[" + strconv.Itoa(i) + "]"
		if err := required(name+index, field+index, v); err != nil {
			return err
		}
	}
	return nil
}
