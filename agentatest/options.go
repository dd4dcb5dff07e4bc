package agentatest

import (
	"strings"
	"time"
)

// runMode says when evaluations fill in their scenarios.
type runMode int

const (
	runSync   runMode = iota // before CreateEvaluation answers
	runPaced                 // in the background, one row per pace
	runManual                // when AdvanceEvaluations is called
)

// Option configures a Server.
type Option func(*Server)

// WithAPIKey makes the Server require the key in the Authorization header,
// sent raw as the service expects (the form "ApiKey <key>" is accepted too).
// A request without it gets 401, one with another value 403.
func WithAPIKey(key string) Option {
	return func(s *Server) { s.apiKey = key }
}

// WithEvaluationPace runs evaluations in the background, filling in one
// scenario per row every d, so that polling shows progress as on the real
// service. Without it (or with d <= 0) every scenario is filled in before
// CreateEvaluation answers, which keeps tests deterministic.
func WithEvaluationPace(d time.Duration) Option {
	return func(s *Server) {
		if d > 0 {
			s.mode, s.pace = runPaced, d
		} else {
			s.mode, s.pace = runSync, 0
		}
	}
}

// WithManualEvaluations holds every evaluation at zero scenarios until the
// test calls AdvanceEvaluations, so that progress can be observed step by
// step without timing.
func WithManualEvaluations() Option {
	return func(s *Server) { s.mode = runManual }
}

// WithClock sets the clock used for the timestamps of created objects and
// of seeds that leave them unset, for deterministic output.
func WithClock(now func() time.Time) Option {
	return func(s *Server) {
		if now != nil {
			s.clock = now
		}
	}
}

// WithUser sets the user the Server acts for: the user_id and
// user_username of what it creates.
func WithUser(u User) Option {
	return func(s *Server) { s.user = u }
}

// WithNewerServer makes the Server answer as newer deployments do: 422
// items in Pydantic v2's form (with input and url), and scenarios carrying
// correct_answers instead of correct_answer.
func WithNewerServer() Option {
	return func(s *Server) {
		s.version = pydanticV2
		s.correctAnswers = true
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
	return func(s *Server) { s.redirectNoPrefx = true }
}

// User is who the Server acts for.
type User struct {
	ID       string
	Username string
}
