package evals

import (
	"bytes"
	"iter"

	"github.com/agenta-go/agenta/models"
)

// A listing in test-set order gives a case's repeats one after another, so
// most rows of a case carry, byte for byte, the inputs and expected answers
// of the row before them on their side. lastCase remembers that row, to
// reuse its pairing key and its case's group instead of building the key
// again (sorting the inputs, trimming and checking their values) and
// looking it up: the cost a repeat adds to a comparison is then little more
// than reading its results.

// repeatCacheOff turns lastCase and appendLabel off, for the tests that
// check they change nothing.
var repeatCacheOff bool

// lastCase is the last row of a side keyed by inputs and expected answers:
// a copy of what its key was built from, the key, and its case's group
// while that is not settled.
type lastCase struct {
	valid    bool
	names    []string // input names, in the row's order
	ends     []int    // where each input's value ends in values
	values   []byte   // the raw input values, one after another
	answers  []models.CorrectAnswer
	answer   string
	key      []byte
	inputs   int // the length of key's inputs part
	answered bool
	group    *caseGroup
}

// same reports whether s has the remembered row's inputs and expected
// answers, byte for byte, in the same order.
func (l *lastCase) same(s *models.EvaluationScenario) bool {
	if !l.valid || len(s.Inputs) != len(l.names) || len(s.CorrectAnswers) != len(l.answers) || s.CorrectAnswer != l.answer {
		return false
	}
	start := 0
	for i, in := range s.Inputs {
		if in.Name != l.names[i] || !bytes.Equal(in.Value, l.values[start:l.ends[i]]) {
			return false
		}
		start = l.ends[i]
	}
	for i, a := range s.CorrectAnswers {
		if a != l.answers[i] {
			return false
		}
	}
	return true
}

// remember keeps s's inputs and expected answers, with the key built from
// them.
func (l *lastCase) remember(s *models.EvaluationScenario, key []byte, inputs int, answered bool) {
	l.valid, l.answer, l.inputs, l.answered, l.group = true, s.CorrectAnswer, inputs, answered, nil
	l.names, l.ends, l.values = l.names[:0], l.ends[:0], l.values[:0]
	for _, in := range s.Inputs {
		l.names = append(l.names, in.Name)
		l.values = append(l.values, in.Value...)
		l.ends = append(l.ends, len(l.values))
	}
	l.answers = append(l.answers[:0], s.CorrectAnswers...)
	l.key = append(l.key[:0], key...)
}

// maxFreeGroups bounds the settled cases' groups kept for reuse.
const maxFreeGroups = 64

// newGroup returns an empty group, one of a settled case when there is
// one, so that a case costs no allocation for its group or its scores.
func (c *Comparer) newGroup() *caseGroup {
	if n := len(c.free); n > 0 {
		g := c.free[n-1]
		c.free = c.free[:n-1]
		return g
	}
	return &caseGroup{}
}

// freeGroup keeps the group of a settled case for reuse.
func (c *Comparer) freeGroup(g *caseGroup) {
	if repeatCacheOff || len(c.free) == maxFreeGroups {
		return
	}
	*g = caseGroup{scores: [2][]repeatScore{g.scores[0][:0], g.scores[1][:0]}, text: g.text[:0], key: g.key[:0]}
	c.free = append(c.free, g)
}

// labelBytes is how much of a case's InputsText its label needs: more
// than 121 runes of at most 4 bytes, so that bound(…, 120) cuts it as it
// cuts the whole.
const labelBytes = 4*121 + 1

// appendLabel appends what EvaluationScenario.InputsText returns for
// inputs, up to labelBytes of it, without its allocations for the common
// values: plain strings and numbers.
func appendLabel(dst []byte, inputs []models.Input) []byte {
	var small [8][]byte
	return appendLabelOf(dst, inputs, inputTexts(small[:0], inputs))
}

// keyAndLabel appends the pairing key of inputs to key, as pairingKey, and
// their label to label, as appendLabel, reading each value once: a case's
// first row needs both.
func keyAndLabel(key, label []byte, inputs []models.Input) ([]byte, []byte) {
	var small [8][]byte
	texts := inputTexts(small[:0], inputs)
	var order [8]int
	for _, i := range byName(order[:0], inputs) {
		key = appendField(key, inputs[i].Name)
		key = appendField(key, texts[i])
	}
	return key, appendLabelOf(label, inputs, texts)
}

// inputTexts appends what Input.Text returns for each input, without its
// allocations for plain strings and numbers.
func inputTexts(texts [][]byte, inputs []models.Input) [][]byte {
	for _, in := range inputs {
		v, ok := plainString(in.Value)
		if !ok {
			v, ok = plainToken(in.Value)
		}
		if !ok {
			v = []byte(in.Text())
		}
		texts = append(texts, v)
	}
	return texts
}

// appendLabelOf appends the label of inputs whose texts are texts.
func appendLabelOf(label []byte, inputs []models.Input, texts [][]byte) []byte {
	limit := len(label) + labelBytes
	for i, in := range inputs {
		if i > 0 {
			label = appendUpTo(label, ", ", limit)
		}
		label = appendUpTo(label, in.Name, limit)
		label = appendUpTo(label, "=", limit)
		label = appendUpTo(label, texts[i], limit)
	}
	return label
}

// appendUpTo appends b to dst, cut so that dst holds at most limit bytes.
func appendUpTo[T string | []byte](dst []byte, b T, limit int) []byte {
	return append(dst, b[:max(0, min(len(b), limit-len(dst)))]...)
}

// plainToken returns a JSON value that is a bare token of letters, digits
// and number signs (a number, true, false, or no JSON at all), but not
// null: what Input.Text returns for it, as compacting leaves it as it is.
func plainToken(v []byte) ([]byte, bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return nil, false
	}
	for _, b := range v {
		switch {
		case b >= '0' && b <= '9', b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b == '.', b == '+', b == '-':
		default:
			return nil, false
		}
	}
	return v, true
}

// caseHashes is the set of the keys of the cases settled, as a 64-bit hash
// of each (see scenarioIDs: 11 to 21 bytes a case). A case that shares its
// hash with a settled one (a chance of about n²/2⁶⁵ in n cases) would count
// as listed more than K times: the gates fail, never pass.
type caseHashes struct{ ids scenarioIDs }

// has reports whether the case of hash h (keyHash) is settled.
func (s *caseHashes) has(h uint64) bool {
	if s.ids.slots == nil {
		return false
	}
	mask := uint64(len(s.ids.slots) - 1)
	for i := h & mask; s.ids.slots[i] != 0; i = (i + 1) & mask {
		if s.ids.slots[i] == h {
			return true
		}
	}
	return false
}

// add remembers the case of hash h as settled.
func (s *caseHashes) add(h uint64) {
	if s.ids.slots == nil {
		s.ids.slots = make([]uint64, 1024)
	}
	s.ids.add(h)
}

// caseIndexMask masks the hashes caseIndex files its groups by; tests
// narrow it to make cases share a slot.
var caseIndexMask = ^uint64(0)

// caseIndex holds the groups of the cases not yet settled by their key's
// hash, each checked against its key: a group keeps its key in a buffer
// it reuses, where a map by key would allocate a string a case.
type caseIndex struct{ byHash map[uint64]*caseGroup }

// find returns the group of key, whose hash is h; nil when there is none.
func (x *caseIndex) find(h uint64, key []byte) *caseGroup {
	for g := x.byHash[h&caseIndexMask]; g != nil; g = g.next {
		if g.hash == h && bytes.Equal(g.key, key) {
			return g
		}
	}
	return nil
}

// add files a new group.
func (x *caseIndex) add(g *caseGroup) {
	if x.byHash == nil {
		x.byHash = map[uint64]*caseGroup{}
	}
	slot := g.hash & caseIndexMask
	g.next = x.byHash[slot]
	x.byHash[slot] = g
}

// remove takes a group out.
func (x *caseIndex) remove(g *caseGroup) {
	slot := g.hash & caseIndexMask
	for p := x.byHash[slot]; p != nil; p = p.next {
		switch {
		case p == g && p == x.byHash[slot]:
			if g.next == nil {
				delete(x.byHash, slot)
			} else {
				x.byHash[slot] = g.next
			}
		case p.next == g:
			p.next = g.next
		default:
			continue
		}
		g.next = nil
		return
	}
}

// all yields the groups, in no order.
func (x *caseIndex) all() iter.Seq[*caseGroup] {
	return func(yield func(*caseGroup) bool) {
		for _, g := range x.byHash {
			for ; g != nil; g = g.next {
				if !yield(g) {
					return
				}
			}
		}
	}
}
