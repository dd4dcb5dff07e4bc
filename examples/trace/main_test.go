package main

import (
	"bytes"
	"context"
	"testing"
)

func TestTraceEmbedded(t *testing.T) {
	t.Setenv("AGENTA_HOST", "")
	var out bytes.Buffer
	if err := trace(context.Background(), nil, &out); err != nil {
		t.Fatal(err)
	}
	want := `trace 0190547f-5e5f-7de0-8000-000000004001, variant capitals.default revision 3, production, 2024-06-26 12:22:31.775 UTC

capitals                     WORKFLOW   OK     1.235s  $0.0000185
├── lookup_country           RETRIEVER  OK     81ms    -
├── format_prompt            CHAIN      OK     2.1ms   -
│   └── render_template      TOOL       OK     800µs   -
├── openai.chat.completions  LLM        OK     1.102s  $0.0000185
└── cache_write              TOOL       ERROR  4.3ms   -

6 spans, 1 with an error, cost $0.0000185
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestTraceNeedsASpanForAHost(t *testing.T) {
	t.Setenv("AGENTA_HOST", "http://127.0.0.1:1")
	if err := trace(context.Background(), nil, &bytes.Buffer{}); err == nil {
		t.Error("want an error without -span")
	}
}
