package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"

	"evident/persona"
)

func TestImport(t *testing.T) {
	ctx := context.Background()
	s := loadSeed(t)
	// A turn whose server extraction failed (null named_entities) and one with
	// every optional column set, next to the seed's.
	turns := append([]persona.Turn{}, s.turns...)
	turns = append(turns,
		persona.Turn{TurnID: "X-null", SessionID: "S", CharacterID: "CHR-0001", ModelID: "m"},
		persona.Turn{TurnID: "X-full", SessionID: "S", CharacterID: "CHR-0001", ModelID: "m",
			UserMessage: sp("동생은?"), ReplyText: sp("하늘이는 잘 있어."), FirstPerson: sp("나"),
			NamedEntities: []string{}, HonorificLevel: sp("반말"), UserAskedRecall: true,
			CreatedAt: "2026-10-01T20:00:00+09:00", PromptID: "P1"})

	t.Run("an imported dataset reads back exactly as it was imported", func(t *testing.T) {
		db := openMem(t)
		id, err := db.ImportDataset(ctx, "seed", turns, s.cards, s.lexicon)
		if err != nil {
			t.Fatal(err)
		}
		gotTurns, err := db.Turns(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotTurns, turns) {
			t.Errorf("turns differ:\n got %+v\nwant %+v", gotTurns, turns)
		}
		if gotTurns[len(turns)-2].NamedEntities != nil || gotTurns[len(turns)-1].NamedEntities == nil {
			t.Error("null and empty named_entities were not kept apart")
		}
		gotCards, err := db.Cards(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotCards, s.cards) {
			t.Errorf("cards differ:\n got %+v\nwant %+v", gotCards, s.cards)
		}
		gotLex, err := db.Lexicon(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotLex, s.lexicon) {
			t.Errorf("lexicon differs: %v", gotLex)
		}
		info, err := db.Dataset(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if info.Name != "seed" || info.Turns != len(turns) || info.Cards != len(s.cards) || info.Lexicon != len(s.lexicon) {
			t.Errorf("dataset info %+v", info)
		}
	})

	t.Run("a duplicate turn_id mid-import leaves no dataset at all", func(t *testing.T) {
		db := openMem(t)
		bad := append(append([]persona.Turn{}, turns[:3]...), turns[1])
		_, err := db.ImportDataset(ctx, "dup", bad, s.cards, s.lexicon)
		if err == nil {
			t.Fatal("a duplicate turn_id was imported")
		}
		t.Log(err)
		ds, err := db.Datasets(ctx)
		if err != nil || len(ds) != 0 {
			t.Fatalf("datasets %v, %v", ds, err)
		}
		for _, table := range []string{"dataset", "chat_turn", "character_card", "topic_lexicon"} {
			if n := count(t, db, table); n != 0 {
				t.Errorf("%s has %d rows after a failed import", table, n)
			}
		}
	})

	t.Run("a duplicate character_id leaves no dataset", func(t *testing.T) {
		db := openMem(t)
		_, err := db.ImportDataset(ctx, "dup", turns, append(s.cards, s.cards[0]), s.lexicon)
		if err == nil {
			t.Fatal("a duplicate character_id was imported")
		}
		if n := count(t, db, "dataset"); n != 0 {
			t.Fatalf("%d datasets", n)
		}
	})

	t.Run("an error from the turn source aborts the streaming import", func(t *testing.T) {
		db := openMem(t)
		boom := errors.New("disk on fire")
		i := 0
		_, err := db.ImportStream(ctx, "stream", s.cards, s.lexicon, func() (*persona.Turn, error) {
			if i == 3 {
				return nil, boom
			}
			i++
			return &turns[i-1], nil
		})
		if !errors.Is(err, boom) {
			t.Fatalf("error %v, want the source's", err)
		}
		if n := count(t, db, "chat_turn"); n != 0 {
			t.Fatalf("%d turns left behind", n)
		}
	})

	t.Run("a streaming import may reuse one Turn for every row", func(t *testing.T) {
		db := openMem(t)
		var tu persona.Turn
		i := 0
		id, err := db.ImportStream(ctx, "big", s.cards, s.lexicon, func() (*persona.Turn, error) {
			if i == 5000 {
				return nil, io.EOF
			}
			tu = persona.Turn{TurnID: fmt.Sprintf("T%d", i), SessionID: "S", CharacterID: "CHR-0001", ModelID: "m"}
			i++
			return &tu, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		err = db.EachTurn(ctx, id, func(tu *persona.Turn) error {
			if tu.TurnID != fmt.Sprintf("T%d", n) {
				return fmt.Errorf("turn %d is %s", n, tu.TurnID)
			}
			n++
			return nil
		})
		if err != nil || n != 5000 {
			t.Fatalf("read %d turns: %v", n, err)
		}
	})

	t.Run("an import not yet committed is invisible and a rollback removes it", func(t *testing.T) {
		db, _ := openFile(t)
		im, err := db.BeginImport(ctx, "pending")
		if err != nil {
			t.Fatal(err)
		}
		for i := range turns {
			if err := im.AddTurn(&turns[i]); err != nil {
				t.Fatal(err)
			}
		}
		if ds, err := db.Datasets(ctx); err != nil || len(ds) != 0 {
			t.Fatalf("a reader saw %v (%v) before commit", ds, err)
		}
		if _, err := db.Turns(ctx, im.ID()); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Turns of the pending dataset: %v, want ErrNotFound", err)
		}
		if err := im.Rollback(); err != nil {
			t.Fatal(err)
		}
		if err := im.AddTurn(&turns[0]); !errors.Is(err, ErrClosed) {
			t.Fatalf("AddTurn after Rollback: %v, want ErrClosed", err)
		}
		if n := count(t, db, "chat_turn"); n != 0 {
			t.Fatalf("%d turns after rollback", n)
		}
	})

	t.Run("a failed Add makes Commit roll back", func(t *testing.T) {
		db := openMem(t)
		im, err := db.BeginImport(ctx, "half")
		if err != nil {
			t.Fatal(err)
		}
		im.AddTurn(&turns[0])
		if err := im.AddTurn(&turns[0]); err == nil {
			t.Fatal("duplicate accepted")
		}
		if err := im.AddTurn(&turns[1]); err == nil {
			t.Fatal("an Add after a failed Add succeeded")
		}
		if _, err := im.Commit(); err == nil {
			t.Fatal("Commit after a failed Add succeeded")
		}
		if n := count(t, db, "dataset"); n != 0 {
			t.Fatalf("%d datasets", n)
		}
	})

	t.Run("a card update replaces the card and keeps its place", func(t *testing.T) {
		db := openMem(t)
		id, err := db.ImportDataset(ctx, "seed", turns, s.cards, s.lexicon)
		if err != nil {
			t.Fatal(err)
		}
		c := s.cards[0]
		c.CanonEntities = append(append([]string{}, c.CanonEntities...), "리안")
		if err := db.UpdateCard(ctx, id, c); err != nil {
			t.Fatal(err)
		}
		got, err := db.Cards(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		want := append([]persona.Card{c}, s.cards[1:]...)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("cards after update:\n got %+v\nwant %+v", got, want)
		}
		err = db.UpdateCard(ctx, id, persona.Card{CharacterID: "nobody"})
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("update of an unknown card: %v, want ErrNotFound", err)
		}
	})

	t.Run("readers of a dataset that does not exist return ErrNotFound", func(t *testing.T) {
		db := openMem(t)
		if _, err := db.Turns(ctx, 42); !errors.Is(err, ErrNotFound) {
			t.Error("Turns:", err)
		}
		if _, err := db.Cards(ctx, 42); !errors.Is(err, ErrNotFound) {
			t.Error("Cards:", err)
		}
		if _, err := db.Lexicon(ctx, 42); !errors.Is(err, ErrNotFound) {
			t.Error("Lexicon:", err)
		}
	})
}
