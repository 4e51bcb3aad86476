package web

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
)

// recordsExport writes the run's records matching the filter as JSON Lines.
func (s *Server) recordsExport(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(r)
	if !ok {
		s.fail(w, r, http.StatusNotFound, "찾는 실행이 없습니다", "실행 번호는 1 이상의 정수입니다.")
		return
	}
	recs, err := s.db.Records(r.Context(), id, parseFilter("", r.URL.Query()).store())
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="evident-run-%d.jsonl"`, id))
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return
		}
	}
	bw.Flush()
}
