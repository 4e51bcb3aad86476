package persona

import (
	"strings"
	"testing"

	"evident/persona/speech"
)

// TestSummariesNeverNestCornerBrackets: a reply wrapped in 「」 made the
// summary quote 「「좋아요」 and fail our own check 10 (issue 14 item 3);
// names with brackets of their own are quoted once too. Both profiles.
func TestSummariesNeverNestCornerBrackets(t *testing.T) {
	for _, prof := range []*speech.Profile{speech.Seed(), speech.Extended()} {
		j, err := NewJudge([]Card{benchCard}, nil, prof)
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			reply string
			names []string
			want  string
		}{
			{"「좋아요」", []string{}, "「좋아요」로 끝나"},
			{"그럼 「검술원」에 가.", []string{"「검술원」"}, "「검술원」"},
		} {
			turn := Turn{TurnID: "T-1", SessionID: "S-1", CharacterID: benchCard.CharacterID, ModelID: "m",
				ReplyText: sp(tt.reply), FirstPerson: sp("나"), NamedEntities: tt.names}
			rec, err := j.Judge(&turn, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(rec.Summary, "「「") || strings.Contains(rec.Summary, "」」") || !strings.Contains(rec.Summary, tt.want) {
				t.Errorf("%s: %q: summary %q, want %q once", prof.Name, tt.reply, rec.Summary, tt.want)
			}
			for _, c := range j.Check(&rec, Context{Turn: &turn}) {
				if !c.Pass {
					t.Errorf("%s: %q: check %d fails: %s", prof.Name, tt.reply, c.ID, c.Reason)
				}
			}
		}
	}
}

func TestBare(t *testing.T) {
	for in, want := range map[string]string{
		"좋아요":       "좋아요",
		"「좋아요」":     "좋아요",
		"「좋아요":      "좋아요",
		"좋아요」":      "좋아요",
		"「가」「나」":    "가나",
		"가「나":       "가나",
		"「」":        "「」",
		"「「검」」":     "「검」",
		"「리안」과 「아카": "리안과 아카",
	} {
		if got := bare(in); got != want {
			t.Errorf("bare(%q) = %q, want %q", in, got, want)
		}
	}
}
