package scenariojson

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agenta-go/agenta/models"
)

// TestModelsInStep fails when a hot type gains, loses or renames a field,
// or a JSON method, that this decoder does not know: it would then decode
// differently from encoding/json. Update decode.go along with the model.
func TestModelsInStep(t *testing.T) {
	known := map[reflect.Type][]string{
		reflect.TypeFor[models.EvaluationScenario](): {"id", "evaluation_id", "inputs", "outputs", "evaluation",
			"correct_answer", "correct_answers", "is_pinned", "note", "results", "testcase_id"},
		reflect.TypeFor[models.Input]():          {"name", "type", "value"},
		reflect.TypeFor[models.Output]():         {"result", "cost", "latency"},
		reflect.TypeFor[models.Result]():         {"type", "value", "error"},
		reflect.TypeFor[models.Error]():          {"message", "stacktrace"},
		reflect.TypeFor[models.ScenarioResult](): {"evaluator_config", "result"},
		reflect.TypeFor[models.CorrectAnswer]():  {"key", "value"},
	}
	unmarshaler := reflect.TypeFor[json.Unmarshaler]()
	for typ, want := range known {
		if reflect.PointerTo(typ).Implements(unmarshaler) || typ.Implements(unmarshaler) {
			t.Errorf("%v implements json.Unmarshaler: scenariojson must follow it", typ)
		}
		var got []string
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous || name == "" || name == "-" || strings.Contains(opts, "string") {
				t.Errorf("%v.%s has a JSON tag %q scenariojson does not handle", typ, f.Name, f.Tag.Get("json"))
			}
			got = append(got, name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%v has JSON fields %q, scenariojson decodes %q", typ, got, want)
		}
	}
}

// decodeSeeds are scenarios in every shape the contract describes, and
// the edge cases of JSON itself.
var decodeSeeds = []string{
	`{"id":"s1","evaluation_id":"e1","inputs":[{"name":"country","type":"text","value":"France"}],"outputs":[{"result":{"type":"text","value":"Paris","error":null},"cost":0.0001,"latency":1.2}],"evaluation":null,"correct_answer":"Paris","is_pinned":false,"note":"","results":[{"evaluator_config":"c1","result":{"type":"number","value":1,"error":null}}]}`,
	`{"evaluation_id":"e1","inputs":[],"outputs":[],"results":[]}`,
	`{"evaluation_id":"e1","inputs":null,"outputs":null,"results":null,"correct_answers":null}`,
	`{"id":null,"evaluation_id":null,"evaluation":null,"correct_answer":null,"is_pinned":null,"note":null}`,
	`{"evaluation_id":"e","correct_answers":[{"key":"correct_answer","value":"Paris"},{"key":"alt","value":null}],"results":[]}`,
	`{"results":[{"evaluator_config":"c","result":{"type":"error","value":null,"error":{"message":"boom","stacktrace":"Traceback\n  line 1"}}}]}`,
	`{"results":[{"evaluator_config":"c","result":{"type":"bool","value":true}},{"evaluator_config":"d","result":{"type":"object","value":{"a":[1,2,{"b":null}],"c":"x"}}},{"evaluator_config":"e","result":{"type":"list","value":[1,"2",false]}}]}`,
	`{"outputs":[{"result":{"type":"text","value":"x"},"cost":null,"latency":null},{"result":null},null]}`,
	`{"inputs":[{"name":"n","type":"number","value":-0.5e-3},{"name":"z","type":"number","value":-0},{"name":"b","value":1E+2}]}`,
	`{"outputs":[{"result":{"type":"number"},"cost":1e400}]}`,
	`{"outputs":[{"cost":-0.0,"latency":123456789012345678901234567890}]}`,
	`{"outputs":[{"cost":"0.1"}]}`,
	`{"inputs":[{"name":1}]}`,
	`{"inputs":{"name":"x"}}`,
	`{"note":"tab\there \"quoted\" back\\slash \/ \b\f\r\n \u00e9 \u6771 \ud83d\ude00 \ud800 \udc00x \ud800\u0041"}`,
	"{\"note\":\"bad utf8 \xff\xfe and cut \xe2\x82 end\"}",
	"{\"note\":\"raw \x01 control\"}",
	`{"note":"bad escape \x"}`,
	`{"note":"short escape \u12"}`,
	`{"ID":"case variant","Id":"x"}`,
	`{"id":"a","id":"duplicate"}`,
	`{"i\u0064":"escaped key"}`,
	`{"unknown":{"deep":[[[[{"x":"y"}]]]]},"created_at":"2024-06-26T12:22:31.775000","id":"k"}`,
	"{\"k\u212a\":1}",
	` { "id" : "spaces" , "inputs" : [ { "name" : "a" , "value" : [ 1 , 2 ] } ] } `,
	`{"id":"trailing comma",}`,
	`{"id":"missing colon" "x"}`,
	`{"inputs":[{"name":"a"},]}`,
	`{"is_pinned":true,"note":"pinned"}`,
	`{"is_pinned":"true"}`,
	`{}`,
	`null`,
	`[]`,
	`{"results":[{"result":{"value":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}}]}`,
	`{"id":"nul` + "\x00" + `"}`,
	`{"id":tru}`,
	`{"id":nulL}`,
	`{"evaluation_id":"e1","inputs":[{"name":"q","type":"text","value":"日本語のテキスト"}]}`,
	`{"id":"s1#1","evaluation_id":"r1","inputs":[],"outputs":[],"results":[],"testcase_id":"df71eb89-83f6-5736-ac6f-b410a834d7dd"}`,
}

// FuzzDecode holds Decode to encoding/json: whatever it decodes as OK, json.Unmarshal
// decodes without error to the same value, and no proper prefix of it is OK.
func FuzzDecode(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got models.EvaluationScenario
		n, status := Decode(data, &got)
		if status != OK {
			return
		}
		var want models.EvaluationScenario
		if err := json.Unmarshal(data[:n], &want); err != nil {
			t.Fatalf("Decode accepted %q, encoding/json refuses it: %v", data[:n], err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Decode(%q)\n got %#v\nwant %#v", data[:n], got, want)
		}
		for _, k := range []int{n - 1, n / 2, 1} {
			if k <= 0 || k >= n {
				continue
			}
			var partial models.EvaluationScenario
			if _, status := Decode(data[:k], &partial); status == OK {
				t.Fatalf("Decode accepted the prefix %q of %q", data[:k], data[:n])
			}
		}
	})
}

// TestDecodeSeeds runs the seeds and checks which ones take the fast path,
// so that a change that quietly sends common shapes to encoding/json shows.
func TestDecodeSeeds(t *testing.T) {
	fast := map[int]bool{0: true, 1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true, 10: true,
		14: true, 15: true, 22: true, 24: true, 28: true, 30: true, 37: true, 38: true}
	for i, s := range decodeSeeds {
		var got, want models.EvaluationScenario
		n, status := Decode([]byte(s), &got)
		if status == OK != fast[i] {
			t.Errorf("seed %d %.60q: status %d, want fast path %v", i, s, status, fast[i])
		}
		if status != OK {
			continue
		}
		if err := json.Unmarshal([]byte(s)[:n], &want); err != nil {
			t.Fatalf("seed %d: encoding/json refuses what Decode accepted: %v", i, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("seed %d %.60q:\n got %#v\nwant %#v", i, s, got, want)
		}
		// Every proper prefix of an accepted scenario is Short, never OK.
		for k := 1; k < n; k++ {
			var partial models.EvaluationScenario
			if _, status := Decode([]byte(s)[:k], &partial); status != Short {
				t.Fatalf("seed %d: prefix of %d bytes gave status %d, want Short", i, k, status)
			}
		}
	}
}
