// Package fileerr formats the position-carrying errors of the arc packages
// ("file:line:col: pkg: msg") in one place, so frame and session errors read
// alike. It owns that format only.
package fileerr

import "fmt"

// Format returns "file:line:col: pkg: msg", leaving out the file when "",
// the line when 0 and the column when 0 (or when the line is unknown).
func Format(file string, line, col int, pkg, msg string) string {
	var b []byte
	if file != "" {
		b = append(b, file...)
		b = append(b, ':')
	}
	if line > 0 {
		b = fmt.Appendf(b, "%d:", line)
		if col > 0 {
			b = fmt.Appendf(b, "%d:", col)
		}
	}
	if len(b) > 0 {
		b = append(b, ' ')
	}
	b = append(b, pkg...)
	b = append(b, ": "...)
	b = append(b, msg...)
	return string(b)
}
