package store

import (
	"context"
	"slices"
	"testing"
)

// TestCardFirstPersonForms: a card's own declensions of its first person
// (issue 14 item 2) survive import, Cards and UpdateCard; a card without
// them reads back with nil, as a card file without the field decodes.
func TestCardFirstPersonForms(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	s := loadSeed(t)
	cards := slices.Clone(s.cards)
	cards[0].FirstPersonForms = []string{"소인", "소인이"}
	id, err := db.ImportDataset(ctx, "forms", s.turns, cards, s.lexicon)
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.Cards(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"소인", "소인이"}; !slices.Equal(got[0].FirstPersonForms, want) {
		t.Errorf("forms of %s = %q, want %q", got[0].CharacterID, got[0].FirstPersonForms, want)
	}
	for _, c := range got[1:] {
		if c.FirstPersonForms != nil {
			t.Errorf("card %s without forms read back %q, want nil", c.CharacterID, c.FirstPersonForms)
		}
	}

	upd := got[1]
	upd.FirstPersonForms = []string{"내가"}
	if err := db.UpdateCard(ctx, id, upd); err != nil {
		t.Fatal(err)
	}
	first := got[0]
	first.FirstPersonForms = nil
	if err := db.UpdateCard(ctx, id, first); err != nil {
		t.Fatal(err)
	}
	got, err = db.Cards(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].FirstPersonForms != nil || !slices.Equal(got[1].FirstPersonForms, []string{"내가"}) {
		t.Errorf("after updates: %q and %q, want nil and [내가]", got[0].FirstPersonForms, got[1].FirstPersonForms)
	}
}
