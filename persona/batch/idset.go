package batch

import "hash/maphash"

// idSet is an exact set of turn ids with the position and line of each id's
// first accepted row. It holds no pointers the garbage collector must scan
// (ids live in one byte arena; the map is keyed by a 64-bit hash and chains
// the rare ids that share a hash), which matters because it is the one
// structure that grows with the number of turns: with a map[string] of a
// million ids, marking it was 40 % of a 1M-turn run's CPU (bench/prof).
type idSet struct {
	hash  func(string) uint64 // maphash with a per-set seed; tests force collisions
	index map[uint64]int32    // hash → first entry with that hash
	ents  []idEntry
	arena []byte
}

type idEntry struct {
	off       uint64 // id bytes are arena[off : off+n]
	n         uint32
	next      int32 // next entry with the same hash, -1 at the end
	pos, line int32
}

func newIDSet() *idSet {
	seed := maphash.MakeSeed()
	return &idSet{hash: func(id string) uint64 { return maphash.String(seed, id) }, index: map[uint64]int32{}}
}

// get returns the entry of id.
func (s *idSet) get(id string) (idEntry, bool) {
	i, ok := s.index[s.hash(id)]
	for ok && i >= 0 {
		e := s.ents[i]
		if string(s.arena[e.off:e.off+uint64(e.n)]) == id {
			return e, true
		}
		i = e.next
	}
	return idEntry{}, false
}

// add records id at pos and line; it reports false (and changes nothing) when
// id is already in the set.
func (s *idSet) add(id string, pos, line int32) bool {
	h := s.hash(id)
	head, ok := s.index[h]
	for i := head; ok && i >= 0; i = s.ents[i].next {
		e := s.ents[i]
		if string(s.arena[e.off:e.off+uint64(e.n)]) == id {
			return false
		}
	}
	next := int32(-1)
	if ok {
		next = head
	}
	s.index[h] = int32(len(s.ents))
	s.ents = append(s.ents, idEntry{off: uint64(len(s.arena)), n: uint32(len(id)), next: next, pos: pos, line: line})
	s.arena = append(s.arena, id...)
	return true
}
