package agenta

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agenta-go/agenta/internal/text"
)

// The scrub: credentials never reach an error, a log line or a value the
// Client returns, whatever the server echoes and however it encodes the
// echo. Every credential the Client sent is its secret from then on: the
// API key and header values given as options, and the provider keys of
// each CreateEvaluation. internal/text does the work (scrub, then cut);
// this file holds the Client's set of secrets and applies it:
//
//   - error bodies are scrubbed as bytes, then cut;
//   - strings built from server data (messages, decoding errors, transport
//     errors, an evaluation's failure) are scrubbed, also once their \u
//     and percent escapes are decoded, then cut;
//   - 2xx answers are scrubbed as they are read, of the secrets of 12
//     characters or more, so that values returned (a scenario whose output
//     echoes a provider key, a failed evaluation's message) hold none.
//     Shorter ones are left in answers: a short word replaced inside JSON
//     could change its meaning or break it.

// maxSecretLength is how far past a cut an error body is read, so that a
// secret (in any of its forms) that the cut would split is recognised
// whole; longer forms are read past the cut by their own length.
const maxSecretLength = 4 << 10

// maxSentSecrets bounds the provider keys a Client keeps as secrets: the
// most recent distinct ones, so that a program that rotates keys for ever
// does not grow the set without bound.
const maxSentSecrets = 64

// secretSet is the Client's secrets at one time: immutable, swapped whole.
type secretSet struct {
	own  []string // the credentials of the options, kept for ever
	sent []string // provider keys sent, oldest first
	// all scrubs errors and logs; answers scrubs 2xx answers, of the long
	// secrets only, or is nil when there are none.
	all, answers *text.Secrets
}

func newSecretSet(own, sent []string) *secretSet {
	s := &secretSet{own: own, sent: sent, all: text.NewSecrets(append(slices.Clone(own), sent...)...)}
	var long []string
	for _, v := range s.all.Values() {
		if len(v) >= text.MinRun {
			long = append(long, v)
		}
	}
	if len(long) > 0 {
		s.answers = text.NewSecrets(long...)
	}
	return s
}

// clientSecrets is the Client's set, read without a lock.
type clientSecrets struct {
	mu  sync.Mutex // serialises adds
	set atomic.Pointer[secretSet]
}

// load returns the current set.
func (c *clientSecrets) load() *secretSet {
	if s := c.set.Load(); s != nil {
		return s
	}
	return &secretSet{}
}

// addSent makes values secrets of the Client from now on.
func (c *clientSecrets) addSent(values ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.load()
	sent := slices.Clone(cur.sent)
	added := false
	for _, v := range values {
		if v == "" || slices.Contains(cur.own, v) {
			continue
		}
		if i := slices.Index(sent, v); i >= 0 {
			sent = slices.Delete(sent, i, i+1) // moves to the newest
		} else {
			added = true
		}
		sent = append(sent, v)
	}
	if !added {
		return
	}
	if over := len(sent) - maxSentSecrets; over > 0 {
		sent = sent[over:]
	}
	c.set.Store(newSecretSet(cur.own, sent))
}
