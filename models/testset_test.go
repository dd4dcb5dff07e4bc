package models

import (
	"encoding/json"
	"fmt"
	"testing"
)

// FuzzColumns checks the scan behind Columns against encoding/json: any
// JSON object decodes, to the same members and values; anything else is
// refused.
func FuzzColumns(f *testing.F) {
	for _, seed := range []string{`{"a":1,"b":"x"}`, `{}`, `{"a\"b":{"c":[1,{"d":"}"}]},"e":null}`, ` { "x" : true , "y":-1.5e3 } `,
		`[1]`, `"s"`, `{"a":1`, `null`, `{"\u00e9":"\\"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Columns
		err := c.UnmarshalJSON(data)
		var m map[string]json.RawMessage
		mapErr := json.Unmarshal(data, &m)
		if mapErr != nil || m == nil {
			if err == nil && c != nil {
				t.Fatalf("%q: Columns accepted what encoding/json refuses as an object", data)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: Columns refused a JSON object: %v", data, err)
		}
		last := map[string]json.RawMessage{}
		for _, col := range c {
			last[col.Name] = col.Value
		}
		if len(last) != len(m) {
			t.Fatalf("%q: %d distinct members, encoding/json has %d", data, len(last), len(m))
		}
		for k, v := range m {
			var a, b any
			_ = json.Unmarshal(v, &a)
			if err := json.Unmarshal(last[k], &b); err != nil {
				t.Fatalf("%q: member %q is not JSON: %q", data, k, last[k])
			}
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("%q: member %q is %q, encoding/json says %q", data, k, last[k], v)
			}
		}
	})
}
