package crystal

import (
	"errors"
	"fmt"

	"evident/crystal/embedder"
)

// Profile selects one of the two rule sets of spec crystal.md "Decision —
// profiles". Every result type of this package names the profile it used.
type Profile string

const (
	// ProfileSeed (the default) follows seed 002 literally — similarity ≥ 0.35,
	// both step lists empty → 1.0, one empty → 0.0, CPR weights 0.65/0.35,
	// λ 0.3 — and judges answers by the spec's clean rules.
	ProfileSeed Profile = "seed"
	// ProfilePaper reproduces the reference package crystal-metrics 0.2.0:
	// similarity strictly > 0.35, an empty reference is an error
	// (ErrEmptyReference), an empty prediction scores 0, CPR weights 0.6/0.4,
	// and every documented quirk of its answer judge (see Quirk).
	ProfilePaper Profile = "paper"
)

// ErrUnknownProfile is returned for a Profile other than "", "seed", "paper".
var ErrUnknownProfile = errors.New("crystal: unknown profile")

// ParseProfile reads a profile name: "" and "seed" give ProfileSeed, "paper"
// gives ProfilePaper; anything else wraps ErrUnknownProfile.
func ParseProfile(s string) (Profile, error) {
	return Profile(s).resolve()
}

// resolve maps "" to ProfileSeed and rejects unknown names.
func (p Profile) resolve() (Profile, error) {
	switch p {
	case "", ProfileSeed:
		return ProfileSeed, nil
	case ProfilePaper:
		return ProfilePaper, nil
	}
	return "", fmt.Errorf("%w %q (want %q or %q)", ErrUnknownProfile, string(p), ProfileSeed, ProfilePaper)
}

// LexicalFor returns the Lexical similarity configured for profile p: under
// ProfilePaper two steps without any word token score 1.0 (reference-package
// quirk); under ProfileSeed (and any other value) they score 0.
func LexicalFor(p Profile) embedder.Lexical {
	return embedder.Lexical{EmptyStepsMatch: p == ProfilePaper}
}
