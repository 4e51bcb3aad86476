package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"evident/persona"
)

// rowOut is one row as read and decoded: its line, the value, or the error.
type rowOut[T any] struct {
	Line int
	V    T
	Err  string
}

// readAll reads every row of data in format f and decodes it with dec. A
// fatal error from NewRows or Next fails the test unless wantFatal is set, in
// which case it is returned.
func readAll[T any](t *testing.T, data []byte, f Format, dec func(Raw) (T, error)) ([]rowOut[T], error) {
	t.Helper()
	rows, err := NewRows(bytes.NewReader(data), f)
	if err != nil {
		return nil, err
	}
	var out []rowOut[T]
	for {
		raw, err := rows.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		v, err := dec(raw)
		g := rowOut[T]{Line: raw.Line, V: v}
		if err != nil {
			var re *RowError
			if !errors.As(err, &re) {
				t.Fatalf("decode error is %T, want *RowError: %v", err, err)
			}
			g.Err = err.Error()
		}
		out = append(out, g)
	}
}

// mustReadAll is readAll that fails the test on a fatal error.
func mustReadAll[T any](t *testing.T, data []byte, f Format, dec func(Raw) (T, error)) []rowOut[T] {
	t.Helper()
	out, err := readAll(t, data, f, dec)
	if err != nil {
		t.Fatalf("fatal error: %v", err)
	}
	return out
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkRows[T any](t *testing.T, got, want []rowOut[T]) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d:\ngot  %+v\nwant %+v", len(got), len(want), got, want)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("row %d:\ngot  %s\nwant %s", i, show(got[i]), show(want[i]))
		}
	}
}

// show prints a row with pointers dereferenced.
func show(v any) string {
	var b strings.Builder
	showValue(&b, reflect.ValueOf(v))
	return b.String()
}

func showValue(b *strings.Builder, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		b.WriteString("&")
		showValue(b, v.Elem())
	case reflect.Struct:
		b.WriteString("{")
		for i := 0; i < v.NumField(); i++ {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			if i > 0 {
				b.WriteString(" ")
			}
			b.WriteString(v.Type().Field(i).Name + ":")
			showValue(b, v.Field(i))
		}
		b.WriteString("}")
	case reflect.Slice:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		b.WriteString("[")
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b.WriteString(",")
			}
			showValue(b, v.Index(i))
		}
		b.WriteString("]")
	case reflect.String:
		b.WriteString(`"` + v.String() + `"`)
	default:
		fmt.Fprint(b, v.Interface())
	}
}

func ptr(s string) *string { return &s }

// fixture turns, cards and lexicon rows (testdata/*), the same in every format.
var (
	turnT1 = persona.Turn{
		TurnID: "t1", SessionID: "s1", CharacterID: "ria", ModelID: "m-a",
		UserMessage: ptr("리아야, 어제 얘기 기억나?"), ReplyText: ptr("응, 하늘이랑 아카데미에 갔던 거 말이지?"),
		FirstPerson: ptr("나"), NamedEntities: []string{"하늘", "아카데미"}, HonorificLevel: ptr("반말"),
		UserAskedRecall: true, CreatedAt: "2024-05-01T10:00:00+09:00", PromptID: "p1",
	}
	turnT2 = persona.Turn{
		TurnID: "t2", SessionID: "s1", CharacterID: "ria", ModelID: "m-b",
		ReplyText: ptr("저는 잘 모르겠어요."), FirstPerson: ptr("저"), HonorificLevel: ptr("존댓말"),
	}
	turnT3 = persona.Turn{
		TurnID: "t3", SessionID: "s2", CharacterID: "ria", ModelID: "m-a",
		UserMessage: ptr("오늘 날씨 어때?"), NamedEntities: []string{}, CreatedAt: "2024-05-01T10:05:30.25Z",
	}
	cardRia = persona.Card{
		CharacterID: "ria", Name: "리아", HonorificRule: "반말", FirstPerson: "나",
		CanonEntities: []string{"하늘", "아카데미", "리안"}, ForbiddenTopics: []string{"자해", "도박"},
		EntityRoles: []persona.EntityRole{{Role: "동생", Entity: "하늘"}, {Role: "학교", Entity: "아카데미"}},
		Description: "아카데미에 다니는 견습 마법사", Public: true,
	}
	cardSeo = persona.Card{
		CharacterID: "seo", Name: "서윤", HonorificRule: "존댓말", FirstPerson: "저",
		CanonEntities: []string{}, ForbiddenTopics: []string{}, EntityRoles: []persona.EntityRole{},
	}
	lexicon = []persona.LexiconRow{{Term: "카지노", Topic: "도박"}, {Term: "베팅", Topic: "도박"}, {Term: "손목", Topic: "자해"}}
)
