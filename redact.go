package agenta

import (
	"io"
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

// scrub replaces every form of every credential with [REDACTED], in case
// the server echoes one (FastAPI echoes refused input).
func (st *call) scrub(body []byte) []byte { return st.secrets.all.Scrub(body) }

// scrubCut scrubs body, then cuts it to n bytes, dropping a secret's first
// bytes left at the cut.
func (st *call) scrubCut(body []byte, n int) []byte { return st.secrets.all.ScrubCut(body, n) }

// text turns a string built from server data into one fit for an error or
// a log: scrubbed, also in its decoded forms, valid UTF-8, then cut to n
// runes.
func (st *call) text(s string, n int) string { return st.secrets.all.Text(s, n) }

// holdsSecret reports whether s holds a credential, raw or in a form the
// scrub knows.
func (st *call) holdsSecret(s string) bool { return st.secrets.all.Holds(s) }

// readPastCut is how far past a cut an error body is read: the longest
// form of a secret, so that the scrub sees a secret the cut splits whole.
func (st *call) readPastCut() int64 {
	return int64(max(maxSecretLength, st.secrets.all.Longest()))
}

// scrubAnswer returns a 2xx answer's body scrubbed as it is read, or body
// itself when the Client has no long secret.
func (st *call) scrubAnswer(body io.ReadCloser) io.ReadCloser {
	if st.secrets.answers == nil {
		return body
	}
	return replayBody{st.secrets.answers.NewReader(body), body}
}

// text is call.text for strings read outside a call's error path, such as
// an evaluation's failure message: it scrubs every secret of the Client.
func (c *Client) text(s string, n int) string { return c.secrets.load().all.Text(s, n) }
