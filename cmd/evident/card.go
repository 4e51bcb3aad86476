package main

// evident card read FILE [--id ID]
// evident card write FILE --card ROW.json --out FILE(.json|.png)

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"evident/persona"
	"evident/persona/cardfile"
)

// cardCommand reads and writes Character Card V1/V2/V3 files (JSON, PNG,
// CHARX; a V1 card is imported as V2): the judge's fields live under
// data.extensions["evident/persona"].
func cardCommand() *cli.Command {
	return &cli.Command{
		Name:  "card",
		Usage: "read or write the judge's fields in a Character Card V2/V3 file (.json, .png, .charx)",
		Commands: []*cli.Command{
			{
				Name:      "read",
				Usage:     "print the card as one character_card row (JSON); where it was read from, fields of the wrong type, assets and guessed fields are listed on stderr",
				ArgsUsage: "FILE",
				Flags:     []cli.Flag{&cli.StringFlag{Name: "id", Usage: "character_id to give the card (default: the extension's, else the name)"}},
				Action:    runCardRead,
			},
			{
				Name:      "write",
				Usage:     "write a character_card row (JSON object) into the card's extension; other keys are kept",
				ArgsUsage: "FILE",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "card", Required: true, Usage: "a JSON file holding one character_card row"},
					&cli.StringFlag{Name: "out", Required: true, Usage: "output file: .json (card JSON) or .png (FILE must be a PNG)"},
				},
				Action: runCardWrite,
			},
		},
	}
}

func runCardRead(ctx context.Context, cmd *cli.Command) error {
	f, _, err := readCardArg(cmd)
	if err != nil {
		return err
	}
	c, g := f.Card(cmd.String("id"))
	printCardFile(cmd.Root().ErrWriter, f)
	for _, x := range g.Guessed {
		fmt.Fprintf(cmd.Root().ErrWriter, "guessed %s\n", x)
	}
	for _, x := range g.Empty {
		fmt.Fprintf(cmd.Root().ErrWriter, "empty %s\n", x)
	}
	enc := json.NewEncoder(cmd.Root().Writer)
	enc.SetEscapeHTML(false)
	return enc.Encode(c)
}

func runCardWrite(ctx context.Context, cmd *cli.Command) error {
	f, orig, err := readCardArg(cmd)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(cmd.String("card"))
	if err != nil {
		return err
	}
	var c persona.Card
	if err := json.Unmarshal(b, &c); err != nil {
		return fmt.Errorf("%s: %w", cmd.String("card"), err)
	}
	if err := f.SetPersona(c); err != nil {
		return err
	}
	var out []byte
	switch ext := strings.ToLower(filepath.Ext(cmd.String("out"))); ext {
	case ".json":
		out, err = f.JSON()
	case ".png":
		out, err = cardfile.PNG(orig, f)
	default:
		return fmt.Errorf("--out %s: want .json or .png", cmd.String("out"))
	}
	if err != nil {
		return err
	}
	// Replaced only when the card is written whole (outputs).
	return writeOutput("--out", cmd.String("out"), func(w *bufio.Writer) error {
		_, err := w.Write(out)
		return err
	})
}

// printCardFile writes, one line each: "read from ORIGIN (SPEC VERSION)",
// "fault PATH: GOT where WANT is expected" for every field of the wrong
// type (kept as it is on write), and "asset TYPE NAME URI: N bytes from zip
// entry P" or ": PROBLEM" for every data.assets element.
func printCardFile(w io.Writer, f *cardfile.File) {
	version := ""
	if f.SpecVersion != "" {
		version = " " + f.SpecVersion
	}
	fmt.Fprintf(w, "read from %s (%s%s)\n", f.Origin(), f.Spec, version)
	for _, x := range f.Faults() {
		fmt.Fprintf(w, "fault %s (ignored, written back unchanged)\n", x)
	}
	for _, a := range f.Assets() {
		what := "not embedded, not read"
		switch {
		case a.Problem != "":
			what = a.Problem
		case a.Data != nil:
			what = fmt.Sprintf("%d bytes from zip entry %q", len(a.Data), a.Path)
		}
		fmt.Fprintf(w, "asset %s %q %s: %s\n", a.Type, a.Name, a.URI, what)
	}
}

func readCardArg(cmd *cli.Command) (*cardfile.File, []byte, error) {
	if cmd.Args().Len() != 1 {
		return nil, nil, fmt.Errorf("want one card FILE")
	}
	path := cmd.Args().First()
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := cardfile.Read(path, b)
	return f, b, err
}
