package agentatest

import "os"

// StartDemoUnlessHost lets a program that builds its client with
// agenta.NewClientFromEnv run with no server at all. When AGENTA_HOST is
// set (and not empty) it does nothing and returns a nil Demo: the program
// talks to that server. Otherwise it starts a Server with opts, loads the
// demo data (SeedDemo), points AGENTA_HOST at it for this process and
// returns the demo's ids.
//
//	demo, stop := agentatest.StartDemoUnlessHost()
//	defer stop()
//	client, err := agenta.NewClientFromEnv()
//
// stop closes the Server and gives AGENTA_HOST back its earlier value; it is
// never nil. AGENTA_HOST is the process's environment, so programs and
// tests that call this must not do so concurrently.
func StartDemoUnlessHost(opts ...Option) (demo *Demo, stop func()) {
	const host = "AGENTA_HOST"
	if os.Getenv(host) != "" {
		return nil, func() {}
	}
	previous, wasSet := os.LookupEnv(host)
	srv := NewServer(opts...)
	d := SeedDemo(srv)
	// Setenv fails only for a name or value holding NUL or '=' (or an
	// empty name), which neither this name nor a 127.0.0.1 URL does.
	_ = os.Setenv(host, srv.URL())
	return &d, func() {
		srv.Close()
		if wasSet {
			_ = os.Setenv(host, previous)
		} else {
			_ = os.Unsetenv(host)
		}
	}
}
