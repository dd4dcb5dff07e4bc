package agenta

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenta-go/agenta/models"
)

// BenchmarkWaitEvaluation measures what following one 10,000-row run costs
// on the wire: WaitEvaluation (status reads, then one evaluation read)
// against polling the scenario list until it holds every row, as
// examples/evaluate did before WaitEvaluation. The loopback server counts
// every byte both ways at the TCP level (headers included) and every
// request; the run turns terminal at the 11th read whichever route is read,
// so both sides poll equally often. Two models of the scenario list while
// the run goes on:
//
//   - list=burst: the mid-2024 service, which writes all scenarios in one
//     burst at the end, so the list is [] until then;
//   - list=growing: a server (or the older fake) that fills the list in as
//     rows run, so each poll reads a longer list.
//
// impl=wait+fetch adds the one scenario list read a caller who wants the
// rows makes after the wait. Report with the custom metrics down-B/op,
// up-B/op and requests/op; ns/op is loopback time and says little.
func BenchmarkWaitEvaluation(b *testing.B) {
	const rows, polls = 10_000, 10 // terminal at read polls+1
	list := newGrowingScenarios(rows)
	for _, model := range []string{"burst", "growing"} {
		for _, impl := range []string{"poll-scenarios", "wait", "wait+fetch"} {
			b.Run("list="+model+"/impl="+impl, func(b *testing.B) {
				srv := newWaitBenchServer(b, list, polls, model == "growing")
				c := newTestClient(b, srv.URL+"/api")
				defer c.CloseIdleConnections()
				ctx := context.Background()
				run := 0
				srv.reset()
				for b.Loop() {
					run++
					id := "run-" + strconv.Itoa(run)
					switch impl {
					case "poll-scenarios":
						for {
							scenarios, err := c.FetchEvaluationScenarios(ctx, id)
							if err != nil {
								b.Fatal(err)
							}
							if len(scenarios) >= rows {
								benchSink = scenarios
								break
							}
						}
					default:
						ev, err := c.WaitEvaluation(ctx, id, &WaitOptions{Interval: time.Nanosecond})
						if err != nil {
							b.Fatal(err)
						}
						benchSink = ev
						if impl == "wait+fetch" {
							scenarios, err := c.FetchEvaluationScenarios(ctx, id)
							if err != nil || len(scenarios) != rows {
								b.Fatalf("after the wait: %d scenarios, %v; want %d", len(scenarios), err, rows)
							}
							benchSink = scenarios
						}
					}
				}
				n := float64(b.N)
				b.ReportMetric(float64(srv.down.Load())/n, "down-B/op")
				b.ReportMetric(float64(srv.up.Load())/n, "up-B/op")
				b.ReportMetric(float64(srv.requests.Load())/n, "requests/op")
			})
		}
	}
}

// growingScenarios is a scenario list of rows elements, pre-encoded, with
// the end offset of each element, so that any prefix is served without
// encoding.
type growingScenarios struct {
	body []byte // "[" + elements joined by ","; no closing bracket
	ends []int  // ends[k] is the length of the first k+1 elements
}

func newGrowingScenarios(rows int) *growingScenarios {
	src := newScenarioSource(uint64(rows))
	g := &growingScenarios{body: make([]byte, 0, rows*850+2), ends: make([]int, rows)}
	g.body = append(g.body, '[')
	for i := range rows {
		if i > 0 {
			g.body = append(g.body, ',')
		}
		g.body = src.appendRow(g.body)
		g.ends[i] = len(g.body)
	}
	return g
}

// write answers the first k elements.
func (g *growingScenarios) write(w http.ResponseWriter, k int) {
	prefix := g.body[:1]
	if k > 0 {
		prefix = g.body[:g.ends[k-1]]
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(prefix)+1))
	_, _ = w.Write(prefix)
	_, _ = w.Write([]byte{']'})
}

// waitBenchServer serves runs that turn terminal at their polls+1'th read
// of the status or of the scenario list, and counts the bytes on its
// connections and the requests.
type waitBenchServer struct {
	*httptest.Server
	up, down, requests atomic.Int64
	mu                 sync.Mutex
	reads              map[string]int
}

func newWaitBenchServer(b *testing.B, list *growingScenarios, polls int, growing bool) *waitBenchServer {
	s := &waitBenchServer{reads: map[string]int{}}
	rows := len(list.ends)
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		rest, _ := strings.CutPrefix(r.URL.Path, "/api/evaluations/")
		id, route, _ := strings.Cut(rest, "/")
		s.mu.Lock()
		if route != "" {
			s.reads[id]++
		}
		read := s.reads[id]
		s.mu.Unlock()
		over := read > polls
		switch route {
		case "status":
			value := models.EvaluationStarted
			if over {
				value = models.EvaluationFinished
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status":{"type":"status","value":"` + value + `","error":null}}`))
		case "evaluation_scenarios":
			switch {
			case over:
				list.write(w, rows)
			case growing:
				list.write(w, rows*(read-1)/polls)
			default:
				list.write(w, 0)
			}
		case "":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(evaluationBody(models.EvaluationFinished)))
		default:
			http.NotFound(w, r)
		}
	}))
	s.Listener = &countingListener{Listener: s.Listener, up: &s.up, down: &s.down}
	s.Start()
	b.Cleanup(s.Close)
	return s
}

func (s *waitBenchServer) reset() {
	s.up.Store(0)
	s.down.Store(0)
	s.requests.Store(0)
}

// countingListener counts the bytes read from (up) and written to (down)
// its connections.
type countingListener struct {
	net.Listener
	up, down *atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: conn, l: l}, nil
}

type countingConn struct {
	net.Conn
	l *countingListener
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.l.up.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.l.down.Add(int64(n))
	return n, err
}
