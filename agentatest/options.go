package agentatest

import (
	"strings"
	"time"
)

// Option configures a Server.
type Option func(*Server)

// WithAPIKey makes the Server require the key in the Authorization header,
// sent raw as the service expects (the form "ApiKey <key>" is accepted too).
// A request without it or with another value gets 401
// {"detail":{"message":"Unauthorized"}}, as newer servers answer both.
// (Self-hosted servers of mid-2024 check no credential at all: that is the
// default.)
func WithAPIKey(key string) Option {
	return func(s *Server) { s.apiKey = key }
}

// WithEvaluationPace sets the pace of the fake's worker: it picks up a new
// evaluation d after create, and each of its steps takes d: every row's app
// call, then every scenario's write. The default is 100 ms to pick up and
// 5 ms per step: the demo's eight rows end about 180 ms after create, and
// a scenario fetch right after create answers [] even on a loaded machine,
// as on the service. A shorter pace makes runs end sooner but lets a slow
// test see them start before it looks; a longer one lets a poller see the
// run STARTED, and its scenarios appear one by one, as on the service.
// d <= 0 keeps the default. As on the service, rows are called in batches
// of the request's rate_limit.batch_size, with a pause of
// delay_between_batches real seconds between batches; a test that wants a
// quick run sends 0 there or a batch_size as large as its test set (the web
// UI's 10 and 5 run the demo's eight rows in one batch). To make a run
// finish deterministically, call WaitEvaluations after create, or drive it
// with WithManualEvaluations.
func WithEvaluationPace(d time.Duration) Option {
	return func(s *Server) {
		if d > 0 {
			s.pickup, s.rowPace = d, d
		}
	}
}

// WithManualEvaluations runs no worker: every evaluation stays
// EVALUATION_INITIALIZED, as on a service whose worker is down, until the
// test calls AdvanceEvaluations, so that each step of the lifecycle can be
// observed without timing.
func WithManualEvaluations() Option {
	return func(s *Server) { s.manual = true }
}

// WithClock sets the clock used for the timestamps of created objects and
// of seeds that leave them unset, for deterministic output.
func WithClock(now func() time.Time) Option {
	return func(s *Server) {
		if now != nil {
			s.clock, s.idClock = now, now
		}
	}
}

// WithUser sets the user the Server acts for: the user_id and
// user_username of what it creates. The default is the one user of a
// self-hosted server, whose username is "agenta".
func WithUser(u User) Option {
	return func(s *Server) { s.user = u }
}

// WithOlderServer makes the Server answer as the MongoDB-era servers
// before July 2024 did, so that a client can be tested on what they send:
// 24-hex ObjectIds instead of UUIDv7 ids (the demo's and generated ones;
// any string is then a well-formed id), naive timestamps ("2024-06-26T12:22:31.775000", meaning UTC; a created
// evaluation's with "+00:00"), 422 items
// in Pydantic 1's form ({loc, msg, type}, "field required"), and scenarios
// carrying correct_answer (a string) and evaluation instead of
// correct_answers. Everything else, the lifecycle included, stays as on
// the mid-2024 service.
func WithOlderServer() Option {
	return func(s *Server) {
		s.older = true
		s.version = pydanticV1
	}
}

// WithNewerServer once selected Pydantic 2's 422 items and scenarios with
// correct_answers, which the Server now sends by default, as the mid-2024
// service does. It changes nothing.
//
// Deprecated: the default is what this option selected; use
// WithOlderServer to test against what older servers send.
func WithNewerServer() Option {
	return func(*Server) {}
}

// WithWriteTimeout bounds how long the Server spends writing one answer
// (default one minute), so that a client that stops reading is cut off.
// Other clients, seeding and Close never wait for it either way.
func WithWriteTimeout(d time.Duration) Option {
	return func(s *Server) {
		if d > 0 {
			s.writeTimeout = d
		}
	}
}

// WithPathPrefix serves the API under prefix instead of "/api". An empty
// prefix serves it at the root.
func WithPathPrefix(prefix string) Option {
	return func(s *Server) {
		s.prefix = strings.TrimRight(prefix, "/")
		if s.prefix != "" && !strings.HasPrefix(s.prefix, "/") {
			s.prefix = "/" + s.prefix
		}
	}
}

// WithRedirectLosingPrefix makes the span operation's 307 redirect point at
// the path without the "/api" prefix, as it does behind a path-prefixed
// proxy, so that clients can be tested against that trap.
func WithRedirectLosingPrefix() Option {
	return func(s *Server) { s.redirectLosesPrefix = true }
}

// WithBrokenEnvironmentLookup reproduces a bug of the self-hosted backend
// at the commit the interface was published from (Agenta 0.19.3,
// 98a1fc710a, July 2024): its route for GetVariantByEnvironment calls a
// function that db_manager no longer has, so every lookup with both query
// parameters answers 500 {"detail": "module
// 'agenta_backend.services.db_manager' has no attribute
// 'get_app_variant_by_app_name_and_environment'"}, whatever the app and
// the environment. By default the Server serves the lookup as the
// interface describes it; this option lets a test check a fallback, such
// as asking for the variant's id instead.
func WithBrokenEnvironmentLookup() Option {
	return func(s *Server) { s.brokenEnvironmentLookup = true }
}

// environmentLookupBug is the 500 message of WithBrokenEnvironmentLookup.
const environmentLookupBug = "module 'agenta_backend.services.db_manager' has no attribute 'get_app_variant_by_app_name_and_environment'"

// User is who the Server acts for.
type User struct {
	ID       string
	Username string
}
