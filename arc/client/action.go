package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"evident/arc/session"
)

// ParseAction parses one action as the command line takes it (spec arc.md
// "Plan executor"): a name, RESET or ACTION1..ACTION7 in any case, or the
// seed's action dict {"name": "ACTION6", "x": 15, "y": 47}. ACTION6 needs x
// and y in 0..63, in the dict; every other action takes none.
func ParseAction(s string) (session.Action, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") {
		var d struct {
			Name *string `json:"name"`
			X    *int    `json:"x"`
			Y    *int    `json:"y"`
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&d); err != nil {
			return session.Action{}, fmt.Errorf("action %s: %v (want {\"name\": \"ACTION6\", \"x\": 15, \"y\": 47})", s, err)
		}
		if d.Name == nil {
			return session.Action{}, fmt.Errorf("action %s: missing \"name\"", s)
		}
		a, err := parseName(*d.Name)
		if err != nil {
			return a, err
		}
		if a.Name != "ACTION6" {
			if d.X != nil || d.Y != nil {
				return session.Action{}, fmt.Errorf("action %s: only ACTION6 takes x and y", s)
			}
			return a, nil
		}
		if d.X == nil || d.Y == nil {
			return session.Action{}, fmt.Errorf("action %s: ACTION6 needs \"x\" and \"y\"", s)
		}
		return Click(*d.X, *d.Y)
	}
	a, err := parseName(s)
	if err == nil && a.Name == "ACTION6" {
		return session.Action{}, fmt.Errorf(`ACTION6 needs x and y: write '{"name":"ACTION6","x":15,"y":47}'`)
	}
	return a, err
}

// Click returns ACTION6 at (x, y), which must be 0..63.
func Click(x, y int) (session.Action, error) {
	if x < 0 || y < 0 || x > session.ClickMax || y > session.ClickMax {
		return session.Action{}, fmt.Errorf("ACTION6 x=%d y=%d: x and y must be 0..%d", x, y, session.ClickMax)
	}
	return session.Action{Name: "ACTION6", X: x, Y: y}, nil
}

func parseName(s string) (session.Action, error) {
	n := strings.ToUpper(strings.TrimSpace(s))
	if n == "RESET" {
		return session.Action{Name: n}, nil
	}
	if k, err := strconv.Atoi(strings.TrimPrefix(n, "ACTION")); err == nil && n == "ACTION"+strconv.Itoa(k) && k >= 1 && k <= 7 {
		return session.Action{Name: n}, nil
	}
	return session.Action{}, fmt.Errorf("unknown action %q: want RESET, ACTION1..ACTION7 or {\"name\":\"ACTION6\",\"x\":X,\"y\":Y}", s)
}
