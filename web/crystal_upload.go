package web

// POST /crystal/score: the CRYSTAL upload form. The files are read and
// checked by evident/crystal/report exactly as `evident crystal score` reads
// them (report.ReadItems, report.ReadRuns, report.ImageType); this file only
// maps refusals to the form's messages.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"

	"evident/crystal"
	"evident/crystal/report"
	"evident/store"
)

// crystalScore reads references, predictions and images from the form,
// scores them and keeps the run: in the store when the screen has one that
// keeps CRYSTAL runs page by page (issue 16 item 3; listed as db-N and
// still there after a restart), else in memory. Nothing is kept when any
// file is refused.
func (s *Server) crystalScore(w http.ResponseWriter, r *http.Request) {
	page := s.newCrystalRunsPage(r.Context())
	refuse := func(status int, msg, detail string) {
		page.Error, page.Detail = msg, detail
		s.render(w, r, status, "crystal_runs", page)
	}
	f, err := readForm(w, r, s.opt.MaxUpload)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			refuse(http.StatusRequestEntityTooLarge, "The upload is too large",
				fmt.Sprintf("One upload may hold %d MiB in all (references, predictions and images together). Nothing was scored or kept.", page.MaxMiB))
			return
		}
		refuse(http.StatusBadRequest, "The form could not be read", err.Error())
		return
	}
	if !s.csrfOK(r, f.fields["csrf"]) {
		s.csrfFail(w, r)
		return
	}
	page.Name = f.fields["name"]
	if v := f.fields["profile"]; v != "" {
		page.Profile = v
	}
	profile, err := crystal.ParseProfile(page.Profile)
	if err != nil {
		refuse(http.StatusUnprocessableEntity, "Unknown profile", err.Error()+". Nothing was scored or kept.")
		return
	}
	refs, ok := f.files["refs"]
	if !ok || len(refs.data) == 0 {
		refuse(http.StatusUnprocessableEntity, "No references file",
			"Choose the references: JSON keyed by item id, a JSON array or JSON Lines of {id, question, options, answer, reference_steps, image}.")
		return
	}
	items, err := report.ReadItems(bytes.NewReader(refs.data), refs.name)
	if err != nil {
		refuse(http.StatusUnprocessableEntity, "The references could not be read; nothing was kept", err.Error())
		return
	}
	var files []report.File
	var names []string
	for _, pf := range f.all["preds"] {
		files = append(files, report.File{Name: pf.name, Data: pf.data})
		names = append(names, pf.name)
	}
	runs, err := report.ReadRuns(items, files)
	switch {
	case errors.Is(err, report.ErrNoPredictions):
		refuse(http.StatusUnprocessableEntity, "No predictions",
			"Choose one or more predictions files (JSON Lines of {id, model, reasoning_steps, answer} or {id, model, reply}) with at least one line.")
		return
	case errors.Is(err, report.ErrNoKnownID):
		refuse(http.StatusUnprocessableEntity, "No prediction names an item of the references", err.Error()+". Nothing was kept.")
		return
	case err != nil:
		refuse(http.StatusUnprocessableEntity, "The predictions could not be read; nothing was kept", err.Error())
		return
	}
	images := map[string][]byte{}
	for _, im := range f.all["images"] {
		if _, ok := report.ImageType(im.data); !ok {
			refuse(http.StatusUnprocessableEntity, "An image file is not an image; nothing was kept",
				fmt.Sprintf("%s: the screen shows PNG, JPEG, GIF and WebP images (this file reads as %s).", im.name, http.DetectContentType(im.data)))
			return
		}
		images[im.name] = im.data
	}
	s.jobs.Lock()
	run, err := scoreCrystal(r.Context(), items, runs, profile)
	s.jobs.Unlock()
	if err != nil {
		refuse(http.StatusUnprocessableEntity, "The predictions could not be scored; nothing was kept", err.Error())
		return
	}
	run.Name = page.Name
	if run.Name == "" {
		run.Name = refs.name
	}
	run.Source = "upload: " + refs.name + " + " + strings.Join(names, ", ")
	if len(images) > 0 {
		run.Source += fmt.Sprintf(" + %d %s", len(images), plural(len(images), "image", "images"))
	}
	byBase := func(ref string) ([]byte, error) {
		if b, ok := images[path.Base(strings.ReplaceAll(ref, `\`, "/"))]; ok {
			return b, nil
		}
		return nil, fs.ErrNotExist
	}
	if id, ok := s.keepCrystalUpload(w, r, run, byBase); !ok {
		return
	} else if id != "" {
		http.Redirect(w, r, "/crystal/"+id, http.StatusSeeOther)
		return
	}
	run.images = byBase
	s.crystal.add(run)
	http.Redirect(w, r, run.url(), http.StatusSeeOther)
}

// keepCrystalUpload saves an uploaded run in the store when the screen has
// one that keeps CRYSTAL runs page by page (store.CrystalPaged), with the
// uploaded images each item refers to (by base name, as in memory), and
// returns its id ("db-N"). "" with ok true: no such store (or a read-only
// one), keep the run in memory. ok false: the error page was written.
func (s *Server) keepCrystalUpload(w http.ResponseWriter, r *http.Request, run *crystalRun, byBase func(string) ([]byte, error)) (string, bool) {
	if s.db == nil {
		return "", true
	}
	paged, err := s.db.CrystalPaged(r.Context())
	if err != nil || !paged {
		return "", true
	}
	images := map[string][]byte{}
	for _, it := range run.items {
		ref := strings.TrimSpace(it.Image)
		if ref == "" || strings.HasPrefix(strings.ToLower(ref), "data:") || strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://") {
			continue
		}
		if b, err := byBase(ref); err == nil {
			images[ref] = b
		}
	}
	info, err := s.db.SaveCrystalRun(r.Context(), store.CrystalRunMeta{Name: run.Name, Source: run.Source, Images: images}, run.items, run.runs, run.table)
	if errors.Is(err, store.ErrReadOnly) {
		return "", true
	}
	if err != nil {
		s.crystalFail(w, r, http.StatusInternalServerError, "The run could not be saved in the store; nothing was kept", err.Error())
		return "", false
	}
	return storedCrystalPrefix + strconv.FormatInt(info.ID, 10), true
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
