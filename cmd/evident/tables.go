package main

// The input-table flags that judge, check and import share: the three
// tables (or --demo) and the speech profile.

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v3"

	"evident/persona/demo"
	"evident/persona/ingest"
	"evident/persona/speech"
)

// tableFlags are the three input tables and the speech profile, shared by
// judge and check.
func tableFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "turns", Usage: "chat_turn table (.jsonl, .json array or .csv)"},
		&cli.StringFlag{Name: "cards", Usage: "character_card table (.jsonl, .json array or .csv)"},
		&cli.StringFlag{Name: "lexicon", Usage: "topic_lexicon table (.jsonl, .json array or .csv)"},
		&cli.BoolFlag{Name: "demo", Usage: "use the embedded demo tables instead of --turns/--cards/--lexicon"},
		&cli.StringFlag{Name: "speech-profile", Value: "seed", Usage: "polite-ending profile: seed or extended"},
		&cli.StringFlag{Name: "endings", Usage: "file of extra polite endings, one a line ('!' prefix: noun exception)"},
	}
}

// tables resolves the table flags to inputs.
func tables(cmd *cli.Command) (turns, cards, lexicon ingest.Source, err error) {
	if cmd.Bool("demo") {
		if cmd.String("turns") != "" || cmd.String("cards") != "" || cmd.String("lexicon") != "" {
			return turns, cards, lexicon, errors.New("--demo cannot be combined with --turns, --cards or --lexicon")
		}
		return demo.Turns(), demo.Cards(), demo.Lexicon(), nil
	}
	for _, f := range []struct {
		flag string
		dst  *ingest.Source
	}{{"turns", &turns}, {"cards", &cards}, {"lexicon", &lexicon}} {
		path := cmd.String(f.flag)
		if path == "" {
			return turns, cards, lexicon, fmt.Errorf("--%s is required (or --demo)", f.flag)
		}
		t, err := ingest.File(path)
		if err != nil {
			return nil, nil, nil, err
		}
		*f.dst = t
	}
	return turns, cards, lexicon, nil
}

// tablesAndProfile resolves the table flags and the speech profile, which
// every command that judges needs together.
func tablesAndProfile(cmd *cli.Command) (turns, cards, lexicon ingest.Source, p *speech.Profile, err error) {
	if turns, cards, lexicon, err = tables(cmd); err != nil {
		return
	}
	p, err = profile(cmd)
	return
}

// profile resolves --speech-profile and --endings.
func profile(cmd *cli.Command) (*speech.Profile, error) {
	p, err := speech.ByName(cmd.String("speech-profile"))
	if err != nil {
		return nil, err
	}
	path := cmd.String("endings")
	if path == "" {
		return p, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	endings, exceptions, err := speech.ReadEndings(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p.With(endings, exceptions), nil
}
