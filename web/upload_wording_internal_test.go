package web

import (
	"net/http"
	"strings"
	"testing"
)

// An upload form posted as something other than a multipart form is
// refused in the screen's language, saying nothing was imported.
func TestAnUploadThatIsNotAMultipartFormIsRefusedInKorean(t *testing.T) {
	f := newJobsFixture(t)
	for _, path := range []string{"/upload", "/gold"} {
		r := f.post(path, "", "name", "x")
		if r.status != http.StatusBadRequest {
			t.Fatalf("%s: %d, want 400", path, r.status)
		}
		if !strings.Contains(r.body, "올리기는 multipart/form-data 양식으로 보내야 합니다") || !strings.Contains(r.body, "아무것도 가져오지 않았습니다") {
			t.Fatalf("%s: the refusal does not say it in Korean: %.300s", path, r.body)
		}
	}
}
