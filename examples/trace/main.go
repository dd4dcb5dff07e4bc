// Command trace fetches a span of a trace and prints it as a tree, the way
// `tree` prints directories: each span's name, kind, status, latency and
// cost.
//
// Run as is, it uses an embedded fake of the service loaded with demo data:
//
//	go run ./examples/trace
//
// With AGENTA_HOST (and AGENTA_API_KEY) set it reads from that server:
//
//	go run ./examples/trace -span ID
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
)

func main() {
	if err := trace(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "trace:", err)
		os.Exit(1)
	}
}

func trace(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("trace", flag.ContinueOnError)
	spanID := fs.String("span", "", "span id (default: the demo trace's root span)")
	if err := fs.Parse(args); err != nil {
		return err
	}

	// Without AGENTA_HOST, an embedded fake with the demo data stands in.
	demo, stop := agentatest.StartDemoUnlessHost()
	defer stop()
	if demo != nil && *spanID == "" {
		*spanID = demo.SpanID
	}
	if *spanID == "" {
		return errors.New("with AGENTA_HOST set, pass -span")
	}
	client, err := agenta.NewClientFromEnv()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()

	span, err := client.GetSpan(ctx, *spanID, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "trace %s, variant %s revision %d, %s, %s\n\n",
		span.TraceID, span.Variant.VariantName, span.Variant.Revision,
		orDash(span.DeployedEnvironment()), span.CreatedAt.UTC().Format("2006-01-02 15:04:05.000 MST"))
	printTree(out, span)
	return nil
}

// printTree writes one line per span, drawing the tree in the first column.
func printTree(out io.Writer, root *models.Span) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	spans, failed := 0, 0
	var walk func(s *models.Span, prefix, branch string)
	walk = func(s *models.Span, prefix, branch string) {
		spans++
		if s.Status == models.SpanStatusError {
			failed++
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\n", prefix+branch, s.Name, s.SpanKind, s.Status, latency(s), cost(s))
		next := prefix
		switch branch {
		case "├── ":
			next += "│   "
		case "└── ":
			next += "    "
		}
		for i := range s.Children {
			b := "├── "
			if i == len(s.Children)-1 {
				b = "└── "
			}
			walk(&s.Children[i], next, b)
		}
	}
	walk(root, "", "")
	_ = tw.Flush()
	total := "unknown"
	if c, ok := root.Cost(); ok {
		total = fmt.Sprintf("$%.7f", c)
	}
	fmt.Fprintf(out, "\n%d spans, %d with an error, cost %s\n", spans, failed, total)
}

func latency(s *models.Span) string {
	l, ok := s.Latency()
	if !ok {
		return "-"
	}
	d := time.Duration(l * float64(time.Second))
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

func cost(s *models.Span) string {
	c, ok := s.Cost()
	if !ok {
		return "-"
	}
	return fmt.Sprintf("$%.7f", c)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
