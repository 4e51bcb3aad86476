package ingest

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Format is the layout of one table file (spec persona.md "Input: three
// tables": each table can arrive as JSON Lines, a JSON array, or CSV whose
// list cells hold a JSON array).
type Format int

// The three table formats. The zero Format is not a format.
const (
	// JSONL is JSON Lines: one JSON object per line; blank lines are skipped.
	JSONL Format = iota + 1
	// JSONArray is one JSON array whose elements are the rows (objects).
	JSONArray
	// CSV is a header row naming the columns, then one record per row.
	CSV
	// CardFile is one Character Card V2/V3 file (.png with a "chara" or
	// "ccv3" text chunk, or a .charx zip), not a table: Rows refuses it and
	// persona/batch.LoadCards reads it with persona/cardfile. A V2/V3 card
	// saved as .json arrives as JSONArray; LoadCards tells it by its first
	// character ('{' instead of '[').
	CardFile
)

// String returns "JSONL", "JSON array" or "CSV" (for messages).
func (f Format) String() string {
	switch f {
	case JSONL:
		return "JSONL"
	case JSONArray:
		return "JSON array"
	case CSV:
		return "CSV"
	case CardFile:
		return "character card file"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// FormatOf chooses the format of a table file by its extension, ignoring
// case: .jsonl and .ndjson give JSONL, .json gives JSONArray, .csv gives CSV,
// .png and .charx give CardFile. Any other extension (or none) is an error
// that names the file.
func FormatOf(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl", ".ndjson":
		return JSONL, nil
	case ".json":
		return JSONArray, nil
	case ".csv":
		return CSV, nil
	case ".png", ".charx":
		return CardFile, nil
	}
	return 0, fmt.Errorf("%s: unknown table format: want extension .jsonl, .ndjson, .json or .csv (or .png/.charx for a character card)", path)
}
