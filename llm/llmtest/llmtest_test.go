package llmtest_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"evident/llm/llmtest"
)

func post(t *testing.T, url, body string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestServer(t *testing.T) {
	t.Run("replies follow the script and the last one repeats", func(t *testing.T) {
		s := llmtest.NewOpenAI(t, llmtest.Reply{Status: 429, Header: http.Header{"Retry-After": {"2"}}}, llmtest.Reply{Body: llmtest.OpenAIChat("hi", 1, 1)})
		var got []int
		for range 3 {
			resp, _ := post(t, s.URL+"/chat/completions", `{"model":"m"}`)
			got = append(got, resp.StatusCode)
			if resp.StatusCode == 429 && resp.Header.Get("Retry-After") != "2" {
				t.Errorf("Retry-After = %q", resp.Header.Get("Retry-After"))
			}
		}
		if got[0] != 429 || got[1] != 200 || got[2] != 200 {
			t.Errorf("statuses = %v", got)
		}
	})
	t.Run("requests are recorded with path, header and body", func(t *testing.T) {
		s := llmtest.NewAnthropic(t)
		post(t, s.URL+"/v1/messages", `{"model":"m"}`)
		r := s.Requests()
		if len(r) != 1 || r[0].Path != "/v1/messages" || string(r[0].Body) != `{"model":"m"}` || r[0].Header.Get("Content-Type") != "application/json" {
			t.Fatalf("recorded %+v", r)
		}
		var m map[string]string
		if err := r[0].Decode(&m); err != nil || m["model"] != "m" {
			t.Errorf("decode: %v %v", m, err)
		}
	})
	t.Run("a wrong path is a 404", func(t *testing.T) {
		s := llmtest.NewOpenAI(t)
		if resp, _ := post(t, s.URL+"/messages", `{}`); resp.StatusCode != 404 {
			t.Errorf("status = %d", resp.StatusCode)
		}
	})
	t.Run("an error status without a body gets the provider's error body", func(t *testing.T) {
		s := llmtest.NewAnthropic(t, llmtest.Reply{Status: 529})
		if _, b := post(t, s.URL+"/v1/messages", `{}`); !strings.Contains(b, "overloaded_error") {
			t.Errorf("body = %s", b)
		}
	})
	t.Run("requests in flight at once are counted", func(t *testing.T) {
		s := llmtest.NewOpenAI(t, llmtest.Reply{Delay: 50 * time.Millisecond})
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() { post(t, s.URL+"/chat/completions", `{}`) })
		}
		wg.Wait()
		if s.MaxInFlight() != 3 || s.Count() != 3 {
			t.Errorf("max in flight %d, count %d", s.MaxInFlight(), s.Count())
		}
	})
}
